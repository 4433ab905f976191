"""Paired bootstrap comparison of two models' average LongScore over the samples both were scored on."""

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from longbench100.core.errors import UserError
from longbench100.core.lengths import canonical_label, parse_length
from longbench100.scoring.aggregates.aggregate import canonical_base_labels, task_order
from longbench100.scoring.aggregates.longscore import (
    bootstrap_means,
    draw_indices,
    percentile_interval,
    score_tasks,
)
from longbench100.scoring.samples import ScoredSample


@dataclass(frozen=True)
class Comparison:
    """Average LC of model A minus model B (percentage points) on their shared counted samples.

    ``tasks`` are the tasks both averages cover (those with a Base Ability on the shared samples);
    ``excluded_tasks`` the tasks either model was scored on that the comparison leaves out.
    """

    model_a: str
    model_b: str
    diff: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    n_shared: int
    tasks: tuple[str, ...] = ()
    excluded_tasks: tuple[str, ...] = ()

    @property
    def significant(self) -> bool:
        """True when the bootstrap interval of the difference excludes 0."""
        return self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)


def compare_avg_lc(
    model_a: str,
    samples_a: list[ScoredSample],
    model_b: str,
    samples_b: list[ScoredSample],
    base_labels: list[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> Comparison:
    """Compare two models' overall average LC with a paired bootstrap.

    Only ids counted for both models (not filtered, not ungraded) are used. Each replicate resamples
    the shared ids of every (task, length) cell once and applies the same draw to both models, then
    recomputes each model's overall average LC with the rules of :func:`aggregate` (per-task Base
    Ability over the base lengths with shared samples, overall over the tasks that have one). Both
    models therefore cover the same tasks and base lengths. The difference is null when either
    average LC is undefined on the shared ids.
    """
    counted_a, counted_b = _counted(model_a, samples_a), _counted(model_b, samples_b)
    shared = sorted(set(counted_a) & set(counted_b))
    cells: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for sample_id in shared:
        sample = counted_a[sample_id]
        cells[sample.task][canonical_label(sample.length)].append(sample_id)

    base = canonical_base_labels(base_labels)
    lengths = {label: parse_length(label) for label in base}
    lengths.update(
        {label: parse_length(label) for task_cells in cells.values() for label in task_cells}
    )
    labels = sorted(lengths, key=lengths.__getitem__)
    base_cols = [labels.index(label) for label in base]
    long_cols = [labels.index(label) for label in labels if label not in base]

    diff = np.full(n_boot + 1, np.nan)
    covered: list[str] = []
    if cells:
        matrices_a, matrices_b = {}, {}
        for task, task_cells in sorted(cells.items(), key=lambda item: task_order(item[0])):
            columns_a, columns_b = [], []
            for label in labels:
                ids = task_cells.get(label, [])
                if not ids:
                    columns_a.append(np.full(n_boot + 1, np.nan))
                    columns_b.append(np.full(n_boot + 1, np.nan))
                    continue
                indices = draw_indices(seed, task, label, len(ids), n_boot)
                columns_a.append(
                    bootstrap_means(np.array([counted_a[i].score for i in ids]), indices)
                )
                columns_b.append(
                    bootstrap_means(np.array([counted_b[i].score for i in ids]), indices)
                )
            matrices_a[task] = np.stack(columns_a, axis=1)
            matrices_b[task] = np.stack(columns_b, axis=1)
        overall_a = score_tasks(matrices_a, base_cols, long_cols)[1]
        overall_b = score_tasks(matrices_b, base_cols, long_cols)[1]
        diff = overall_a.scores.avg_lc - overall_b.scores.avg_lc
        covered = overall_a.tasks
    scored = sorted({sample.task for sample in [*samples_a, *samples_b]}, key=task_order)
    sets = {
        "tasks": tuple(covered),
        "excluded_tasks": tuple(task for task in scored if task not in covered),
    }

    if not np.isfinite(diff[0]):
        return Comparison(model_a, model_b, None, None, None, len(shared), **sets)
    interval = percentile_interval(diff)
    if interval is None:
        return Comparison(model_a, model_b, float(diff[0]), None, None, len(shared), **sets)
    replicates = diff[1:][np.isfinite(diff[1:])]
    p_value = min(1.0, 2.0 * min(np.mean(replicates <= 0), np.mean(replicates >= 0)))
    return Comparison(
        model_a, model_b, float(diff[0]), interval, float(p_value), len(shared), **sets
    )


def _counted(model: str, samples: list[ScoredSample]) -> dict[str, ScoredSample]:
    """Index a model's counted samples (not filtered, graded) by id; refuse repeated ids."""
    counted: dict[str, ScoredSample] = {}
    seen: set[str] = set()
    for sample in samples:
        if sample.id in seen:
            raise UserError(f"model {model}: sample id {sample.id} appears twice")
        seen.add(sample.id)
        if not sample.filtered and sample.score is not None:
            counted[sample.id] = sample
    return counted
