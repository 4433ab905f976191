"""The mechanism the synthetic recall tasks share: a haystack of small text units (sentences, distractor
needles, JSON pairs) with needles inserted at chosen depths, cut to the largest number of units whose
rendered prompt fits the budget (counted exactly)."""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from longbench100.fitting.fit import BuildContext, Fitted
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng
from longbench100.sources.near_duplicates import DistinctInPrompt
from longbench100.sources.records import Document
from longbench100.text.spliced_count import JoinedIndex, Part, TextIndex, materialize, part_length
from longbench100.text.tokenization import Tokenizer

from .essay_units import (
    DOCUMENT_BREAK,
    document_columns,
    joined_units,
    placed_document,
    placed_unit_bounds,
    unit_bounds,
)

DEPTH_STRATA = 11  # equal slices of [0, 1]; row r draws its depth within slice r mod 11
MAX_SEARCH_STEPS = 40
ESTIMATE_SAMPLE = 200  # units counted to estimate the tokens of one unit


def row_depth(seed: int, task: str, row: int, strata: int = DEPTH_STRATA) -> float:
    """The target depth of row ``row`` (stratified jitter): a seeded uniform draw within the row's
    stratum, slice ``row % strata`` of [0, 1]. Depths are balanced over rows, the same at every
    length (paired), and no small set of fixed places holds the gold."""
    offset = derive_rng(seed, task, "depth", row).random()
    return round((row % strata + offset) / strata, 4)


@dataclass
class Haystack:
    """Units in order; ``separators[i]`` goes before unit ``i``.

    An essay holds its units as placements of whole documents instead (``units`` and ``separators`` stay
    empty): ``placed[p]`` is the document of placement ``p`` (a document placed again in a later pass over a
    small pool is a new placement), ``blocks[p]`` its text as placed, ``placement_starts[p]`` the number of
    its first unit; ``passes`` is how many passes over the pool were needed. A row's essay is new, but its
    documents recur: what each document's units are, and where they lie in its text, is worked out once.
    """

    units: list[str]
    separators: list[str]
    passes: int = 0
    shared: bool = (
        False  # the same haystack serves many rows (repeated noise): its token index is kept
    )
    blocks: list[str] = field(
        default_factory=list
    )  # essays: each placed document's text; joined by DOCUMENT_BREAK they are base
    placed: list[Document] = field(default_factory=list)  # essays: each placement's document
    placement_starts: list[int] = field(
        default_factory=list
    )  # essays: the index of each placement's first unit
    essay_units: int = 0  # essays: the number of units

    @property
    def count(self) -> int:
        """The number of units."""
        return self.essay_units if self.blocks else len(self.units)

    def unit_texts(self) -> tuple[list[str], list[str]]:
        """Every unit and the separator before it, in order (an essay's read from its documents)."""
        if not self.blocks:
            return self.units, self.separators
        columns = [document_columns(document.text) for document in self.placed]
        return (
            [unit for units, _ in columns for unit in units],
            [separator for _, separators in columns for separator in separators],
        )

    @cached_property
    def base(self) -> str:
        """Every unit joined by its own separator (the first unit's is left out): the text that spans of
        :meth:`layout` point into. Computed once, when the units are complete; an essay's is its placed
        documents joined by :data:`DOCUMENT_BREAK` (the same text: each document's first unit has that
        separator, and a placed document is its units joined by theirs), a join of a few long strings."""
        if self.blocks:
            return DOCUMENT_BREAK.join(self.blocks)
        return joined_units(self.units, self.separators)

    @cached_property
    def _bounds(self) -> tuple[Sequence[int], Sequence[int]]:
        """Where each unit starts and ends in :attr:`base`; an essay's read off its documents' own bounds."""
        if self.blocks:
            offsets = list(
                itertools.accumulate(
                    (len(block) + len(DOCUMENT_BREAK) for block in self.blocks[:-1]), initial=0
                )
            )
            bounds = [placed_unit_bounds(document.text) for document in self.placed]
            return (
                BlockOffsets(
                    [starts for starts, _ in bounds],
                    offsets,
                    self.placement_starts,
                    self.essay_units,
                ),
                BlockOffsets(
                    [ends for _, ends in bounds], offsets, self.placement_starts, self.essay_units
                ),
            )
        return unit_bounds(self.units, self.separators)

    def layout(
        self,
        base: TextIndex | JoinedIndex,
        count: int,
        needles: list[tuple[float, str]],
        separator: str = " ",
    ) -> tuple[list[Part], list[int]]:
        """The first ``count`` units with each ``(depth, needle)`` inserted at the unit boundary nearest to
        ``depth`` of the units' characters, as parts: runs of units as spans of ``base`` (an index of
        :attr:`base`), needles and the ``separator`` around them as literals.

        Returns the parts and the index of each needle's part (in the order given).
        """
        starts, ends = self._bounds
        total = ends[count - 1] if count else 0
        at: dict[int, list[int]] = {}
        for index, (depth, _) in enumerate(needles):
            at.setdefault(nearest_boundary(ends, depth * total, count), []).append(index)
        parts: list[Part] = []
        where = [0] * len(needles)
        cursor = 0
        for position in sorted({*at, count}):
            if position > cursor:
                if parts:
                    parts.append(separator)
                parts.append((base, starts[cursor], ends[position - 1]))
                cursor = position
            for index in at.get(position, ()):
                if parts:
                    parts.append(separator)
                where[index] = len(parts)
                parts.append(needles[index][1])
        return parts, where

    def joined(
        self, count: int, needles: list[tuple[float, str]], separator: str = " "
    ) -> tuple[str, list[int]]:
        """The text of :meth:`layout` and the character offset of each needle (in the order given)."""
        parts, where = self.layout(TextIndex(self.base, None), count, needles, separator)
        offsets = list(itertools.accumulate((part_length(part) for part in parts), initial=0))
        return materialize(parts), [offsets[index] for index in where]

    def tokens_per_unit(
        self, tokenizer: Tokenizer, index: TextIndex | JoinedIndex, sample: int = ESTIMATE_SAMPLE
    ) -> float:
        """Estimated tokens of one unit (a guess for the search): read off ``index`` (of :attr:`base`) where its
        cut places span the text, else (a tokenizer counted whole) the first ``sample`` units counted together."""
        span = index.inner(0, len(index.text))
        if span is not None and span[1] > span[0] and span[2] > 0:
            return span[2] * len(index.text) / (span[1] - span[0]) / max(1, self.count)
        units = self.unit_texts()[0][:sample]
        return tokenizer.count(" ".join(units)) / max(1, len(units))

    def provenance_pieces(self, count: int) -> list[Piece]:
        """One piece per document placement in the first ``count`` units: ``filler`` when cut short, else
        ``distractor`` (a placement's units are one run: each placement adds a whole document's units)."""
        shown = min(count, self.count)
        ends = [*self.placement_starts[1:], self.count]
        return [
            Piece("distractor" if end <= count else "filler", "", 0, document)
            for document, start, end in zip(self.placed, self.placement_starts, ends)
            if start < shown
        ]


