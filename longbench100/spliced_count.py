"""Exact token counts of texts spliced from spans of long known texts and short literal inserts.

A prompt is mostly long texts the generator already knows (documents, a haystack) with short text
around them (a template's opening and closing, passage headings, needles), and a fit counts many
such prompts that differ only in where the texts are cut and what sits between them. Counting each
prompt whole costs a pass over all of it every time. For the encodings of :mod:`.segment_count`, a
:data:`~.segment_count.CUT` place is always a boundary of the pre-tokenizer, so a known text is cut
there once, each piece counted once, and running totals give the tokens of any run of whole pieces by
one subtraction (:class:`TextIndex`). A spliced text is then counted as the running totals for the
part of each span that lies between two cut places *strictly inside* the span (there the characters
around the cut are the known text's own, so it is a cut place of the spliced text too), plus a whole
count of each short window where a span meets an insert (the span's first and last partial pieces
with the inserts between them). The sum is exact, by the same argument as :mod:`.segment_count`.

Tokenizers without that proof join the parts and count the text whole: the same numbers, at the old cost.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Union

from .segment_count import SegmentCounter, cut_places, split_at


class TextIndex:
    """One known text cut at its :data:`~.segment_count.CUT` places, with the running token totals of its pieces."""

    def __init__(self, text: str, segments: SegmentCounter | None, piece_counts: Sequence[int] | None = None) -> None:
        """Count the pieces of ``text`` through ``segments`` (cached), unless ``piece_counts`` gives them
        (counted before, in the order of :meth:`SegmentCounter.pieces`). Without ``segments`` (a tokenizer
        counted whole) the index only holds the text: no cut is ever used."""
        self.text = text
        self.cuts = cut_places(text) if segments is not None else []
        if segments is None:
            piece_counts = []
        elif piece_counts is None or len(piece_counts) != len(self.cuts) + 1:
            piece_counts = list(map(segments.piece, split_at(text, self.cuts)))
        self.totals = list(itertools.accumulate(piece_counts, initial=0))

    def inner(self, start: int, end: int) -> tuple[int, int, int] | None:
        """The first and last cut strictly inside ``text[start:end]`` (its mark and the character after it
        included) and the tokens between them, or ``None`` when there is no such cut."""
        first = bisect.bisect_left(self.cuts, start + 1)
        last = bisect.bisect_right(self.cuts, end - 2) - 1
        if first > last:
            return None
        return self.cuts[first], self.cuts[last], self.totals[last + 1] - self.totals[first + 1]


Span = tuple[TextIndex, int, int]
"""``(index, start, end)``: the characters ``index.text[start:end]``."""

Part = Union[str, Span]
"""A part of a spliced text: a literal string or a span of a known text."""


def materialize(parts: Sequence[Part]) -> str:
    """The text that ``parts`` spell."""
    return "".join(part if isinstance(part, str) else part[0].text[part[1]:part[2]] for part in parts)


def part_length(part: Part) -> int:
    """The number of characters of one part."""
    return len(part) if isinstance(part, str) else part[2] - part[1]


def count_parts(parts: Sequence[Part], segments: SegmentCounter) -> int:
    """The exact token count of the text ``parts`` spell (see the module docstring)."""
    total = 0
    window: list[str] = []
    for part in parts:
        if isinstance(part, str):
            window.append(part)
            continue
        index, start, end = part
        inner = index.inner(start, end)
        if inner is None:
            window.append(index.text[start:end])
            continue
        first, last, tokens = inner
        window.append(index.text[start:first])
        total += segments.count("".join(window)) + tokens
        window = [index.text[last:end]]
    return total + segments.count("".join(window))


def locate(text: str, known: Sequence[tuple[TextIndex, int]]) -> list[Part]:
    """``text`` as parts: each ``(index, length)`` of ``known`` whose opening ``index.text[:length]`` is
    found in ``text`` (in order, after the previous one) becomes a span; the rest stays literal."""
    parts: list[Part] = []
    cursor = 0
    for index, length in known:
        if length <= 0:
            continue
        position = text.find(index.text[:length], cursor)
        if position < 0:
            continue
        parts.append(text[cursor:position])
        parts.append((index, 0, length))
        cursor = position + length
    parts.append(text[cursor:])
    return parts
