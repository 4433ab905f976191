"""The category rule I-V and the thresholds it reads from a problem's window grid."""

from __future__ import annotations

from dataclasses import dataclass

NOT_SOLVED = "NS"  # ours: never answered right, whole context included (``--never-solved ns``)
FOCUS_CATEGORIES = ("I", "II", "III", "IV", "V")  # the paper's categories
CATEGORIES = FOCUS_CATEGORIES + (NOT_SOLVED,)
CATEGORY_NAMES = {
    "I": "no context needed",
    "II": "easy (short, repeated)",
    "III": "retrieval",
    "IV": "balanced",
    "V": "holistic",
    NOT_SOLVED: "not solved",
}


@dataclass(frozen=True)
class Thresholds:
    """``lambda_p`` and ``k_p`` (first tertile of the grid) and ``lambda_q`` (largest partial window)."""

    lambda_p: int
    k_p: int
    lambda_q: int


def thresholds(windows: list[int], length: int) -> Thresholds:
    """Thresholds for a problem of ``length`` units probed at window sizes ``windows``.

    The grid is the observed window sizes without 0 and without the whole context ``length``
    (N values, ascending). ``lambda_p = k_p`` is its value at 0-based index floor(N/3), the first
    value past the lowest third (10 units on the default grid 1, 2, 5, ..., 500); ``lambda_q`` is
    its largest value. A problem probed only closed-book and whole
    (N = 0) gets 1 for all three.
    """
    grid = sorted({window for window in windows if 0 < window < length})
    if not grid:
        return Thresholds(1, 1, 1)
    tertile = grid[len(grid) // 3]
    return Thresholds(tertile, tertile, grid[-1])


def is_solved(outcomes: tuple[float | None, ...] | list[float | None], kind: str) -> bool:
    """Whether any probe of a problem was answered right: a COW outcome of 0.5 or more, a PIG score above 0.

    Every dolce.json row carries it as ``solved``; what a never-solved problem's category is depends
    on the never-solved rule (:func:`problem_category`).
    """
    threshold = 0.5 if kind == "COW" else 1e-12
    return any(outcome is not None and outcome >= threshold for outcome in outcomes)


def category(lam: int, k: int, limits: Thresholds) -> str:
    """The category of a problem with fitted ``lam`` and ``k`` (see docs/dolce.md)."""
    if lam == 0:
        return "I"
    if lam <= limits.lambda_p:
        return "II" if k > limits.k_p else "III"
    if lam <= limits.lambda_q:
        return "IV"
    return "V"


# What a never-solved problem's category is (``dolce fit --never-solved``): ``flag`` keeps the
# category its fitted (lambda, k) gives, as the paper does, and only marks the row
# ``solved: false``; ``ns`` gives it :data:`NOT_SOLVED` instead (ours: the answers never say
# where the answer lies).
NEVER_SOLVED_RULES = ("flag", "ns")


def problem_category(lam: int, k: int, limits: Thresholds, solved: bool, never_solved: str) -> str:
    """A problem's category under the never-solved rule ``never_solved`` ("flag" or "ns")."""
    if not solved and never_solved == "ns":
        return NOT_SOLVED
    return category(lam, k, limits)


def rule_categories(never_solved: str) -> tuple[str, ...]:
    """The categories a fit under the never-solved rule ``never_solved`` can give."""
    return CATEGORIES if never_solved == "ns" else FOCUS_CATEGORIES
