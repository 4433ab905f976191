"""The mechanism the synthetic recall tasks share: a haystack of small text units (sentences, distractor
needles, JSON pairs) with needles inserted at chosen depths, cut to the largest number of units whose
rendered prompt fits the budget (counted exactly)."""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from ..generate.fitting import BuildContext, Fitted
from ..generate.pieces import Piece
from ..generate.sentences import sentence_ends
from ..records import Document
from ..tokenization import Tokenizer

DEPTH_GRID = tuple(step / 10 for step in range(11))  # 0%, 10%, ..., 100%
MAX_SEARCH_STEPS = 40
ESTIMATE_SAMPLE = 200  # units counted to estimate the tokens of one unit


def grid_depth(row: int, grid: tuple[float, ...] = DEPTH_GRID) -> float:
    """The target depth of row ``row``: the grid's values in turn, so depths are balanced over rows."""
    return grid[row % len(grid)]


@dataclass
class Haystack:
    """Units in order; ``separators[i]`` goes before unit ``i``.

    Essays also say where each unit comes from: ``documents[i]`` is its document and ``placements[i]``
    the number of that document's placement in the haystack (a document placed again in a later pass
    over a small pool is a new placement); ``passes`` is how many passes over the pool were needed.
    """

    units: list[str]
    separators: list[str]
    documents: list[Document | None] = field(default_factory=list)
    placements: list[int] = field(default_factory=list)
    passes: int = 0

    def joined(self, count: int, needles: list[tuple[float, str]], separator: str = " ") -> tuple[str, list[int]]:
        """The first ``count`` units with each ``(depth, needle)`` inserted at the unit boundary nearest to
        ``depth`` of the text's characters.

        Returns the text and the character offset of each needle (in the order given).
        """
        ends = list(itertools.accumulate(len(self.separators[i]) * bool(i) + len(self.units[i]) for i in range(count)))
        total = ends[-1] if ends else 0
        at: dict[int, list[int]] = {}
        for index, (depth, _) in enumerate(needles):
            at.setdefault(nearest_boundary(ends, depth * total), []).append(index)
        parts: list[str] = []
        length = 0
        offsets = [0] * len(needles)
        for position in range(count + 1):
            for index in at.get(position, []):
                if parts:
                    parts.append(separator)
                    length += len(separator)
                offsets[index] = length
                parts.append(needles[index][1])
                length += len(needles[index][1])
            if position < count:
                if parts:
                    sep = self.separators[position] if position and not at.get(position) else separator
                    parts.append(sep)
                    length += len(sep)
                parts.append(self.units[position])
                length += len(self.units[position])
        return "".join(parts), offsets

    def tokens_per_unit(self, tokenizer: Tokenizer, sample: int = ESTIMATE_SAMPLE) -> float:
        """Estimated tokens of one unit: the first ``sample`` units counted together (a guess for the search)."""
        units = self.units[:sample]
        return tokenizer.count(" ".join(units)) / max(1, len(units))

    def provenance_pieces(self, count: int) -> list[Piece]:
        """One piece per document placement in the first ``count`` units: ``filler`` when cut short, else ``distractor``."""
        used = Counter(self.placements[:count])
        whole = Counter(self.placements)
        pieces: list[Piece] = []
        for index in range(min(count, len(self.placements))):
            placement = self.placements[index]
            if index and self.placements[index - 1] == placement:
                continue
            role = "distractor" if used[placement] == whole[placement] else "filler"
            pieces.append(Piece(role, "", 0, self.documents[index]))
        return pieces


def nearest_boundary(ends: list[int], target: float) -> int:
    """The number of units before the boundary closest to character ``target`` (``ends``: cumulative unit ends)."""
    after = bisect.bisect_left(ends, target)
    if after == 0:
        return 0 if not ends or target <= ends[0] / 2 else 1
    if after >= len(ends):
        return len(ends)
    return after if target - ends[after - 1] <= ends[after] - target else after + 1


def repeated(units: Iterator[str], limit: int, separator: str = " ") -> Haystack:
    """A haystack of the first ``limit`` units of ``units``, all joined by ``separator``."""
    texts = [text for _, text in zip(range(limit), units)]
    return Haystack(texts, [separator] * len(texts))


def essay(pool: list[Document], rng: random.Random, tokens_wanted: int) -> Haystack:
    """Real prose: whole documents of ``pool`` in a shuffled order, split at sentence ends and line breaks,
    until their tokens reach ``tokens_wanted``; documents are separated by a blank line. A pool too small
    for the budget is used again in a new order (``passes`` > 1, recorded by the tasks)."""
    haystack = Haystack([], [], [], [])
    total = 0
    while total < tokens_wanted and any(document.tokens for document in pool):
        order = list(pool)
        rng.shuffle(order)
        haystack.passes += 1
        for document in order:
            if total >= tokens_wanted:
                break
            placement = haystack.placements[-1] + 1 if haystack.placements else 0
            _add_sentences(haystack, document, placement)
            total += document.tokens
    return haystack


@lru_cache(maxsize=4096)
def _document_units(text: str) -> tuple[tuple[str, str], ...]:
    """A document's sentences (and lines) with the separator each keeps inside the document: a line break
    when one precedes it, else a space. Cached: rows draw their haystacks from the same documents."""
    cuts = sorted({*sentence_ends(text), *(i + 1 for i, char in enumerate(text) if char == "\n"), len(text)})
    units = []
    start = 0
    for end in cuts:
        raw = text[start:end]
        start = end
        sentence = raw.strip()
        if sentence:
            units.append((sentence, "\n" if "\n" in raw[: len(raw) - len(raw.lstrip())] else " "))
    return tuple(units)


def _add_sentences(haystack: Haystack, document: Document, placement: int) -> None:
    """Append ``document``'s sentences (and lines) to ``haystack`` as units of one placement; the first is
    set apart from the previous document by a blank line."""
    for index, (sentence, separator) in enumerate(_document_units(document.text)):
        haystack.units.append(sentence)
        haystack.separators.append("\n\n" if index == 0 else separator)
        haystack.documents.append(document)
        haystack.placements.append(placement)


def largest_fitting(count_tokens: Callable[[int], int], budget: int, available: int, per_unit: float) -> int | None:
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


def fit_units(ctx: BuildContext, render: Callable[[int], str], available: int, per_unit: float, pieces: Callable[[int], list[Piece]] | None = None) -> tuple[Fitted, int] | None:
    """The prompt with the most units that fits ``ctx.budget``, and that number of units (``None``: nothing fits)."""
    count = largest_fitting(lambda n: ctx.count_prompt(render(n)), ctx.budget, available, per_unit)
    if count is None:
        return None
    prompt = render(count)
    return Fitted(prompt, ctx.count_prompt(prompt), pieces(count) if pieces else [], 0), count
