"""The numeric core of Base Ability and LongScore, shared by :func:`~.aggregate.aggregate` and :mod:`.compare`.

Every function works on S_l matrices whose row 0 is the point estimate and whose rows 1..R are
bootstrap replicates, one column per length, in points (0-100); NaN marks a length without graded
samples. Which base lengths form a task's Base Ability and which tasks form the overall figures is
decided on row 0 and applied to every replicate, so intervals describe the same quantity as the point.
"""

import zlib
from dataclasses import dataclass

import numpy as np

CI_LEVEL = 0.95
"""Coverage of the percentile bootstrap intervals."""


@dataclass(frozen=True)
class LongScores:
    """Base Ability, LC_l and the long-length averages of one S_l matrix.

    ``base``, ``avg_score`` and ``avg_lc`` hold one value per row, ``lc`` has the matrix's shape; NaN
    marks an undefined value. ``base_cols`` are the columns whose mean is a task's Base Ability
    (empty for the overall figures, whose base is the mean of the tasks' own).
    """

    base: np.ndarray
    base_cols: list[int]
    lc: np.ndarray
    avg_score: np.ndarray
    avg_lc: np.ndarray


@dataclass(frozen=True)
class OverallScores:
    """The overall S_l matrix and its LongScores over one fixed task set, and the tasks left out of it."""

    tasks: list[str]
    excluded: list[str]
    matrix: np.ndarray
    scores: LongScores


def draw_indices(seed: int, task: str, label: str, n: int, n_boot: int) -> np.ndarray:
    """Return an ``(n_boot, n)`` array of resampling indices for one cell, reproducible from its name."""
    rng = np.random.default_rng([seed, zlib.crc32(task.encode()), zlib.crc32(label.encode())])
    return rng.integers(0, n, size=(n_boot, n))


def bootstrap_means(scores: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Return the mean score in points (0-100): row 0 for ``scores`` itself, then one per row of ``indices``."""
    return np.concatenate([[scores.mean()], scores[indices].mean(axis=1)]) * 100.0


def percentile_interval(column: np.ndarray) -> tuple[float, float] | None:
    """The ``CI_LEVEL`` percentile interval of the finite replicates (rows 1..R); None without a point or any."""
    replicates = column[1:][np.isfinite(column[1:])]
    if not np.isfinite(column[0]) or replicates.size == 0:
        return None
    tail = (1.0 - CI_LEVEL) / 2.0 * 100.0
    low, high = np.percentile(replicates, [tail, 100.0 - tail])
    return float(low), float(high)


def task_longscore(matrix: np.ndarray, base_cols: list[int], long_cols: list[int]) -> LongScores:
    """One task's LongScores: its Base Ability is the mean of S_l over the base columns it has.

    A base column counts when its point estimate exists; every replicate averages the same columns.
    Without any, the base and every LC are NaN.
    """
    used = [col for col in base_cols if np.isfinite(matrix[0, col])]
    base = matrix[:, used].mean(axis=1) if used else np.full(matrix.shape[0], np.nan)
    return longscore(matrix, base, used, long_cols)


def longscore(
    matrix: np.ndarray, base: np.ndarray, base_cols: list[int], long_cols: list[int]
) -> LongScores:
    """Compute LC_l (percent) and the long-length averages of an S_l matrix from its Base Ability per row.

    LC is NaN where the base is NaN or not positive. Averages use the long columns that have a
    point estimate.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        lc = np.where(base[:, None] > 0, (matrix - base[:, None]) / base[:, None] * 100.0, np.nan)
    present = [col for col in long_cols if np.isfinite(matrix[0, col])]
    if present:
        avg_score = matrix[:, present].mean(axis=1)
        avg_lc = lc[:, present].mean(axis=1)
    else:
        avg_score = avg_lc = np.full(matrix.shape[0], np.nan)
    return LongScores(base, base_cols, lc, avg_score, avg_lc)


def overall_longscore(
    matrices: dict[str, np.ndarray],
    task_scores: dict[str, LongScores],
    long_cols: list[int],
    weights: dict[str, float] | None = None,
) -> OverallScores:
    """Compute the overall figures over one fixed task set: the tasks with a Base Ability.

    Overall S_l is the mean of those tasks' S_l, and NaN at a length where any of them has no graded
    samples (never a mean over fewer tasks). The overall Base Ability is the mean of their own Base
    Abilities; LC_l and the averages follow from these as for a task, which is the paper's recipe
    when every task has every base length. Tasks without a Base Ability are returned in ``excluded``.
    ``weights`` ({task: weight}) makes the means weighted (HELMET's category mean: each category's
    tasks share one category's weight); tasks it does not name weigh 0.
    """
    tasks = [task for task in matrices if np.isfinite(task_scores[task].base[0])]
    excluded = [task for task in matrices if task not in tasks]
    if weights is not None:
        tasks = [task for task in tasks if weights.get(task, 0) > 0]
    if tasks:
        shares = None if weights is None else [weights[task] for task in tasks]
        matrix = np.average(np.stack([matrices[task] for task in tasks]), axis=0, weights=shares)
        base = np.average(
            np.stack([task_scores[task].base for task in tasks]), axis=0, weights=shares
        )
    else:
        shape = next(iter(matrices.values())).shape
        matrix, base = np.full(shape, np.nan), np.full(shape[0], np.nan)
    return OverallScores(tasks, excluded, matrix, longscore(matrix, base, [], long_cols))


def score_tasks(
    matrices: dict[str, np.ndarray],
    base_cols: list[int],
    long_cols: list[int],
    weights: dict[str, float] | None = None,
) -> tuple[dict[str, LongScores], OverallScores]:
    """Per-task LongScores of every task's S_l matrix and the overall figures built from them (weighted by ``weights``)."""
    task_scores = {
        task: task_longscore(matrix, base_cols, long_cols) for task, matrix in matrices.items()
    }
    return task_scores, overall_longscore(matrices, task_scores, long_cols, weights)