class BlockOffsets(Sequence[int]):
    """Offsets of units in a text made of blocks, as a read-only sequence: each block's own offsets (from its
    start) plus where the block starts. A text of known blocks in a new order costs one entry per block, not per
    unit; a lookup costs a search among the blocks."""

    def __init__(
        self,
        relative: list[Sequence[int]],
        block_starts: list[int],
        first_units: list[int],
        count: int,
    ) -> None:
        self._relative, self._block_starts, self._first_units, self._count = (
            relative,
            block_starts,
            first_units,
            count,
        )

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, unit: int) -> int:  # type: ignore[override]  # a unit's offset; no slices
        if not 0 <= unit < self._count:
            raise IndexError(unit)
        block = bisect.bisect_right(self._first_units, unit) - 1
        return self._block_starts[block] + self._relative[block][unit - self._first_units[block]]


def nearest_boundary(ends: Sequence[int], target: float, count: int | None = None) -> int:
    """The number of units before the boundary closest to character ``target`` among the first ``count``
    units (all by default; ``ends``: cumulative unit ends)."""
    count = len(ends) if count is None else count
    after = bisect.bisect_left(ends, target, 0, count)
    if after == 0:
        return 0 if not count or target <= ends[0] / 2 else 1
    if after >= count:
        return count
    return after if target - ends[after - 1] <= ends[after] - target else after + 1


def repeated(
    units: Iterator[str], limit: int, separator: str = " ", shared: bool = False
) -> Haystack:
    """A haystack of the first ``limit`` units of ``units``, all joined by ``separator`` (``shared``: it will
    serve many rows unchanged, so its token index is worth keeping)."""
    texts = [text for _, text in zip(range(limit), units)]
    return Haystack(texts, [separator] * len(texts), shared=shared)


