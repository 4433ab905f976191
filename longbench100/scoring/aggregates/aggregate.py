"""Base Ability, LongScore (LC), their bootstrap intervals and score by depth, per task and overall.

:func:`aggregate` is the single source of every number that ``score`` stores and ``report`` shows;
docs/aggregates.md describes the returned dict and the rules. This module groups samples into
(task, length) cells, builds the JSON blocks and explains every null in warnings; the numbers come
from :mod:`longbench100.scoring.aggregates.longscore`, which the paired model comparison
(:mod:`longbench100.scoring.aggregates.compare`) shares, so both apply the same rules.
"""

from dataclasses import dataclass, field

import numpy as np

from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError
from longbench100.core.lengths import canonical_label, parse_length
from longbench100.scoring.aggregates.depth import decile_bins
from longbench100.scoring.aggregates.longscore import (
    CI_LEVEL,
    LongScores,
    OverallScores,
    bootstrap_means,
    draw_indices,
    percentile_interval,
    score_tasks,
)
from longbench100.scoring.samples import ScoredSample
from longbench100.scoring.secondary import secondary_means

MIN_BASE_ABILITY = 10.0
"""Below this Base Ability (points, 0-100) LongScore is flagged as unstable: it divides by the base."""

NO_BASE_REASON = "no graded samples at any base length, so no Base Ability"
"""Why a task is left out of the overall figures (``overall.excluded_tasks``)."""


@dataclass
class _Cell:
    """The samples of one (task, length) cell: graded scores (0-1), (depth, score) pairs and the excluded counts."""

    scores: list[float] = field(default_factory=list)
    depths: list[tuple[float, float]] = field(default_factory=list)
    n_filtered: int = 0
    n_ungraded: int = 0


