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

from longbench100.text.segment_count import (
    CUT,
    SegmentCounter,
    cut_places,
    cut_places_from_last,
    split_at,
)

_LAST_CUT_WINDOW = 512  # characters searched at a time for a text's last cut, from its end


class TextIndex:
    """One known text cut at its :data:`~.segment_count.CUT` places, with the running token totals of its pieces.

    Where the pieces' counts are given and the cut places are not, the cut places are found only when a span
    inside the text asks for them: a text placed whole (a padding document) needs only its first and last
    cut (:meth:`inner`), found from its two ends, not a search of all of it.
    """

    def __init__(
        self,
        text: str,
        segments: SegmentCounter | None,
        piece_counts: Sequence[int] | None = None,
        cuts: list[int] | None = None,
    ) -> None:
        """Count the pieces of ``text`` through ``segments`` (cached), unless ``piece_counts`` gives them
        (counted before, in the order of :meth:`SegmentCounter.pieces`); ``cuts``, when given, are the text's
        :func:`~.segment_count.cut_places` (found before). Without ``segments`` (a tokenizer counted whole)
        the index only holds the text: no cut is ever used."""
        self.text = text
        self._segments = segments
        self._cuts: list[int] | None = cuts
        # inner(0, len(text)) from the text's two ends, while the cuts are not found:
        self._whole: tuple[int, int, int] | None = None
        if segments is None:
            self._cuts, piece_counts = [], []
        elif piece_counts is None or (cuts is not None and len(piece_counts) != len(cuts) + 1):
            self._cuts = cut_places(text) if cuts is None else cuts
            piece_counts = list(map(segments.piece, split_at(text, self._cuts)))
        self.totals = list(itertools.accumulate(piece_counts, initial=0))

    @property
    def cuts(self) -> list[int]:
        """The text's cut places, found on first use; piece counts given for other pieces than
        these (not this text's) are counted again."""
        if self._cuts is None:
            self._cuts = cut_places(self.text)
            if self._segments is not None and len(self.totals) != len(self._cuts) + 2:
                counts = map(self._segments.piece, split_at(self.text, self._cuts))
                self.totals = list(itertools.accumulate(counts, initial=0))
        return self._cuts

    @property
    def first_cut(self) -> int:
        """The text's first cut place (the index has one), found without finding the others."""
        if self._cuts is None:
            if self._whole is not None:
                return self._whole[0]
            found = CUT.search(self.text)
            if found is not None:
                return found.start() + 1
        return self.cuts[0]

    def inner(self, start: int, end: int) -> tuple[int, int, int] | None:
        """The first and last cut strictly inside ``text[start:end]`` (its mark and the character after it
        included) and the tokens between them, or ``None`` when there is no such cut."""
        if self._cuts is None and start == 0 and end == len(self.text):
            whole = self._whole_inner()
            if whole is not None:
                return whole
        first = bisect.bisect_left(self.cuts, start + 1)
        last = bisect.bisect_right(self.cuts, end - 2) - 1
        if first > last:
            return None
        return self.cuts[first], self.cuts[last], self.totals[last + 1] - self.totals[first + 1]

    def _whole_inner(self) -> tuple[int, int, int] | None:
        """:meth:`inner` of the whole text from its first and last cut and the given piece counts
        (every cut lies strictly inside the text: a mark's space with a character after it), found
        once; ``None`` where the text has no cut."""
        if self._whole is None:
            pieces = len(self.totals) - 1
            opening = CUT.search(self.text)
            if pieces < 2 or opening is None:
                return None
            last = next(cut_places_from_last(self.text, _LAST_CUT_WINDOW))
            self._whole = opening.start() + 1, last, self.totals[pieces - 1] - self.totals[1]
        return self._whole

    def last_cut_within(self, last_cut: int) -> tuple[int, int]:
        """The last cut at or before ``last_cut`` and the tokens before it (``(0, 0)`` when there is none)."""
        cuts_within = bisect.bisect_right(self.cuts, last_cut)
        return (self.cuts[cuts_within - 1] if cuts_within else 0), self.totals[cuts_within]

    def piece_holding(self, token: int, last_cut: int) -> tuple[int, int, int] | None:
        """The piece that holds the text's token number ``token`` (from 1), as ``(start, end, tokens before start)``,
        when the tokens up to some cut at or before ``last_cut`` reach it; else ``None``."""
        cuts_within = bisect.bisect_right(self.cuts, last_cut)
        if (
            token < 1 or self.totals[cuts_within] < token
        ):  # totals[k]: the tokens before cut number k (from 1)
            return None
        piece = bisect.bisect_left(self.totals, token) - 1
        return (self.cuts[piece - 1] if piece else 0), self.cuts[piece], self.totals[piece]


