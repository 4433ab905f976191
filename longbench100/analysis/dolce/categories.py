"""The category rule I-V and the thresholds it reads from a problem's window grid."""

from __future__ import annotations

from dataclasses import dataclass

NOT_SOLVED = "NS"  # the model never answered right, whole context included: no focus can be read
CATEGORIES = ("I", "II", "III", "IV", "V", NOT_SOLVED)
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

    A problem its model never solves, whatever the window (the whole context included), says nothing
    about where its answer lies, so it gets the category :data:`NOT_SOLVED` instead of I-V.
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
