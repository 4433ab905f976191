"""Which ground-truth item each row asks about at each length.

Stratified: at every length, the rows are shared out over the task's sources that have an item fitting
that length, so a source whose items are short cannot crowd out the others. Each row has a home source
(round-robin over the sources, in registry order) and keeps it wherever that source has a fitting item
left; rows whose home source has none move to the source with the fewest rows at that length that still
has unused fitting items (registry order breaks ties). Only when every fitting item is in use are items
reused.

Paired (the default): each row also has its own item from its home source, and asks about it at every
length where it fits, so scores at different lengths compare the same questions. Within a source, items
that fit the most requested lengths come first. Where the row's item does not fit, an unused fitting
item takes its place, from the same source when it has one (that row is then not paired at that
length). Unpaired: each length draws its items independently (its own shuffle of every source).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from longbench100.fitting.rng import derive_rng

from ..tasks.base import Candidate


@dataclass(frozen=True)
class RowPlan:
    """Row ``row`` at one length: its candidate (``None`` for synthetic tasks) and whether it is paired."""

    row: int
    candidate: Candidate | None
    paired: bool
    reused: bool = False


@dataclass
class LengthPlan:
    """The rows of one task at one length, with the statistics ``inspect`` reports."""

    rows: list[RowPlan]
    eligible: int | None  # items that fit this length (None for synthetic tasks)
    sources: tuple[
        str, ...
    ] = ()  # the task's ground-truth sources, in registry order (empty for synthetic tasks)


def plan_rows(
    candidates: list[Candidate] | None,
    budgets: dict[str, int],
    rows: int,
    seed: int,
    task: str,
    *,
    paired: bool = True,
) -> dict[str, LengthPlan]:
    """Plan every requested length of one task; lengths where no item fits get no rows."""
    if candidates is None:
        return {
            label: LengthPlan([RowPlan(row, None, True) for row in range(rows)], None)
            for label in budgets
        }
    sources = tuple(dict.fromkeys(candidate.item.source for candidate in candidates))
    homes = _home_sources(candidates, sources, budgets, rows)
    plans = {}
    if paired:
        pools = _source_pools(
            candidates, sources, budgets, derive_rng(seed, task, "plan"), by_fit=True
        )
        own = _own_items(pools, homes)
        for label, budget in budgets.items():
            plans[label] = _plan_length(pools, homes, own, budget, sources)
    else:
        for label, budget in budgets.items():
            pools = _source_pools(
                candidates, sources, budgets, derive_rng(seed, task, "plan", label), by_fit=False
            )
            plans[label] = _plan_length(pools, homes, [None] * rows, budget, sources)
    return plans


def _home_sources(
    candidates: list[Candidate], sources: tuple[str, ...], budgets: dict[str, int], rows: int
) -> list[str | None]:
    """Each row's home source: round-robin over the sources with an item that fits some requested length."""
    usable = [
        source
        for source in sources
        if any(
            c.item.source == source and any(c.fits(b) for b in budgets.values()) for c in candidates
        )
    ]
    return [usable[row % len(usable)] if usable else None for row in range(rows)]


def _source_pools(
    candidates: list[Candidate],
    sources: tuple[str, ...],
    budgets: dict[str, int],
    rng,
    *,
    by_fit: bool,
) -> dict[str, list[Candidate]]:
    """Each source's candidates in a seeded random order; with ``by_fit``, those fitting the most lengths first."""
    pools = {}
    for source in sources:
        pool = [candidate for candidate in candidates if candidate.item.source == source]
        rng.shuffle(pool)
        if by_fit:
            pool.sort(
                key=lambda candidate: -sum(candidate.fits(budget) for budget in budgets.values())
            )
        pools[source] = pool
    return pools


def _own_items(
    pools: dict[str, list[Candidate]], homes: list[str | None]
) -> list[Candidate | None]:
    """Row r's own item: the next item of its home source's pool (``None`` once that pool runs out)."""
    taken: Counter[str | None] = Counter()
    own: list[Candidate | None] = []
    for home in homes:
        pool = pools.get(home, []) if home else []
        own.append(pool[taken[home]] if taken[home] < len(pool) else None)
        taken[home] += 1
    return own


def _plan_length(
    pools: dict[str, list[Candidate]],
    homes: list[str | None],
    own: list[Candidate | None],
    budget: int,
    sources: tuple[str, ...],
) -> LengthPlan:
    """Rows for one length: share the rows out over the sources that fit, then give each row an item of its source."""
    eligible = {source: [c for c in pool if c.fits(budget)] for source, pool in pools.items()}
    eligible = {source: pool for source, pool in eligible.items() if pool}
    if not eligible:
        return LengthPlan([], 0, sources)
    rows = len(homes)
    kept = {
        row: candidate
        for row, candidate in enumerate(own)
        if candidate is not None and candidate.fits(budget)
    }  # rows whose own item fits
    assigned: dict[int, str] = {
        row: candidate.item.source  # (the row's home source)
        for row, candidate in kept.items()
    }
    load = Counter(assigned.values())
    for row in range(
        rows
    ):  # rows whose own item does not fit stay with their home source while it has items left
        home = homes[row]
        if row not in kept and home in eligible and load[home] < len(eligible[home]):
            assigned[row] = home
            load[home] += 1
    for row in range(
        rows
    ):  # the rest go to the least-loaded source with items left (or, when all are used, to the least loaded)
        if row not in assigned:
            open_sources = [source for source in eligible if load[source] < len(eligible[source])]
            source = min(open_sources or eligible, key=lambda name: load[name])
            assigned[row] = source
            load[source] += 1
    in_use = {id(candidate) for candidate in kept.values()}
    spares = {
        source: iter([c for c in pool if id(c) not in in_use]) for source, pool in eligible.items()
    }
    reuses: Counter[str] = Counter()
    plan: list[RowPlan] = []
    for row in range(rows):
        source = assigned[row]
        if row in kept:
            plan.append(RowPlan(row, kept[row], True))
            continue
        spare = next(spares[source], None)
        if spare is not None:
            plan.append(RowPlan(row, spare, False))
        else:
            pool = eligible[source]
            plan.append(RowPlan(row, pool[reuses[source] % len(pool)], False, reused=True))
            reuses[source] += 1
    return LengthPlan(plan, sum(len(pool) for pool in eligible.values()), sources)


def rows_per_source(plan: LengthPlan, rows: list[RowPlan]) -> dict[str, int] | None:
    """How many of ``rows`` ask about an item of each of the task's sources (``None`` for synthetic tasks)."""
    if plan.eligible is None:
        return None
    counts = dict.fromkeys(plan.sources, 0)
    for row in rows:
        assert row.candidate is not None, "every row of an item-based task has a candidate"
        counts[row.candidate.item.source] += 1
    return counts
