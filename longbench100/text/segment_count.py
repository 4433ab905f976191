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
piece text.

The same argument holds for a Hugging Face ``tokenizer.json`` built the same way
(:func:`segmentable_tokenizer_json`): Qwen's (its split pattern is cl100k's with single digits) and
Llama 3's (cl100k's own). Their pieces are split by the same kind of pattern, then mapped byte by
byte and merged by BPE within each pre-token; their NFC normaliser (Qwen) changes nothing across a cut,
since normalisation composes a character only with marks that follow it and the space that opens a
piece composes with nothing; and no added token spans a cut. Other tokenizers (other Hugging Face
ones, chat templates) are counted whole; ``generate --verify-counts`` recounts every prompt whole and
``tests/test_segment_count.py`` compares both ways on thousands of random joins of real text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

SEGMENTED_ENCODINGS = frozenset({"cl100k_base", "o200k_base"})
"""tiktoken encodings whose pre-tokenizer is proven to cut at :data:`CUT`."""

CL100K_SHAPED_SPLITS = frozenset(
    {
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",  # Qwen2, Qwen3
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",  # cl100k, Llama 3
    }
)
"""Hugging Face split patterns of the same shape as cl100k's: a pre-token never runs past a single space into a non-blank."""

CUT = re.compile(r"[.!?] (?=\S)")
"""A sentence-end mark, one space, then a non-blank character: the cut is just before the space."""

NEWLINE_BOUNDARY = re.compile(r"\n(?=[^\s/])")
"""A newline before a character that is neither blank nor ``/``: for the same tokenizers, a boundary of the
pre-tokenizer too (the argument is in :func:`longbench100.text.spliced_count.opens_after_newline`); the cut is just
after the newline."""

ANY_BOUNDARY = re.compile(r"[.!?\n](?:(?<=\n)(?=[^\s/])|(?<!\n)(?= \S))")
"""A :data:`CUT` or :data:`NEWLINE_BOUNDARY` place, found in one pass: each match ends where its cut is (a
:data:`CUT` match is its mark alone, so the cut falls just before the space, as there). The same matches as
``[.!?](?= \\S)|\\n(?=[^\\s/])``, found faster: one character class first, then the look-ahead of the
character found (the alternation tried both branches at every character)."""

CACHE_LIMIT = 1_000_000  # pieces kept; the cache starts afresh when full
SHORT = 256  # texts at most this long are counted whole (cutting them saves nothing)


def segmentable_tokenizer_json(config: dict) -> bool:
    """Whether a Hugging Face ``tokenizer.json`` (parsed) provably splits at :data:`CUT`: no normaliser or NFC; a
    ``Split`` by a pattern of :data:`CL100K_SHAPED_SPLITS` (isolated, not inverted) followed by byte-level
    mapping without its own regex or prefix space; a BPE model without dropout; no added token that could
    match across a counting boundary (:func:`_added_token_spans_a_boundary`)."""
    normalizer = config.get("normalizer")
    pre = config.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers") if pre.get("type") == "Sequence" else None
    model = config.get("model") or {}
    if normalizer not in (None, {"type": "NFC"}) or not isinstance(steps, list) or len(steps) != 2:
        return False
    split, byte_level = steps
    return (
        split.get("type") == "Split"
        and (split.get("pattern") or {}).get("Regex") in CL100K_SHAPED_SPLITS
        and split.get("behavior") == "Isolated"
        and not split.get("invert")
        and byte_level.get("type") == "ByteLevel"
        and not byte_level.get("use_regex", True)
        and not byte_level.get("add_prefix_space", True)
        and model.get("type") == "BPE"
        and not model.get("dropout")
        and not any(
            _added_token_spans_a_boundary(token) for token in config.get("added_tokens") or []
        )
    )


_NEWLINE_THEN_NONBLANK = re.compile(r"\n\S")


def _added_token_spans_a_boundary(token: dict) -> bool:
    """Whether an added token could be matched across a place this module or :mod:`.spliced_count` counts on
    either side separately: its text holds a :data:`CUT` or a newline before a non-blank character, or it
    takes the blanks around it (``lstrip`` / ``rstrip``) or matches only as a whole word (``single_word``),
    which makes its matching depend on the text beyond it."""
    content = str(token.get("content", ""))
    return bool(CUT.search(content) or _NEWLINE_THEN_NONBLANK.search(content)) or any(
        token.get(flag) for flag in ("lstrip", "rstrip", "single_word")
    )


def cut_places(text: str, end: int | None = None) -> list[int]:
    """Where :data:`CUT` cuts ``text`` (or only ``text[:end]``, which holds every cut of ``text`` before
    ``end - 1``): the offset of each cut's space, in order."""
    if end is None:
        return [match.start() + 1 for match in CUT.finditer(text)]
    return [match.start() + 1 for match in CUT.finditer(text, 0, end)]


def cut_places_from_last(text: str, window: int = 4096) -> Iterator[int]:
    """:func:`cut_places` of ``text`` from the last back, the text searched ``window`` characters at a
    time from its end (a cut depends only on the mark, the space and the character after it)."""
    high = len(text)
    while high > 0:
        low = max(0, high - window)
        yield from reversed([match.start() + 1 for match in CUT.finditer(text, low, high + 2)])
        high = low


def split_at(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at the offsets ``cuts`` (in order): the pieces between them."""
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in zip(bounds, bounds[1:])]


class SegmentCounter:
    """Counts tokens as the sum of cached counts of the pieces between :data:`CUT` places (and, in a long text,
    :data:`NEWLINE_BOUNDARY` places)."""

    def __init__(self, count_whole: Callable[[str], int]) -> None:
        self._count_whole = count_whole
        self._cache: dict[str, int] = {}
        self.counted: dict[str, int] = {}
        """The pieces this counter tokenized itself (not learned) while :attr:`keeping`, by their text."""
        self.keeping = True

    def count(self, text: str) -> int:
        """The exact token count of ``text``."""
        if len(text) <= SHORT:  # counted whole (cutting it saves nothing), and kept as a piece
            return self.piece(text)
        return self.count_lines(text)

    def count_lines(self, text: str) -> int:
        """The exact token count of ``text``, cut at its :data:`NEWLINE_BOUNDARY` places as well as at its :data:`CUT`
        places, each part counted once and cached by its text, however short: lines recur where pieces of text
        that recur are joined in new ways (records of a row, passages and the headings between them)."""
        total = 0
        start = 0
        piece = self.piece
        for boundary in ANY_BOUNDARY.finditer(
            text
        ):  # the cuts of each line, lines and cuts in one pass
            end = boundary.end()
            total += piece(text[start:end])
            start = end
        return total + piece(text[start:])

    def count_window(self, text: str) -> int:
        """:meth:`count_lines` of ``text``, its total cached (and kept, like a piece's) under the whole
        text: a window where known texts meet in a prompt (a passage's tail, a heading, the next
        passage's first piece) recurs whole whenever the same rows are built again."""
        known = self._cache.get(text)
        if known is None:
            known = self._remember(text, self.count_lines(text))
        return known

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
            known = self._remember(text, self._count_whole(text))
        return known

    def _remember(self, text: str, count: int) -> int:
        """Cache ``count`` as ``text``'s (kept for the next run while :attr:`keeping`); return it."""
        if len(self._cache) > CACHE_LIMIT:
            self._cache.clear()
            self.counted.clear()
        self._cache[text] = count
        if self.keeping:
            self.counted[text] = count
        return count
