"""Fill the room of a prompt's gold material with other text from the same sources, at the same
budget.

The gold-removed control twin (``generate/controls.py``) takes a finished prompt, the spans that
hold the material its answer depends on, and a pool of padding documents; each span's text is
replaced by the opening of pool documents of (at most) the same number of tokens, the rest of the
prompt kept byte for byte. A recount (of the stretches around the fills only, where the tokenizer
allows it: :mod:`longbench100.text.edited_count`) then shortens the last fill until the prompt is
within its budget."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import NamedTuple, Union

from longbench100.fitting.packing import cut_prefix, longest_opening_at_an_end
from longbench100.sources.records import Document
from longbench100.text.edited_count import Edit, Known, apply_edits, count_edited
from longbench100.text.sentences import READS_PAST_LIMIT
from longbench100.text.tokenization import Tokenizer
from longbench100.text.units import Span

MAX_REPAIRS = 12
SEPARATOR = "\n\n"


PoolEntry = tuple[str, int | None, Document | None]
"""A pool text, its tokens (``None``: not counted yet) and the document it comes from (``None``: a
stretch of a task's own context)."""
Home = tuple[str, int, int]
"""Where a pool text lies: ``(kind, reference, offset)``, the text starting at character ``offset``
of a longer text that ``kind`` and ``reference`` name to whoever spells the segments."""
Segment = Union[str, tuple[str, int, int, int]]
"""A stretch of a text: a literal string, or ``(kind, reference, start, end)``, the characters
``start:end`` of the text ``kind`` and ``reference`` name (as in :data:`Home`)."""
Parts = list[tuple[int, int]]
"""A text as the pool entries it joins (by :data:`SEPARATOR`): each entry's index and the character
of its text it starts from."""


class Refilled(NamedTuple):
    """A refilled prompt, its token count, and each span's fill as segments of the pool texts'
    homes (``None`` for a fill whose homes are not known)."""

    prompt: str
    tokens: int
    fills: list[list[Segment] | None]


class PoolText:
    """Draws padding text from ``pool`` (``(text, tokens, document)`` triples, in a seeded random
    order), with ``shown`` (the prompt), never a text whose opening it already holds nor one drawn
    before for the same prompt; without ``shown`` (a task's own context around its gold) the pool is
    drawn again in a new order when it runs out. Documents whose id is ``excluded`` (the gold's own,
    of which the prompt may show a middle part only) are never drawn. What a span leaves of a drawn
    text opens the next span's source, so one long document can fill many spans; with ``whole``,
    each span gets the opening of one text of its own (a titled document keeps its title with its
    own body). An entry whose tokens are ``None`` takes its document's count, read only when it is
    first drawn (a lazily counted source), or without a document is counted by ``count`` then (the
    stretches of a long context, of which a few short spans draw only one or two). Given ``homes``
    (one :data:`Home` per pool entry), an opening of the last source can be told as segments of
    them (:meth:`opening_segments`)."""

    def __init__(
        self,
        pool: Sequence[PoolEntry],
        rng: random.Random,
        shown: str | None,
        excluded: frozenset[str] = frozenset(),
        whole: bool = False,
        count: Callable[[str], int] | None = None,
        homes: Sequence[Home] | None = None,
    ) -> None:
        self.rng = rng
        self.count = count
        self.counted: dict[int, int] = {}
        self.whole = whole
        self.excluded = excluded
        self.order: list[int] = []
        self.pool = pool
        self.shown = shown
        self.drawn: list[Document] = []
        self.new_texts: list[str] = []
        self.rest, self.rest_tokens = "", 0
        self.source, self.source_tokens = "", 0
        self.homes = homes
        self.rest_parts: Parts | None = []
        self.source_parts: Parts | None = []
        self._shuffle()

    def source_text(self, tokens: int) -> str:
        """The rest of the last source, then pool texts, joined until they hold at least ``tokens``
        tokens (or the pool runs out)."""
        texts, held = ([self.rest], self.rest_tokens) if self.rest else ([], 0)
        parts = (None if self.rest_parts is None else list(self.rest_parts)) if self.rest else []
        while held < tokens and not (self.whole and texts) and self._has_next():
            index = self.order.pop()
            text, _, document = self.pool[index]
            if self.shown is not None and text[:200] in self.shown:
                continue
            if document is not None and document.id in self.excluded:
                continue
            if document is not None:
                self.drawn.append(document)
            texts.append(text)
            if parts is not None:
                parts.append((index, 0))
            self.new_texts.append(text)
            held += self._tokens(index)
        self.source, self.source_tokens = SEPARATOR.join(texts), held
        self.source_parts = parts
        return self.source

    def take_new_texts(self) -> list[str]:
        """The pool texts drawn since the last call."""
        new, self.new_texts = self.new_texts, []
        return new

    def consume(self, used: str) -> None:
        """Keep what follows ``used``, the opening of the last source, for the next span."""
        rest = "" if self.whole else self.source[len(used) :].lstrip()
        self.rest_tokens = round(self.source_tokens * len(rest) / max(1, len(self.source)))
        self.rest = rest
        self.rest_parts = self._parts_from(len(self.source) - len(rest)) if rest else []

    def opening_segments(self, length: int) -> list[Segment] | None:
        """The last source's first ``length`` characters as segments of its pool texts' homes;
        ``None`` without homes."""
        if self.homes is None or self.source_parts is None:
            return None
        segments: list[Segment] = []
        left = length
        for number, (index, start) in enumerate(self.source_parts):
            if number and left > 0:
                segments.append(SEPARATOR[:left])
                left -= len(segments[-1])
            if left <= 0:
                break
            kind, reference, offset = self.homes[index]
            size = min(left, len(self.pool[index][0]) - start)
            segments.append((kind, reference, offset + start, offset + start + size))
            left -= size
        return segments

    def _parts_from(self, position: int) -> Parts | None:
        """The parts of the last source's characters from ``position`` on (``None`` when the
        parts are not known, or ``position`` falls inside a separator)."""
        if self.source_parts is None:
            return None
        at = 0
        for number, (index, start) in enumerate(self.source_parts):
            end = at + len(self.pool[index][0]) - start
            if position <= end:
                return [(index, start + position - at), *self.source_parts[number + 1 :]]
            at = end + len(SEPARATOR)
            if position < at:
                return None
        return None

    def _tokens(self, index: int) -> int:
        """The tokens of pool entry ``index``: as the pool gives them, else its document's (counted
        when first read), else counted once."""
        text, size, document = self.pool[index]
        if size is not None:
            return size
        if document is not None:
            return document.tokens
        if index not in self.counted:
            assert self.count is not None, "a pool entry without its tokens needs PoolText's count"
            self.counted[index] = self.count(text)
        return self.counted[index]

    def _shuffle(self) -> None:
        """Put every pool entry back, in a new random order."""
        self.order = list(range(len(self.pool)))
        self.rng.shuffle(self.order)

    def _has_next(self) -> bool:
        """Whether an entry is left to draw (drawing the pool again when it may be reused)."""
        if not self.order and self.shown is None:
            self._shuffle()
        return bool(self.order)


def opening_of(tokenizer: Tokenizer, text: str, tokens: int, text_tokens: int | None = None) -> str:
    """The opening of ``text`` with at most ``tokens`` tokens: cut at a sentence end where one is
    near, else after a whole token. Of a long text whose pieces the tokenizer has not counted
    before (a context's own stretches) only the part the cut can reach is read (:func:`reach_of`),
    so a short opening of it is cheap; a source document's counted pieces are used whole. Given
    ``text_tokens``, the count of all of ``text``, the same opening is worked out from the text's
    end where it can be (:func:`_cut_from_end`), so cutting a few tokens off a long text is cheap."""
    return counted_opening(tokenizer, text, tokens, text_tokens)[0]


def counted_opening(
    tokenizer: Tokenizer, text: str, tokens: int, text_tokens: int | None = None
) -> tuple[str, int | None]:
    """:func:`opening_of` and its token count where the cut counted it (``None`` where it did not:
    an opening after a whole token)."""
    if tokenizer.learned_piece_counts(text) is None and len(text) > reach_of(tokens):
        text, text_tokens = text[: reach_of(tokens)], None
    cut = (
        _cut_from_end(tokenizer, text, tokens, text_tokens)
        if text_tokens is not None and tokenizer.reads_openings_off and 0 < tokens
        else cut_prefix(tokenizer, text, tokens)
    )
    if cut is not None and cut[1] >= tokens - max(8, tokens // 20):
        return cut
    width, first = max(1, tokens) * 8, max(0, tokens)
    whole_tokens = tokenizer.opening_tokens(text, width, first)  # read off the cut's index
    if whole_tokens is None:
        whole_tokens = tokenizer.decode(tokenizer.encode(text[:width])[:first])
    opening = whole_tokens.rstrip("\ufffd")
    return (opening if text.startswith(opening) else opening[:-1]), None


def _cut_from_end(
    tokenizer: Tokenizer, text: str, tokens: int, text_tokens: int
) -> tuple[str, int] | None:
    """:func:`cut_prefix` of ``text``, whose count is ``text_tokens``, read from its end where the
    cut may look at all of it (``tokens`` tokens reach past its end at 8 characters each): the
    first ``tokens`` tokens from the counts of the pieces after them
    (:meth:`Tokenizer.opening_length_from_end`), sentence ends from the last back, and each
    opening counted from ``text_tokens`` and the stretch its cut touches
    (:func:`~longbench100.text.edited_count.count_edited`)."""
    if tokens * 8 < len(text):
        return cut_prefix(tokenizer, text, tokens)
    opening = tokenizer.opening_length_from_end(text, text_tokens, tokens)

    def count(prefix: str) -> int:
        counted = count_edited(tokenizer, text, text_tokens, [(len(prefix), len(text), "")])
        assert counted is not None, "a tokenizer that reads openings off counts by segments"
        return counted

    return longest_opening_at_an_end(text, len(text), opening, tokens, count)


def reach_of(tokens: int) -> int:
    """How many characters of a text :func:`opening_of` can depend on for an opening of ``tokens``
    tokens: :func:`cut_prefix` looks at most 8 characters a token far, the sentence ends it takes
    then depend on :data:`READS_PAST_LIMIT` more, and one more keeps a text longer than that from
    being taken for one that ends there."""
    return max(1, tokens) * 8 + READS_PAST_LIMIT + 1


def refill_spans(
    tokenizer: Tokenizer,
    count: Callable[[Sequence[Edit], Sequence[Known]], int],
    prompt: str,
    spans: Sequence[Span],
    pool_text: PoolText,
    budget: int,
) -> Refilled | None:
    """``prompt`` with the text of every span (offsets into ``prompt``, in order, not overlapping)
    replaced by pool text of at most as many tokens, and its token count by ``count`` (the count of
    ``prompt`` with the edits it is given made, told the counts of each edit's old and new text
    where they are known), each fill told as segments where ``pool_text`` knows its homes; ``None``
    when the pool holds no text or the prompt cannot be brought within ``budget``."""
    if not spans:
        return None
    sizes = [_count(tokenizer, prompt[start:end]) for start, end in spans]
    span_tokens = list(sizes)
    openings: list[tuple[str, int | None]] = []
    fills: list[list[Segment] | None] = []
    for size in sizes:
        source = pool_text.source_text(size)
        if not source:
            return None
        for text in pool_text.take_new_texts():
            tokenizer.recall_pieces(text)
        openings.append(counted_opening(tokenizer, source, size))
        fills.append(pool_text.opening_segments(len(openings[-1][0])))
        pool_text.consume(openings[-1][0])
    for _ in range(MAX_REPAIRS):
        edits = [
            (start, end, opening)
            for (start, end), (opening, _) in zip(spans, openings, strict=True)
        ]
        tokens = count(edits, [(old, new) for old, (_, new) in zip(span_tokens, openings)])
        if tokens <= budget:
            return Refilled(apply_edits(prompt, edits), tokens, fills)
        sizes[-1] -= tokens - budget + 1
        if sizes[-1] <= 0:
            return None
        openings[-1] = counted_opening(tokenizer, source, sizes[-1])
        fills[-1] = pool_text.opening_segments(len(openings[-1][0]))
    return None


def _count(tokenizer: Tokenizer, text: str) -> int:
    """The tokens of ``text``: a source document's from its learned piece counts (which the
    tokenizer then also knows one by one, for the recount of the prompt around it), else counted."""
    recalled = tokenizer.recall_pieces(text)
    return tokenizer.count(text) if recalled is None else recalled
