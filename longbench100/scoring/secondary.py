"""Secondary metrics: the metrics a task grades next to its main one (``TaskInfo.also``).

A secondary metric is graded for every sample with the same machinery as the main metric (no judge:
only metrics ``grade_jobs`` grades on its own), stored per sample (``ScoredSample.also``) and averaged
per task and length (``aggregates["also"]``). It is shown beside the main score and never enters S_l,
Base Ability or LongScore.
"""

from longbench100.catalog.task_info import TASKS
from longbench100.folders.data_records import DataRecord
from longbench100.scoring.metrics.metric_table import METRICS

from .grading import GradeJob
from .samples import ScoredSample


def secondary_metrics(task: str) -> tuple[str, ...]:
    """The secondary metric names of ``task`` (``TaskInfo.also``); a name that is not a metric graded without a
    judge is a ``ValueError`` (a mistake in the task table, not in the user's input)."""
    names = TASKS[task].also
    unknown = [name for name in names if name not in METRICS or METRICS[name].judged]
    if unknown:
        known = sorted(name for name, metric in METRICS.items() if not metric.judged)
        raise ValueError(
            f"task {task}: secondary metric {unknown[0]!r} is not one of {', '.join(known)}"
        )
    return names


def secondary_jobs(record: DataRecord, text: str) -> list[GradeJob]:
    """One job per secondary metric of the record's task, grading the answer ``text``."""
    return [GradeJob(record, name, text) for name in secondary_metrics(record.task)]


def secondary_means(samples: list[ScoredSample]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Task -> length label -> metric -> mean score in points (0-100) over the samples the QA filter kept;
    only tasks whose samples carry secondary scores appear (null where every sample was filtered)."""
    cells: dict[str, dict[str, dict[str, list[float]]]] = {}
    for sample in samples:
        if sample.also is None:
            continue
        cell = cells.setdefault(sample.task, {}).setdefault(
            sample.label, {name: [] for name in sample.also}
        )
        if not sample.filtered:
            for name, score in sample.also.items():
                cell.setdefault(name, []).append(score)
    return {
        task: {
            label: {
                name: 100 * sum(scores) / len(scores) if scores else None
                for name, scores in by_name.items()
            }
            for label, by_name in by_label.items()
        }
        for task, by_label in cells.items()
    }
