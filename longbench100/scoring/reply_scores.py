"""Score replies to data records with each task's classic metric, no judge: the one path that Dolce's
probe outcomes, the lm-evaluation-harness export and the Inspect tasks share with ``score --metric classic``."""

from __future__ import annotations

from longbench100.folders.data_records import DataRecord

from .grading import GradeJob, choose_metrics, classic_grades


def classic_scores(
    records: list[DataRecord],
    replies: list[str],
    families: dict[str, str] | None = None,
    workers: int | None = None,
) -> list[float]:
    """One 0-1 score per reply, graded as ``score --metric classic`` grades it (``families``: the data's
    suite metrics, as ``score`` reads them from the manifest; ROUGE-L over at most ``workers``
    processes, default every available CPU)."""
    metrics = choose_metrics(
        sorted({record.task for record in records}), "classic", False, families=families
    )
    jobs = [
        GradeJob(record, metrics[record.task], reply) for record, reply in zip(records, replies)
    ]
    return classic_grades(jobs, workers)
