"""Base Ability, LongScore (LC) and their bootstrap intervals, per task and overall.

:func:`aggregate` is the single source of every number that ``score`` stores and ``report`` shows;
docs/aggregates.md describes the returned dict. The numeric core (:func:`draw_indices`,
:func:`bootstrap_means`, :func:`longscore`, :func:`mean_over_tasks`) is shared with the paired
model comparison in :mod:`longbench100.scoring.compare`.

Every statistic is computed on a matrix whose row 0 is the point estimate and whose rows 1..R are
bootstrap replicates, so one vectorised formula yields both.
"""

import zlib
from dataclasses import dataclass, field

import numpy as np

from ..errors import UserError
from ..lengths import canonical_label, parse_length
from ..task_info import TASKS
from .samples import ScoredSample

MIN_BASE_ABILITY = 10.0
"""Below this Base Ability (points, 0-100) LongScore is flagged as unstable: it divides by the base."""

CI_LEVEL = 0.95
"""Coverage of the percentile bootstrap intervals."""


@dataclass
class _Cell:
    """The samples of one (task, length) cell: graded scores (0-1) and the excluded counts."""

    scores: list[float] = field(default_factory=list)
    n_filtered: int = 0
    n_ungraded: int = 0


def aggregate(samples: list[ScoredSample], base_labels: list[str], *, n_boot: int = 1000, seed: int = 0) -> dict:
    """Aggregate one model's scored samples into S_l, Base Ability, LC_l and averages, with 95% intervals.

    ``base_labels`` are the base lengths (e.g. ``["2k", "4k", "6k"]``); every other length present
    in ``samples`` is a long length. Filtered and ungraded samples are counted, never averaged.
    Intervals come from ``n_boot`` percentile-bootstrap replicates that resample the samples of each
    (task, length) cell, seeded by ``seed`` and the cell's name (0 replicates: intervals are null).
    Missing base lengths make Base Ability and LC null with a warning. Returns a JSON-serialisable
    dict whose shape docs/aggregates.md documents.
    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    if not samples:
        raise UserError("no scored samples to aggregate")
    base = canonical_base_labels(base_labels)
    cells, label_lengths = _collect(samples)
    for label in base:
        label_lengths.setdefault(label, parse_length(label))
    labels = sorted(label_lengths, key=label_lengths.__getitem__)
    long = [label for label in labels if label not in base]
    base_cols = [labels.index(label) for label in base]
    long_cols = [labels.index(label) for label in long]

    tasks = sorted(cells, key=_task_order)
    matrices = {
        task: np.stack(
            [_cell_means(cells[task].get(label), seed, task, label, n_boot) for label in labels], axis=1
        )
        for task in tasks
    }
    task_blocks = {
        task: _block(
            matrices[task], [cells[task].get(label) for label in labels], labels, label_lengths, base_cols, long_cols
        )
        for task in tasks
    }
    overall = _overall_block(matrices, cells, tasks, labels, label_lengths, base_cols, long_cols)
    return {
        "base_labels": base,
        "long_labels": long,
        "lengths": {label: label_lengths[label] for label in labels},
        "settings": {"n_boot": n_boot, "seed": seed, "ci_level": CI_LEVEL, "min_base_ability": MIN_BASE_ABILITY},
        "tasks": task_blocks,
        "overall": overall,
    }


def draw_indices(seed: int, task: str, label: str, n: int, n_boot: int) -> np.ndarray:
    """Return an ``(n_boot, n)`` array of resampling indices for one cell, reproducible from its name."""
    rng = np.random.default_rng([seed, zlib.crc32(task.encode()), zlib.crc32(label.encode())])
    return rng.integers(0, n, size=(n_boot, n))


def bootstrap_means(scores: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Return the mean score in points (0-100): row 0 for ``scores`` itself, then one per row of ``indices``."""
    return np.concatenate([[scores.mean()], scores[indices].mean(axis=1)]) * 100.0