def aggregate(
    samples: list[ScoredSample],
    base_labels: list[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    weights: dict[str, float] | None = None,
    unscored: dict[str, str] | None = None,
) -> dict:
    """Aggregate one model's scored samples into S_l, Base Ability, LC_l and averages, with 95% intervals.

    ``base_labels`` are the base lengths (e.g. ``["2k", "4k", "6k"]``); every other length present
    in ``samples`` is a long length. Filtered and ungraded samples are counted, never averaged; a
    (task, length) without graded samples is null, never 0. A task's Base Ability is the mean of its
    S_l over the base lengths where it has graded samples. The overall figures average the tasks
    that have a Base Ability, the same tasks at every length (:func:`.longscore.overall_longscore`). Intervals
    come from ``n_boot`` percentile-bootstrap replicates that resample the samples of each (task,
    length) cell, seeded by ``seed`` and the cell's name (0 replicates: intervals are null). The
    ``depth`` key holds score by gold-depth decile per task and length, the ``also`` key the secondary
    metrics' means per task and length (:func:`.secondary.secondary_means`). ``weights`` ({task: weight})
    weighs the tasks in the overall figures (a suite's category mean). ``unscored`` ({task: reason})
    names tasks of the data that have no samples here (``--allow-missing`` left every row out): the
    overall figures are then null, never a mean over fewer tasks than the data's, and the block
    names them in ``excluded_tasks``. Returns a JSON-serialisable
    dict whose shape docs/aggregates.md documents; warnings explain every null.
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

    tasks = sorted(cells, key=task_order)
    matrices = {
        task: np.stack(
            [_cell_means(cells[task].get(label), seed, task, label, n_boot) for label in labels],
            axis=1,
        )
        for task in tasks
    }
    task_scores, overall = score_tasks(matrices, base_cols, long_cols, {} if unscored else weights)
    layout = _Layout(labels, label_lengths, base_cols, long_cols)
    return {
        "base_labels": base,
        "long_labels": long,
        "lengths": {label: label_lengths[label] for label in labels},
        "settings": {
            "n_boot": n_boot,
            "seed": seed,
            "ci_level": CI_LEVEL,
            "min_base_ability": MIN_BASE_ABILITY,
        },
        "tasks": {
            task: _task_block(matrices[task], task_scores[task], cells[task], layout)
            for task in tasks
        },
        "overall": _overall_block(overall, cells, layout, unscored or {}),
        "depth": _depth_block(cells, tasks, labels),
        "also": secondary_means(samples),
    }


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
            if sample.depth is not None:
                if not 0.0 <= sample.depth <= 1.0:
                    raise ValueError(
                        f"sample {sample.id}: gold depth {sample.depth} is outside 0-1"
                    )
                cell.depths.append((float(sample.depth), float(sample.score)))
        else:
            raise ValueError(f"sample {sample.id}: score {sample.score} is outside 0-1")
    return cells, lengths


def task_order(task: str) -> tuple[int, str]:
    """Sort key for task names: the canonical task order first, unknown task names after, alphabetically."""
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
    """The percentile interval as a JSON list, or None."""
    interval = percentile_interval(column)
    return None if interval is None else list(interval)


@dataclass(frozen=True)
class _Layout:
    """The length columns every block shares: labels in length order, their token lengths, base and long columns."""

    labels: list[str]
    lengths: dict[str, int]
    base_cols: list[int]
    long_cols: list[int]

    def names(self, cols: list[int]) -> list[str]:
        """The labels of some columns."""
        return [self.labels[col] for col in cols]


def _length_entry(
    label: str, layout: _Layout, matrix: np.ndarray, lc: np.ndarray, cells: list[_Cell]
) -> dict:
    """One length's entry of a block: S_l and LC_l with intervals, and the counts of ``cells``."""
    col = layout.labels.index(label)
    return {
        "length": layout.lengths[label],
        "score": _value(matrix[:, col]),
        "ci": _interval(matrix[:, col]),
        "n": sum(len(cell.scores) for cell in cells),
        "n_filtered": sum(cell.n_filtered for cell in cells),
        "n_ungraded": sum(cell.n_ungraded for cell in cells),
        "lc": _value(lc[:, col]),
        "lc_ci": _interval(lc[:, col]),
    }


def _task_block(
    matrix: np.ndarray, scores: LongScores, cells: dict[str, _Cell], layout: _Layout
) -> dict:
    """Build one task's block: per-length entries, which lengths formed its base, averages, counts and warnings."""
    lengths = {
        label: _length_entry(label, layout, matrix, scores.lc, [cells.get(label, _Cell())])
        for label in layout.labels
    }
    block = _summary(scores, lengths)
    used = layout.names(scores.base_cols)
    block["base"] = {"labels": used, "n": {label: lengths[label]["n"] for label in used}}
    block["warnings"] = _task_warnings(block, layout)
    return block


def _overall_block(
    overall: OverallScores,
    cells: dict[str, dict[str, _Cell]],
    layout: _Layout,
    unscored: dict[str, str],
) -> dict:
    """Build the overall block over the fixed task set of ``overall``; counts cover those tasks
    (``unscored``: the data's tasks without samples, which make every figure null)."""
    lengths = {}
    for label in layout.labels:
        task_cells = [cells[task][label] for task in overall.tasks if label in cells[task]]
        lengths[label] = _length_entry(label, layout, overall.matrix, overall.scores.lc, task_cells)
        lengths[label]["n_tasks"] = sum(bool(cell.scores) for cell in task_cells)
    block = _summary(overall.scores, lengths)
    block["tasks"] = overall.tasks
    block["excluded_tasks"] = {task: NO_BASE_REASON for task in overall.excluded} | unscored
    block["warnings"] = (
        _unscored_warnings(unscored) if unscored else _overall_warnings(block, cells, layout)
    )
    return block


def _summary(scores: LongScores, lengths: dict) -> dict:
    """The fields every block shares: per-length entries, Base Ability, averages and totals."""
    return {
        "lengths": lengths,
        "base_ability": _value(scores.base),
        "base_ci": _interval(scores.base),
        "avg_score": _value(scores.avg_score),
        "avg_score_ci": _interval(scores.avg_score),
        "avg_lc": _value(scores.avg_lc),
        "avg_lc_ci": _interval(scores.avg_lc),
        "n": sum(entry["n"] for entry in lengths.values()),
        "n_filtered": sum(entry["n_filtered"] for entry in lengths.values()),
        "n_ungraded": sum(entry["n_ungraded"] for entry in lengths.values()),
    }


def _depth_block(cells: dict[str, dict[str, _Cell]], tasks: list[str], labels: list[str]) -> dict:
    """Score by gold-depth decile for every (task, length) with graded samples that carry a depth."""
    depth: dict[str, dict[str, list[dict]]] = {}
    for task in tasks:
        by_label = {
            label: decile_bins(cells[task][label].depths)
            for label in labels
            if label in cells[task] and cells[task][label].depths
        }
        if by_label:
            depth[task] = by_label
    return depth


def _task_warnings(block: dict, layout: _Layout) -> list[str]:
    """Explain every null of a task block and every number that should not be trusted."""
    base_names = layout.names(layout.base_cols)
    graded = [label for label in layout.labels if block["lengths"][label]["score"] is not None]
    used = block["base"]["labels"]
    if not graded:
        return ["no graded samples at any length: every figure is null"]
    warnings = []
    if not used:
        suggestion = graded[: min(len(base_names), max(1, len(graded) - 1))]
        warnings.append(
            f"no graded samples at any base length ({', '.join(base_names)}): Base Ability and LongScore are null "
            f"and the task is left out of the overall figures; fix: score with --base-lengths {','.join(suggestion)} "
            f"or generate a length of at most {base_names[-1]} for it"
        )
    elif len(used) < len(base_names):
        missing = [label for label in base_names if label not in used]
        warnings.append(
            f"Base Ability is the mean over {', '.join(used)} only: no graded samples at base length "
            f"{', '.join(missing)}"
        )
    warnings += _base_and_long_warnings(block, layout)
    missing_long = [
        label
        for label in layout.names(layout.long_cols)
        if block["lengths"][label]["score"] is None
    ]
    if missing_long and len(missing_long) < len(layout.long_cols):
        warnings.append(f"no graded samples at {', '.join(missing_long)}: left out of the averages")
    elif missing_long:
        warnings.append("no graded samples at any long length: averages are null")
    return warnings


def _unscored_warnings(unscored: dict[str, str]) -> list[str]:
    """Why every overall figure is null when some of the data's tasks have no scored rows."""
    tasks = ", ".join(unscored)
    return [
        f"every overall figure is null: {tasks} {'has' if len(unscored) == 1 else 'have'} no "
        "scored rows, so an overall would cover fewer tasks than the data's (score --tasks "
        "chooses the tasks an overall covers)"
    ]


def _overall_warnings(
    block: dict, cells: dict[str, dict[str, _Cell]], layout: _Layout
) -> list[str]:
    """Explain which tasks the overall figures cover, every overall null and every untrustworthy number."""
    tasks = block["tasks"]
    if not tasks:
        return ["no task has a Base Ability: every overall figure is null (see the task warnings)"]
    warnings = []
    if block["excluded_tasks"]:
        warnings.append(
            f"covers {len(tasks)} of {len(tasks) + len(block['excluded_tasks'])} scored tasks: "
            f"{', '.join(block['excluded_tasks'])} left out ({NO_BASE_REASON})"
        )
    long_names = layout.names(layout.long_cols)
    for label in layout.labels:
        lacking = [
            task for task in tasks if not (label in cells[task] and cells[task][label].scores)
        ]
        if lacking:
            effect = "; left out of the averages" if label in long_names else ""
            warnings.append(
                f"S_{label} is null: {', '.join(lacking)} {'has' if len(lacking) == 1 else 'have'} no graded "
                f"samples at {label} (the overall averages the same {len(tasks)} tasks at every length){effect}"
            )
    warnings += _base_and_long_warnings(block, layout)
    if long_names and all(block["lengths"][label]["score"] is None for label in long_names):
        warnings.append("no overall S_l at any long length: averages are null")
    ungraded = sum(cell.n_ungraded for task_cells in cells.values() for cell in task_cells.values())
    if ungraded:
        warnings.append(
            f"{ungraded} ungraded samples (no score) excluded from the means (counts: n_ungraded)"
        )
    return warnings


def _base_and_long_warnings(block: dict, layout: _Layout) -> list[str]:
    """The warnings tasks and overall share: a small or zero Base Ability, and no long lengths at all."""
    warnings = []
    base = block["base_ability"]
    if base is not None and base < MIN_BASE_ABILITY:
        warnings.append(
            f"Base Ability {base:.1f} is below {MIN_BASE_ABILITY:g} points: LongScore divides by it and is "
            "unstable at such a small base" + (" (LC is undefined at 0)" if base <= 0 else "")
        )
    if not layout.long_cols:
        warnings.append("no long lengths (every length is a base length): averages are null")
    return warnings
