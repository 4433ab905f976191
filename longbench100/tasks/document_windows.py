"""Where each row of the one-document tasks reads, at every length of a run: paired rows by construction.

Each row gets a home: one document and one starting chunk, with the run of chunks from there that fills
the longest length the home serves (a slot). Slots never overlap: the longest requested length is carved
first, document by document in the run's order, consecutive slots from the first usable chunk, and rows
take them round-robin over the documents (each document's first slot, then each one's second, ...), so
rows spread over the documents before any document is read twice. When the longest length's slots run
out, the next length's slots are carved from what is left, and so on. A row reads its home's opening at
every length its slot holds (the same document from the same start, longer at each length: paired).

At a length its home cannot fill (or with no home at all: more rows than the documents hold), the row
reads the window that shares the fewest tokens with the windows other rows read at that length, from a
document of its home's source where that ties; it is marked unpaired there (and as sharing text when its
window overlaps another row's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_SHARED = (
    0.5  # a window sharing more than this share of its length with other rows' windows is not read
)


@dataclass(frozen=True)
class Placement:
    """Where one row reads at one length: the document's index in the run's order and the first chunk."""

    document: int
    first: int
    paired: bool  # the row's home, read from the home's start
    shared: bool  # the window overlaps a window another row reads at this length


@dataclass(frozen=True)
class Home:
    """A row's own slot: chunks ``first`` to ``end`` (exclusive) of one document, holding ``size`` tokens or more."""

    document: int
    first: int
    end: int
    size: int


def span_end(tokens: Sequence[int], first: int, stop: int, size: int) -> int | None:
    """The end of the shortest run of chunks from ``first`` (before ``stop``) holding ``size`` tokens (``None``: none)."""
    total = 0
    for end in range(first, stop):
        total += tokens[end]
        if total >= size:
            return end + 1
    return None


def carve(tokens: Sequence[int], free: tuple[int, int], size: int) -> list[tuple[int, int]]:
    """Consecutive slots of ``size`` tokens from the start of the ``free`` chunk range."""
    slots, first = [], free[0]
    while (end := span_end(tokens, first, free[1], size)) is not None:
        slots.append((first, end))
        first = end
    return slots


class WindowLayout:
    """Every row's home and its placement at each budget (documents in the run's order)."""

    def __init__(
        self,
        chunk_tokens: Callable[[int], Sequence[int]],
        document_tokens: Sequence[int],
        sources: Sequence[str],
        budgets: Sequence[int],
        rows: int,
        front: int,
    ) -> None:
        self._tokens = chunk_tokens
        self._sources = sources
        self._document_tokens = document_tokens
        self._front = front
        self.homes = self._assign_homes(sorted(set(budgets), reverse=True), rows)
        self.placements = {budget: self._place(budget, rows) for budget in sorted(set(budgets))}

    def _assign_homes(self, sizes: list[int], rows: int) -> list[Home | None]:
        """Slots for the rows, longest size first, round-robin over the documents within a size."""
        free: dict[int, list[tuple[int, int]]] = {}
        homes: list[Home | None] = []
        for size in sizes:
            by_document: list[tuple[int, list[tuple[int, int]]]] = []
            for document, total in enumerate(self._document_tokens):
                if len(by_document) >= rows - len(homes):
                    break  # a first slot for every row still without a home (documents beyond are not cut)
                if total < size:
                    continue
                ranges = free.setdefault(document, [(self._front, len(self._tokens(document)))])
                slots = [
                    slot for span in ranges for slot in carve(self._tokens(document), span, size)
                ]
                if slots:
                    by_document.append((document, slots))
            level = 0
            while len(homes) < rows and any(level < len(slots) for _, slots in by_document):
                for document, slots in by_document:
                    if level < len(slots) and len(homes) < rows:
                        homes.append(Home(document, *slots[level], size))
                        _take(free[document], slots[level])
                level += 1
        return homes + [None] * (rows - len(homes))

    def _place(self, budget: int, rows: int) -> list[Placement | None]:
        """Each row's window at ``budget``: its home where the slot holds the budget, else the least shared one."""
        used: dict[int, list[tuple[int, int]]] = {}
        placements: list[Placement | None] = [None] * rows
        for row, home in enumerate(self.homes):
            if home is not None and home.size >= budget:
                placements[row] = Placement(home.document, home.first, True, False)
                used.setdefault(home.document, []).append(
                    (home.first, self._end(home.document, home.first, budget))
                )
        for row, home in enumerate(self.homes):
            if placements[row] is None:
                placement = self._least_shared(budget, home, used)
                placements[row] = placement
                if placement is not None:
                    start = placement.first
                    used.setdefault(placement.document, []).append(
                        (start, self._end(placement.document, start, budget))
                    )
        return placements

    def _end(self, document: int, first: int, budget: int) -> int:
        """The end of the window from ``first`` at ``budget`` (the chunk that completes the budget included)."""
        tokens = self._tokens(document)
        return span_end(tokens, first, len(tokens), budget) or len(tokens)

    def _least_shared(
        self, budget: int, home: Home | None, used: dict[int, list[tuple[int, int]]]
    ) -> Placement | None:
        """The window at ``budget`` sharing the fewest tokens with ``used`` (same source as the home on ties)."""
        home_source = self._sources[home.document] if home else None
        best: tuple | None = None
        for document, total in enumerate(self._document_tokens):
            if total < budget:
                continue
            tokens = self._tokens(document)
            taken = [False] * len(tokens)
            for first, end in used.get(document, ()):
                taken[first:end] = [True] * (end - first)
            for first in range(self._front, len(tokens)):
                window_end = span_end(tokens, first, len(tokens), budget)
                if window_end is None:
                    break
                shared = sum(tokens[index] for index in range(first, window_end) if taken[index])
                key = (shared, self._sources[document] != home_source, document, first)
                if best is None or key < best:
                    best = key
        if best is None or best[0] > MAX_SHARED * budget:
            return None
        return Placement(best[2], best[3], False, best[0] > 0)

    def placement(self, budget: int, row: int) -> Placement | None:
        """Where ``row`` reads at ``budget`` (``None``: no document fills it without sharing too much)."""
        return self.placements[budget][row]


def _take(ranges: list[tuple[int, int]], slot: tuple[int, int]) -> None:
    """Remove ``slot`` from the free ``ranges`` that hold it."""
    for index, (first, end) in enumerate(ranges):
        if first <= slot[0] and slot[1] <= end:
            ranges[index : index + 1] = [
                span for span in ((first, slot[0]), (slot[1], end)) if span[0] < span[1]
            ]
            return