def longscore(matrix: np.ndarray, base_cols: list[int], long_cols: list[int]) -> dict[str, np.ndarray]:
    """Compute Base Ability, LC_l (percent) and the long-length averages from an S_l matrix.

    ``matrix`` has one row per estimate (point, then replicates) and one column per length, in
    points; NaN marks a length without graded samples. Base Ability is NaN when any base column is;
    LC is NaN where Base Ability is NaN or not positive. Averages use the long columns that have a
    point estimate. Returns arrays keyed ``base``, ``lc`` (same shape as ``matrix``), ``avg_score``
    and ``avg_lc``.
    """
    base = matrix[:, base_cols].mean(axis=1) if base_cols else np.full(matrix.shape[0], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        lc = np.where(base[:, None] > 0, (matrix - base[:, None]) / base[:, None] * 100.0, np.nan)
    present = [col for col in long_cols if np.isfinite(matrix[0, col])]
    if present:
        avg_score = matrix[:, present].mean(axis=1)
        avg_lc = lc[:, present].mean(axis=1)
    else:
        avg_score = avg_lc = np.full(matrix.shape[0], np.nan)
    return {"base": base, "lc": lc, "avg_score": avg_score, "avg_lc": avg_lc}


def mean_over_tasks(matrices: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Average per-task S_l matrices over the tasks that have each length; also return that task count per column."""
    stacked = np.stack(matrices)
    present = np.isfinite(stacked[:, 0, :])
    counts = present.sum(axis=0)
    total = np.where(present[:, None, :], stacked, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, total / counts, np.nan), counts


def canonical_base_labels(base_labels: list[str]) -> list[str]:
    """Canonicalise and sort the base labels; refuse an empty list."""
    if not base_labels:
        raise UserError("no base lengths given: Base Ability needs at least one (default 2k,4k,6k)")
    budgets = sorted({parse_length(label) for label in base_labels})
    return [canonical_label(budget) for budget in budgets]


def _collect(samples: list[ScoredSample]) -> tuple[dict[str, dict[str, _Cell]], dict[str, int]]:
    """Group samples into (task, label) cells and record each label's token length."""
    cells: dict[str, dict[str, _Cell]] = {}
    lengths: dict[str, int] = {}
    for sample in samples:
        label = canonical_label(sample.length)
        lengths[label] = sample.length
        cell = cells.setdefault(sample.task, {}).setdefault(label, _Cell())
        if sample.filtered:
            cell.n_filtered += 1
        elif sample.score is None:
            cell.n_ungraded += 1
        elif 0.0 <= sample.score <= 1.0:
            cell.scores.append(float(sample.score))
        else:
            raise ValueError(f"sample {sample.id}: score {sample.score} is outside 0-1")
    return cells, lengths


def _task_order(task: str) -> tuple[int, str]:
    """Sort key: the canonical task order first, unknown task names after, alphabetically."""
    names = list(TASKS)
    return (names.index(task), "") if task in names else (len(names), task)


def _cell_means(cell: _Cell | None, seed: int, task: str, label: str, n_boot: int) -> np.ndarray:
    """Return the cell's S_l column (point, then replicates); all NaN when it has no graded samples."""
    if cell is None or not cell.scores:
        return np.full(n_boot + 1, np.nan)
    scores = np.asarray(cell.scores)
    return bootstrap_means(scores, draw_indices(seed, task, label, len(scores), n_boot))


def _value(column: np.ndarray) -> float | None:
    """The point estimate (row 0) as a float, or None when it is not finite."""
    return float(column[0]) if np.isfinite(column[0]) else None


def _interval(column: np.ndarray) -> list[float] | None:
    """Percentile interval of the replicates (rows 1..R), ignoring non-finite ones; None without any."""
    replicates = column[1:][np.isfinite(column[1:])]
    if not np.isfinite(column[0]) or replicates.size == 0:
        return None
    tail = (1.0 - CI_LEVEL) / 2.0 * 100.0
    low, high = np.percentile(replicates, [tail, 100.0 - tail])
    return [float(low), float(high)]


def _block(
    matrix: np.ndarray,
    cells: list[_Cell | None],
    labels: list[str],
    label_lengths: dict[str, int],
    base_cols: list[int],
    long_cols: list[int],
) -> dict:
    """Build one task's block: per-length entries, Base Ability, averages, counts and warnings."""
    stats = longscore(matrix, base_cols, long_cols)
    lengths = {}
    for col, (label, cell) in enumerate(zip(labels, cells)):
        cell = cell or _Cell()
        lengths[label] = {
            "length": label_lengths[label],
            "score": _value(matrix[:, col]),
            "ci": _interval(matrix[:, col]),
            "n": len(cell.scores),
            "n_filtered": cell.n_filtered,
            "n_ungraded": cell.n_ungraded,
            "lc": _value(stats["lc"][:, col]),
            "lc_ci": _interval(stats["lc"][:, col]),
        }
    block = _summary(stats, lengths)
    block["warnings"] = _warnings(block, labels, base_cols, long_cols)
    return block


def _overall_block(
    matrices: dict[str, np.ndarray],
    cells: dict[str, dict[str, _Cell]],
    tasks: list[str],
    labels: list[str],
    label_lengths: dict[str, int],
    base_cols: list[int],
    long_cols: list[int],
) -> dict:
    """Build the overall block: S_l is the mean over tasks, replicate by replicate (resampled within each task)."""
    matrix, task_counts = mean_over_tasks([matrices[task] for task in tasks])
    stats = longscore(matrix, base_cols, long_cols)
    lengths = {}
    for col, label in enumerate(labels):
        task_cells = [cells[task][label] for task in tasks if label in cells[task]]
        lengths[label] = {
            "length": label_lengths[label],
            "score": _value(matrix[:, col]),
            "ci": _interval(matrix[:, col]),
            "n": sum(len(cell.scores) for cell in task_cells),
            "n_filtered": sum(cell.n_filtered for cell in task_cells),
            "n_ungraded": sum(cell.n_ungraded for cell in task_cells),
            "n_tasks": int(task_counts[col]),
            "lc": _value(stats["lc"][:, col]),
            "lc_ci": _interval(stats["lc"][:, col]),
        }
    block = _summary(stats, lengths)
    block["tasks"] = tasks
    warnings = _warnings(block, labels, base_cols, long_cols)
    if block["n_ungraded"]:
        warnings.append(
            f"{block['n_ungraded']} ungraded samples (no score) excluded from the means (counts: n_ungraded)"
        )
    warnings += [
        f"{label}: only {entry['n_tasks']} of {len(tasks)} tasks have graded samples; "
        f"the overall S_{label} averages those"
        for label, entry in lengths.items()
        if 0 < entry["n_tasks"] < len(tasks)
    ]
    block["warnings"] = warnings
    return block


def _summary(stats: dict[str, np.ndarray], lengths: dict) -> dict:
    """The fields every block shares: per-length entries, Base Ability, averages and totals."""
    return {
        "lengths": lengths,
        "base_ability": _value(stats["base"]),
        "base_ci": _interval(stats["base"]),
        "avg_score": _value(stats["avg_score"]),
        "avg_score_ci": _interval(stats["avg_score"]),
        "avg_lc": _value(stats["avg_lc"]),
        "avg_lc_ci": _interval(stats["avg_lc"]),
        "n": sum(entry["n"] for entry in lengths.values()),
        "n_filtered": sum(entry["n_filtered"] for entry in lengths.values()),
        "n_ungraded": sum(entry["n_ungraded"] for entry in lengths.values()),
    }


def _warnings(block: dict, labels: list[str], base_cols: list[int], long_cols: list[int]) -> list[str]:
    """Explain every null and every number that should not be trusted."""
    warnings = []
    missing_base = [labels[col] for col in base_cols if block["lengths"][labels[col]]["score"] is None]
    base = block["base_ability"]
    if missing_base:
        warnings.append(
            f"no graded samples at base length {', '.join(missing_base)}: Base Ability and LongScore are null"
        )
    elif base is not None and base < MIN_BASE_ABILITY:
        warnings.append(
            f"Base Ability {base:.1f} is below {MIN_BASE_ABILITY:g} points: LongScore divides by it and is "
            "unstable at such a small base"
            + (" (LC is undefined at 0)" if base <= 0 else "")
        )
    if not long_cols:
        warnings.append("no long lengths (every length is a base length): averages are null")
    missing_long = [labels[col] for col in long_cols if block["lengths"][labels[col]]["score"] is None]
    if missing_long and len(missing_long) < len(long_cols):
        warnings.append(f"no graded samples at {', '.join(missing_long)}: left out of the averages")
    elif long_cols and missing_long:
        warnings.append("no graded samples at any long length: averages are null")
    return warnings