def essay_tokens(budget: int) -> int:
    """The tokens of prose an essay haystack draws for ``budget`` tokens of prompt: a tenth more,
    so that the fit can choose where to cut."""
    return budget + budget // 10


def essay(
    pool: list[Document],
    rng: random.Random,
    tokens_wanted: int,
    distinct: Callable[[], PromptGuard] = DistinctInPrompt,
) -> Haystack:
    """Real prose: whole documents of ``pool`` in a shuffled order, split at sentence ends and line breaks,
    until their tokens reach ``tokens_wanted``; documents are separated by a blank line. A document is
    read (its text and tokens) only when the order reaches it, and left out when it is empty or when
    this pass already placed the same text or a near-copy of it (``distinct`` makes what tells, by
    default :class:`DistinctInPrompt`). A pool too small for the budget is used again in a new order
    (``passes`` > 1, recorded by the tasks)."""
    haystack = Haystack([], [])
    total = 0
    while total < tokens_wanted and pool:
        order = pass_order(len(pool), rng)
        haystack.passes += 1
        placed = distinct()
        before = total
        for index in order:
            if total >= tokens_wanted:
                break
            document = pool[index]
            if not document.text or not placed.admit(document):
                continue
            _add_sentences(haystack, document)
            total += document.tokens
        if total == before:  # a pass that found nothing to place: the pool holds no text
            break
    return haystack


def pass_order(size: int, rng: random.Random) -> list[int]:
    """The order in which a pass of :func:`essay` over a pool of ``size`` documents reads them."""
    order = list(range(size))
    rng.shuffle(order)
    return order


class PromptGuard(Protocol):
    """What keeps a text out of a prompt that already holds it or a near-copy of it."""

    def admit(self, document: Document) -> bool:
        """Whether ``document`` is new to the prompt (it is then counted as placed)."""
        ...


def _add_sentences(haystack: Haystack, document: Document) -> None:
    """Append ``document``'s sentences (and lines) to ``haystack`` as units of one placement; the first is
    set apart from the previous document by a blank line. A document without a sentence adds nothing."""
    sentences, _ = document_columns(document.text)
    if not sentences:
        return
    haystack.blocks.append(placed_document(document.text))
    haystack.placed.append(document)
    haystack.placement_starts.append(haystack.essay_units)
    haystack.essay_units += len(sentences)


def largest_fitting(
    count_tokens: Callable[[int], int], budget: int, available: int, per_unit: float
) -> int | None:
    """The largest ``n <= available`` with ``count_tokens(n) <= budget`` (token counts grow with ``n``), or
    ``None`` when even ``n = 0`` is over budget. Guesses from ``per_unit`` tokens a unit, then narrows
    the bracket with exact counts."""
    per_unit = max(per_unit, 0.5)
    fits, over = -1, available + 1
    guess = min(available, max(0, int(budget / per_unit)))
    for _ in range(MAX_SEARCH_STEPS):
        tokens = count_tokens(guess)
        if tokens <= budget:
            fits = guess
            step = int((budget - tokens) / per_unit)
            guess = guess + max(1, step)
        else:
            over = guess
            guess = guess - max(1, math.ceil((tokens - budget) / per_unit))
        if over - fits <= 1:
            break
        if not fits < guess < over:
            guess = (fits + over) // 2
    return fits if fits >= 0 else None


def fit_units(
    ctx: BuildContext,
    render: Callable[[int], str],
    available: int,
    per_unit: float,
    pieces: Callable[[int], list[Piece]] | None = None,
) -> tuple[Fitted, int] | None:
    """The prompt with the most units that fits ``ctx.budget``, and that number of units (``None``: nothing fits)."""
    count = largest_fitting(lambda n: ctx.count_prompt(render(n)), ctx.budget, available, per_unit)
    if count is None:
        return None
    prompt = render(count)
    return Fitted(prompt, ctx.count_prompt(prompt), pieces(count) if pieces else [], 0), count


FRAME_MARKS = (
    "\x00context\x00",
    "\x00another, longer context\x00",
)  # two lengths: a frame that measures its context shows


