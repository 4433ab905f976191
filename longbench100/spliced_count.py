"""Exact token counts of texts spliced from spans of one long base text and short literal inserts.

A haystack search counts many prompts that are the same long text cut at different places, with a few
short inserts (needles, a template's opening and closing) at different places. Counting each prompt
whole costs a pass over its text every time. For the encodings of :mod:`.segment_count`, a
:data:`~.segment_count.CUT` place is always a boundary of the pre-tokenizer, so the base text is cut
there once and each piece counted once (cached), and running totals give the tokens of any run of
whole pieces by one subtraction. A spliced text is then counted as: the running totals for the part
of each span that lies between two cut places *strictly inside* the span (there the text around the
cut is the base text's own, so the cut is a cut place of the spliced text too), and a whole count of
each short window where a span meets an insert (the span's first and last partial piece with the
inserts between them). The sum is exact, by the same argument as :mod:`.segment_count`.

Tokenizers without that proof get :class:`WholeCounter`, which joins the parts and counts the text
whole: the same numbers, at the old cost.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from typing import Union

from .segment_count import CUT, SegmentCounter

Span = tuple[int, int]
"""``(start, end)``: the characters ``base[start:end]`` of the counter's base text."""

Part = Union[str, Span]
"""A part of a spliced text: a literal string or a span of the base text."""


def materialize(base: str, parts: Sequence[Part]) -> str:
    """The text that ``parts`` spell over ``base``."""
    return "".join(part if isinstance(part, str) else base[part[0]:part[1]] for part in parts)


def part_length(part: Part) -> int:
    """The number of characters of one part."""
    return len(part) if isinstance(part, str) else part[1] - part[0]


class SplicedCounter:
    """Counts spliced texts over one base text from cached piece counts and running totals."""

    def __init__(self, base: str, segments: SegmentCounter) -> None:
        """Cut ``base`` at its :data:`CUT` places and total its pieces' counts (cached in ``segments``)."""
        self.base = base
        self._count = segments.count
        self._cuts = [match.start() + 1 for match in CUT.finditer(base)]
        bounds = [0, *self._cuts, len(base)]
        pieces = (base[start:end] for start, end in zip(bounds, bounds[1:]))
        self._totals = list(itertools.accumulate(map(segments.piece, pieces), initial=0))

    def count(self, parts: Sequence[Part]) -> int:
        """The exact token count of the text ``parts`` spell."""
        base, cuts, totals = self.base, self._cuts, self._totals
        total = 0
        window: list[str] = []
        for part in parts:
            if isinstance(part, str):
                window.append(part)
                continue
            start, end = part
            first = bisect.bisect_left(cuts, start + 1)  # a cut needs its mark and next character in the span
            last = bisect.bisect_right(cuts, end - 2) - 1
            if first > last:
                window.append(base[start:end])
                continue
            window.append(base[start:cuts[first]])
            total += self._count("".join(window)) + totals[last + 1] - totals[first + 1]
            window = [base[cuts[last]:end]]
        return total + self._count("".join(window))


class WholeCounter:
    """The same interface for tokenizers without a cut proof: join the parts, count the text whole."""

    def __init__(self, base: str, count: Callable[[str], int]) -> None:
        """``count`` counts a whole text."""
        self.base = base
        self._count = count

    def count(self, parts: Sequence[Part]) -> int:
        """The token count of the text ``parts`` spell."""
        return self._count(materialize(self.base, parts))