class JoinedIndex:
    """Known texts joined by a separator, indexed from their own :class:`TextIndex` es without cutting the whole.

    A text joined from known blocks (a haystack of whole documents) is new every time, but its blocks
    recur. A cut place strictly inside a block is a cut place of the joined text too (the characters
    around it are the block's own), so the joined text keeps every block's inner cuts; between the last
    inner cut of one block and the first of the next (the separator, and any block with no inner cut)
    lies one window, counted whole. A run of tokens between two kept cuts is then the blocks' running
    totals plus the windows between, so building the index costs one count per window, not a pass over
    the text. :meth:`inner` answers as :meth:`TextIndex.inner` does over the kept cuts.
    """

    def __init__(
        self, blocks: Sequence[TextIndex], separator: str, segments: SegmentCounter
    ) -> None:
        self.text = separator.join(block.text for block in blocks)
        self._anchors: list[
            tuple[TextIndex, int, int, int]
        ] = []  # (block, its offset, index of its first and last inner cut)
        firsts: list[int] = []  # global offsets of each anchor's first inner cut
        lasts: list[int] = []
        self._before: list[
            int
        ] = []  # tokens from the first anchor's first inner cut to this anchor's
        offset = 0
        for block in blocks:
            if block.cuts:
                first = bisect.bisect_left(block.cuts, 1)
                last = bisect.bisect_right(block.cuts, len(block.text) - 2) - 1
                if first <= last:
                    if lasts:
                        previous_block, _, previous_first, previous_last = self._anchors[-1]
                        inner = (
                            previous_block.totals[previous_last + 1]
                            - previous_block.totals[previous_first + 1]
                        )
                        window = _window_tokens(
                            segments, self.text, lasts[-1], offset, block, first
                        )
                        self._before.append(self._before[-1] + inner + window)
                    else:
                        self._before.append(0)
                    self._anchors.append((block, offset, first, last))
                    firsts.append(offset + block.cuts[first])
                    lasts.append(offset + block.cuts[last])
            offset += len(block.text) + len(separator)
        self._firsts, self._lasts = firsts, lasts

    def _tokens_to(self, anchor: int, cut: int) -> int:
        """Tokens from the first anchor's first inner cut to cut number ``cut`` of anchor ``anchor``'s block."""
        block, _, first, _ = self._anchors[anchor]
        return self._before[anchor] + block.totals[cut + 1] - block.totals[first + 1]

    def inner(self, start: int, end: int) -> tuple[int, int, int] | None:
        """The first and last kept cut strictly inside ``text[start:end]`` and the tokens between them, or ``None``."""
        low = bisect.bisect_left(
            self._lasts, start + 1
        )  # the first anchor with a kept cut at or after start + 1
        high = (
            bisect.bisect_right(self._firsts, end - 2) - 1
        )  # the last anchor with a kept cut at or before end - 2
        if low > high:
            return None
        block, offset, first, last = self._anchors[low]
        opening = max(first, bisect.bisect_left(block.cuts, start + 1 - offset))
        closing_block, closing_offset, closing_first, closing_last = self._anchors[high]
        closing = min(
            closing_last, bisect.bisect_right(closing_block.cuts, end - 2 - closing_offset) - 1
        )
        at, to = offset + block.cuts[opening], closing_offset + closing_block.cuts[closing]
        if at > to:
            return None
        return at, to, self._tokens_to(high, closing) - self._tokens_to(low, opening)