def prompt_frame(render: Callable[[str], str]) -> tuple[str, str] | None:
    """The prompt's text before and after its context, when ``render`` places the context once, verbatim,
    and the rest does not depend on it; else ``None``."""
    first, second = (render(mark) for mark in FRAME_MARKS)
    if first.count(FRAME_MARKS[0]) != 1 or first.replace(FRAME_MARKS[0], FRAME_MARKS[1]) != second:
        return None
    before, after = first.split(FRAME_MARKS[0])
    return before, after


@dataclass
class HaystackFit:
    """A haystack prompt that fits its budget: the prompt, its number of units, its context and where each
    needle is in it (characters, and tokens before the needle over the context's tokens), and where the
    context was rendered in the prompt when that is known (the template placed it once, verbatim)."""

    fitted: Fitted
    count: int
    context: str
    offsets: list[int]
    depths: list[float]
    context_at: int | None = None


def fit_haystack(
    ctx: BuildContext,
    haystack: Haystack,
    needles: list[tuple[float, str]],
    render: Callable[[str], str],
    separator: str = " ",
    pieces: Callable[[int], list[Piece]] | None = None,
) -> HaystackFit | None:
    """The prompt (``render`` of the context) with the most units of ``haystack`` and all ``needles`` that
    fits ``ctx.budget`` (``None``: nothing fits).

    Each candidate size is counted from the haystack's cached pieces and the few places where a needle or
    the template meets it (:mod:`longbench100.text.spliced_count`), never rendered; only the chosen one is.
    A template that does not place its context once and verbatim, or a chat template, is counted whole.
    """
    frame = None if ctx.chat else prompt_frame(render)
    fit = _fit_haystack(ctx, haystack, needles, render, separator, pieces, frame)
    if fit is None or frame is None or fit.context_at is not None:
        return fit
    return _fit_haystack(
        ctx, haystack, needles, render, separator, pieces, None
    )  # the frame guessed wrong: count whole


def _base_index(tokenizer: Tokenizer, haystack: Haystack) -> TextIndex | JoinedIndex:
    """The token index of ``haystack.base``: joined from its documents' own indexes for an essay (its
    documents recur across rows in new orders, and its base is their join), else cut whole (kept when the
    haystack serves many rows)."""
    if haystack.blocks:
        return tokenizer.joined_index(haystack.blocks, DOCUMENT_BREAK)
    return tokenizer.index(haystack.base, keep=haystack.shared)


def _fit_haystack(
    ctx: BuildContext,
    haystack: Haystack,
    needles: list[tuple[float, str]],
    render: Callable[[str], str],
    separator: str,
    pieces: Callable[[int], list[Piece]] | None,
    frame: tuple[str, str] | None,
) -> HaystackFit | None:
    """:func:`fit_haystack` with the prompt counted from ``frame`` and the layout, or rendered whole when it is ``None``."""
    tokenizer = ctx.tokenizer
    base = _base_index(tokenizer, haystack)

    def prompt_tokens(count: int) -> int:
        if frame is None:
            return ctx.count_prompt(render(haystack.joined(count, needles, separator)[0]))
        return tokenizer.count_parts(
            [frame[0], *haystack.layout(base, count, needles, separator)[0], frame[1]]
        )

    count = largest_fitting(
        prompt_tokens, ctx.budget, haystack.count, haystack.tokens_per_unit(ctx.tokenizer, base)
    )
    if count is None:
        return None
    parts, where = haystack.layout(base, count, needles, separator)
    context = materialize(parts)
    starts = list(itertools.accumulate((part_length(part) for part in parts), initial=0))
    total = max(1, tokenizer.count_parts(parts))
    depths = [round(tokenizer.count_parts(parts[:index]) / total, 4) for index in where]
    fitted = Fitted(render(context), prompt_tokens(count), pieces(count) if pieces else [], 0)
    context_at = (
        len(frame[0]) if frame is not None and _framed(fitted.prompt, frame, context) else None
    )
    return HaystackFit(
        fitted, count, context, [starts[index] for index in where], depths, context_at
    )


def _framed(prompt: str, frame: tuple[str, str], context: str) -> bool:
    """Whether ``prompt`` is ``frame[0] + context + frame[1]`` (compared in place, without joining them)."""
    before, after = frame
    return (
        len(prompt) == len(before) + len(context) + len(after)
        and prompt.startswith(before)
        and prompt.startswith(context, len(before))
        and prompt.endswith(after)
    )
