"""Fill the room of a prompt's gold material with other text from the same sources, at the same
budget.

The gold-removed control twin (``generate/controls.py``) takes a finished prompt, the spans that
hold the material its answer depends on, and a pool of padding documents; each span's text is
replaced by the opening of pool documents of (at most) the same number of tokens, the rest of the
prompt kept byte for byte. A recount then shortens the last fill until the prompt is within its
budget."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from longbench100.fitting.packing import cut_prefix
from longbench100.sources.records import Document
from longbench100.text.tokenization import Tokenizer
from longbench100.text.units import Span

MAX_REPAIRS = 12
SEPARATOR = "\n\n"


Stretch = tuple[str, int]
"""Padding text that is no document (a task's own context around its gold), with its tokens."""


class PoolText:
    """Draws padding text from ``pool`` (documents, whose token counts are read only when drawn, or
    :data:`Stretch` es; in a seeded random order), with ``shown`` (the prompt), never a text whose
    opening it already holds nor one drawn before for the same prompt; without ``shown`` (a task's
    own context around its gold) the pool is drawn again in a new order when it runs out. Documents
    whose id is ``excluded`` (the gold's own, of which the prompt may show a middle part only) are
    never drawn. What a span leaves of a drawn text opens the next span's source, so one long
    document can fill many spans; with ``whole``, each span gets the opening of one text of its own
    (a titled document keeps its title with its own body)."""

    def __init__(
        self,
        pool: Sequence[Document] | Sequence[Stretch],
        rng: random.Random,
        shown: str | None,
        excluded: frozenset[str] = frozenset(),
        whole: bool = False,
    ) -> None:
        self.rng = rng
        self.whole = whole
        self.excluded = excluded
        self.order: list[int] = []
        self.pool = pool
        self.shown = shown
        self.drawn: list[Document] = []
        self.rest, self.rest_tokens = "", 0
        self.source, self.source_tokens = "", 0
        self._shuffle()

    def source_text(self, tokens: int) -> str:
        """The rest of the last source, then pool texts, joined until they hold at least ``tokens``
        tokens (or the pool runs out)."""
        texts, held = ([self.rest], self.rest_tokens) if self.rest else ([], 0)
        while held < tokens and not (self.whole and texts) and self._has_next():
            entry = self.pool[self.order.pop()]
            text = entry.text if isinstance(entry, Document) else entry[0]
            if self.shown is not None and text[:200] in self.shown:
                continue
            if isinstance(entry, Document):
                if entry.id in self.excluded:
                    continue
                self.drawn.append(entry)
            texts.append(text)
            held += entry.tokens if isinstance(entry, Document) else entry[1]
        self.source, self.source_tokens = SEPARATOR.join(texts), held
        return self.source

    def consume(self, used: str) -> None:
        """Keep what follows ``used``, the opening of the last source, for the next span."""
        rest = "" if self.whole else self.source[len(used) :].lstrip()
        self.rest_tokens = round(self.source_tokens * len(rest) / max(1, len(self.source)))
        self.rest = rest

    def _shuffle(self) -> None:
        """Put every pool entry back, in a new random order."""
        self.order = list(range(len(self.pool)))
        self.rng.shuffle(self.order)

    def _has_next(self) -> bool:
        """Whether an entry is left to draw (drawing the pool again when it may be reused)."""
        if not self.order and self.shown is None:
            self._shuffle()
        return bool(self.order)


def opening_of(tokenizer: Tokenizer, text: str, tokens: int) -> str:
    """The opening of ``text`` with at most ``tokens`` tokens: cut at a sentence end where one is
    near, else after a whole token."""
    cut = cut_prefix(tokenizer, text, tokens)
    if cut is not None and cut[1] >= tokens - max(8, tokens // 20):
        return cut[0]
    ids = tokenizer.encode(text[: max(1, tokens) * 8])[: max(0, tokens)]
    opening = tokenizer.decode(ids).rstrip("\ufffd")
    return opening if text.startswith(opening) else opening[:-1]


def refill_spans(
    tokenizer: Tokenizer,
    count: Callable[[str], int],
    prompt: str,
    spans: Sequence[Span],
    pool_text: PoolText,
    budget: int,
) -> tuple[str, int] | None:
    """``prompt`` with the text of every span (offsets into ``prompt``, in order, not overlapping)
    replaced by pool text of at most as many tokens, and its token count by ``count``; ``None`` when
    the pool holds no text or the prompt cannot be brought within ``budget``."""
    if not spans:
        return None
    sizes = [tokenizer.count(prompt[start:end]) for start, end in spans]
    openings = []
    for size in sizes:
        source = pool_text.source_text(size)
        if not source:
            return None
        openings.append(opening_of(tokenizer, source, size))
        pool_text.consume(openings[-1])
    for _ in range(MAX_REPAIRS):
        pieces, position = [], 0
        for (start, end), opening in zip(spans, openings, strict=True):
            pieces += [prompt[position:start], opening]
            position = end
        candidate = "".join(pieces) + prompt[position:]
        tokens = count(candidate)
        if tokens <= budget:
            return candidate, tokens
        sizes[-1] -= tokens - budget + 1
        if sizes[-1] <= 0:
            return None
        openings[-1] = opening_of(tokenizer, source, sizes[-1])
    return None