def _window_tokens(
    segments: SegmentCounter, text: str, start: int, offset: int, block: TextIndex, first: int
) -> int:
    """Tokens of ``text[start:offset + block.cuts[first]]``, the window from one anchor's last inner cut to the
    first inner cut of ``block`` (which starts at ``offset``).

    Where a newline ends the text before ``block`` and the block opens with a character that is neither
    blank nor ``/``, the block's start is a pre-token boundary (:func:`opens_after_newline`), so the window is
    the text before it, counted whole and cached by its text (a document's tail and the separator recur
    whenever that document is followed by another), plus the block's first piece, which its own running
    totals already hold: a haystack of recurring documents in a new order costs no tokenizing.
    """
    if opens_after_newline(text, offset):
        return segments.piece(text[start:offset]) + block.totals[first + 1]
    return segments.count(text[start : offset + block.cuts[first]])


def opens_after_newline(text: str, offset: int) -> bool:
    """Whether ``offset`` is a pre-token boundary of ``text`` because a newline precedes it and a character that
    is neither blank nor ``/`` follows.

    In the split patterns of :mod:`.segment_count` (cl100k, o200k, and the Hugging Face ones shaped like
    cl100k) no pre-token holds a newline followed by such a character: the optional leading character of a
    letter run excludes ``\\r`` and ``\\n``; a punctuation run takes the newlines that follow it (and, in o200k,
    slashes) and stops; a blank run that holds a newline is taken up to its last newline by the newline
    alternative (``\\s*[\\r\\n]+``, or ``\\s*[\\r\\n]`` in tiktoken's own patterns, whose ``\\s*`` gives back
    just the last newline), which comes before the look-ahead alternatives. The regex reads nothing behind
    its position, so the text after the boundary splits as it does alone, and the text before it ends its
    last pre-token at the boundary whatever follows. NFC normalisation composes nothing with a newline; an
    added token that could match across the boundary keeps a tokenizer.json from counting by segments.
    An adversarial review found no counterexample in 30 million single-character splits per encoding.
    """
    return (
        0 < offset < len(text)
        and text[offset - 1] == "\n"
        and not text[offset].isspace()
        and text[offset] != "/"
    )


Span = tuple[Union[TextIndex, JoinedIndex], int, int]
"""``(index, start, end)``: the characters ``index.text[start:end]``."""

Part = Union[str, Span]
"""A part of a spliced text: a literal string or a span of a known text."""


def materialize(parts: Sequence[Part]) -> str:
    """The text that ``parts`` spell."""
    return "".join(
        part if isinstance(part, str) else part[0].text[part[1] : part[2]] for part in parts
    )


def part_length(part: Part) -> int:
    """The number of characters of one part."""
    return len(part) if isinstance(part, str) else part[2] - part[1]


def count_parts(parts: Sequence[Part], segments: SegmentCounter) -> int:
    """The exact token count of the text ``parts`` spell (see the module docstring).

    A window where spans and inserts meet joins a passage's last piece, a heading between passages and the
    next passage's first piece, new together in each prompt; counted by :meth:`SegmentCounter.count_lines`, cut
    also at the heading's line breaks, its parts recur (a passage's tail with the blank line after it, the
    heading), and a passage's first piece after such a break is read off its running totals. The
    window's total is kept whole (:meth:`SegmentCounter.count_window`): the same rows built again
    (a warm run) look each window up once instead of cutting it.
    """
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
        before = "".join(window)
        if (
            start == 0
            and isinstance(index, TextIndex)
            and first == index.first_cut
            and _opens_a_pre_token(before, index.text)
        ):
            total += (
                segments.count_window(before) + index.totals[1] + tokens
            )  # the text's first piece, from its totals
        else:
            total += segments.count_window(before + index.text[start:first]) + tokens
        window = [index.text[last:end]]
    return total + segments.count_window("".join(window))


