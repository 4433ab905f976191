"""Which ground-truth item each row asks about at each length.

Paired (the default): row r asks about the same item at every length where that item fits, so scores
at different lengths compare the same questions. Items that fit the most requested lengths are drawn
first; where a row's item does not fit, an unused item that fits takes its place (that row is then
not paired), and once every eligible item is in use, items are reused. Unpaired: each length draws
its own rows independently.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tasks.base import Candidate
from .rng import derive_rng


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


def plan_rows(candidates: list[Candidate] | None, budgets: dict[str, int], rows: int, seed: int, task: str, *, paired: bool = True) -> dict[str, LengthPlan]:
    """Plan every requested length of one task; lengths where no item fits get no rows."""
    if candidates is None:
        return {label: LengthPlan([RowPlan(row, None, True) for row in range(rows)], None) for label in budgets}
    order = list(candidates)
    derive_rng(seed, task, "plan").shuffle(order)
    if paired:
        order.sort(key=lambda candidate: -sum(candidate.min_tokens <= budget for budget in budgets.values()))
    plans = {}
    for label, budget in budgets.items():
        pool = order if paired else derive_rng(seed, task, "plan", label).sample(order, len(order))
        plans[label] = _plan_length(pool, budget, rows, paired)
    return plans


def _plan_length(order: list[Candidate], budget: int, rows: int, paired: bool) -> LengthPlan:
    """Rows for one length: the row's own item when it fits, else the next unused fitting item, else reuse."""
    eligible = [candidate for candidate in order if candidate.min_tokens <= budget]
    if not eligible:
        return LengthPlan([], 0)
    in_use = {id(order[row]) for row in range(min(rows, len(order))) if order[row].min_tokens <= budget} if paired else set()
    spares = iter([candidate for candidate in eligible if id(candidate) not in in_use])
    plan: list[RowPlan] = []
    for row in range(rows):
        own = order[row] if paired and row < len(order) and order[row].min_tokens <= budget else None
        if own is not None:
            plan.append(RowPlan(row, own, True))
            continue
        spare = next(spares, None)
        if spare is not None:
            plan.append(RowPlan(row, spare, False))
        else:
            plan.append(RowPlan(row, eligible[row % len(eligible)], False, reused=True))
    return LengthPlan(plan, len(eligible))
