"""Exact token counts of long prompts without tokenizing them whole: sum cached counts of their pieces.

A prompt is cut before every single space that follows a sentence end (``.``, ``!``, ``?``) and
precedes a non-blank character (``word. Next``: cut before the space). For tiktoken's ``cl100k_base`` and
``o200k_base`` such a place is always a boundary of the encoding's pre-tokenizer, so the token count
of the whole text is the sum of the counts of the pieces, exactly:

- every pre-token that holds a space either starts with whitespace, or starts with its one optional
  leading character (``[^\\r\\n\\p{L}\\p{N}]?`` before letters, `` ?`` before punctuation), and no pre-token
  continues past a space into the next character except a whitespace run; so the pre-token before the
  cut ends at the punctuation mark, and a new one starts at the space;
- the regex reads nothing before its position (no look-behind), and its one look-ahead
  (``\\s+(?!\\S)``) concerns whitespace runs, which a single space followed by a non-blank is not;
- BPE merges never cross a pre-token boundary.

So a piece's count does not depend on what comes before or after it, and pieces recur: a haystack
search re-counts mostly the same sentences, rows share their padding passages. Counts are cached per
piece text. Other tokenizers (Hugging Face ones, chat templates) are counted whole; ``generate
--verify-counts`` recounts every prompt whole and ``tests/test_segment_count.py`` compares both ways on
thousands of random joins of real text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

SEGMENTED_ENCODINGS = frozenset({"cl100k_base", "o200k_base"})
"""tiktoken encodings whose pre-tokenizer is proven to cut at :data:`CUT`."""

CUT = re.compile(r"[.!?] (?=\S)")
"""A sentence-end mark, one space, then a non-blank character: the cut is just before the space."""

CACHE_LIMIT = 1_000_000  # pieces kept; the cache starts afresh when full
SHORT = 256  # texts at most this long are counted whole (cutting them saves nothing)


def cut_places(text: str) -> list[int]:
    """Where :data:`CUT` cuts ``text``: the offset of each cut's space, in order."""
    return [match.start() + 1 for match in CUT.finditer(text)]


def split_at(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at the offsets ``cuts`` (in order): the pieces between them."""
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in zip(bounds, bounds[1:])]


class SegmentCounter:
    """Counts tokens as the sum of cached counts of the pieces between :data:`CUT` places."""

    def __init__(self, count_whole: Callable[[str], int]) -> None:
        self._count_whole = count_whole
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        """The exact token count of ``text``."""
        if len(text) <= SHORT:
            return self._count_whole(text)
        return sum(map(self.piece, self.pieces(text)))

    def pieces(self, text: str) -> list[str]:
        """``text`` cut at its :data:`CUT` places: the pieces whose counts :meth:`count` adds up."""
        return split_at(text, cut_places(text))

    def learn(self, pieces: Iterable[str], counts: Iterable[int]) -> None:
        """Remember the token counts of ``pieces`` (counted elsewhere, e.g. in a batch or a previous run)."""
        self._cache.update(zip(pieces, counts))

    def piece(self, text: str) -> int:
        """The token count of one piece (a text with no :data:`CUT` place inside), cached by its text."""
        known = self._cache.get(text)
        if known is None:
            if len(self._cache) > CACHE_LIMIT:
                self._cache.clear()
            known = self._cache[text] = self._count_whole(text)
        return known