def _opens_a_pre_token(before: str, text: str) -> bool:
    """Whether ``text`` starts a pre-token where it follows ``before``: at the very start, or where
    :func:`opens_after_newline` holds."""
    return not before or opens_after_newline(before[-1] + text[:1], 1)


def locate(text: str, known: Sequence[tuple[TextIndex, int]]) -> list[Part]:
    """``text`` as parts: each ``(index, length)`` of ``known`` whose opening ``index.text[:length]`` is
    found in ``text`` (in order, after the previous one) becomes a span, or several spans where text was
    inserted into it (:func:`_find_runs`: counting_stars' sentences inside a passage); the rest stays literal."""
    parts: list[Part] = []
    cursor = 0
    for index, length in known:
        if length <= 0:
            continue
        position = _find(text, index.text[:length], cursor)
        runs = (
            [(position, 0, length)]
            if position >= 0
            else _find_runs(text, index.text, length, cursor)
        )
        for position, start, end in runs:
            parts.append(text[cursor:position])
            parts.append((index, start, end))
            cursor = position + end - start
    parts.append(text[cursor:])
    return parts


MAX_RUNS = 16
"""Most runs a known opening is found in, with inserted text between them (:func:`_find_runs`)."""
_RUN_OPENING = (
    32  # characters of a run looked for first (text is inserted a sentence or more apart)
)


def _find_runs(text: str, document: str, length: int, start: int) -> list[tuple[int, int, int]]:
    """``document[:length]`` found in ``text`` from ``start`` on as consecutive runs with other text between them,
    each run as ``(position in text, start, end in document)``; ``[]`` unless all of it is found in at most
    :data:`MAX_RUNS` runs. Each run is where its opening next occurs after the previous run, as long as the
    two texts agree from there; whatever is found, the parts spell the text, so counts stay exact."""
    runs: list[tuple[int, int, int]] = []
    done = 0
    position = text.find(document[: min(_RUN_OPENING, length)], start)
    while position >= 0 and len(runs) < MAX_RUNS:
        matched = _agreeing_length(text, position, document, done, length)
        runs.append((position, done, done + matched))
        done += matched
        if done == length:
            return runs
        position = text.find(document[done : min(done + _RUN_OPENING, length)], position + matched)
    return []


_COMPARED_BY = 4096  # characters compared at a time by _agreeing_length


def _agreeing_length(text: str, at: int, document: str, start: int, end: int) -> int:
    """How many characters ``document[start:end]`` and ``text[at:]`` have in common from their first on: blocks
    compared whole, then the first differing block halved until the first difference is found."""
    limit = min(end - start, len(text) - at)
    matched = 0
    while matched < limit:
        size = min(_COMPARED_BY, limit - matched)
        if text.startswith(document[start + matched : start + matched + size], at + matched):
            matched += size
            continue
        low, high = 0, size  # the first low characters agree, the first high do not
        while high - low > 1:
            middle = (low + high) // 2
            if text.startswith(document[start + matched : start + matched + middle], at + matched):
                low = middle
            else:
                high = middle
        return matched + low
    return matched


_FIND_BY = 64  # characters of a long text looked for first


def _find(text: str, needle: str, start: int) -> int:
    """``text.find(needle, start)``, looking for the needle's opening and comparing the rest where it occurs: a
    document a few characters after ``start`` is found without a search for all of it (which costs about its length
    wherever it lies)."""
    opening = needle[:_FIND_BY]
    position = text.find(opening, start)
    while position >= 0 and not _holds_at(text, needle, position):
        position = text.find(opening, position + 1)
    return position


def _holds_at(text: str, needle: str, position: int) -> bool:
    """``text.startswith(needle, position)``, faster for an ASCII needle in a text that is not
    ASCII (a prompt that holds one wider character): ``startswith`` compares strings of different
    widths one character at a time, while the slice of ``text`` is stored as narrowly as its own
    characters allow and then compared with the needle at once."""
    if needle.isascii() and not text.isascii():
        return text[position : position + len(needle)] == needle
    return text.startswith(needle, position)
