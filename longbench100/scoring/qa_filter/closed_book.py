"""Dataset-level QA filter: which QA records to drop because some filter model knows the answer closed-book.

A filter model *flags* a QA record when its closed-book answer scores at or above the threshold.
A flagged question is dropped at every length where it appears (records of one task sharing the
same ``closed_book_prompt``), so rows stay paired across lengths.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from longbench100.catalog.task_info import TASKS
from longbench100.folders.data_records import DataRecord
from longbench100.scoring.grading import GradeJob
from longbench100.scoring.predictions import Prediction


@dataclass
class FilterModel:
    """One filter model's closed-book answers and what they flagged."""

    name: str
    path: Path
    predictions: dict[str, Prediction]
    flagged: set[str] = field(default_factory=set)

    def jobs(self, qa_records: list[DataRecord], metrics: dict[str, str]) -> list[GradeJob]:
        """Grade jobs for every QA record this model answered closed-book."""
        jobs = []
        for record in qa_records:
            prediction = self.predictions.get(record.id)
            if prediction is not None and prediction.closed_book_prediction is not None:
                jobs.append(
                    GradeJob(record, metrics[record.task], prediction.closed_book_prediction)
                )
        return jobs

    def without_closed_book(self, qa_records: list[DataRecord]) -> int:
        """How many QA records have no closed-book answer from this model (missing, or null)."""
        return sum(
            self.predictions.get(record.id) is None
            or self.predictions[record.id].closed_book_prediction is None
            for record in qa_records
        )


def qa_records(records: list[DataRecord]) -> list[DataRecord]:
    """The records of tasks that carry a closed-book prompt (the QA tasks)."""
    return [record for record in records if TASKS[record.task].closed_book]


def flag(
    model: FilterModel, jobs: list[GradeJob], scores: list[float | None], threshold: float
) -> None:
    """Record in ``model.flagged`` the records whose closed-book score is at or above ``threshold``."""
    model.flagged.update(
        job.record.id
        for job, score in zip(jobs, scores)
        if score is not None and score >= threshold
    )


def drops(records: list[DataRecord], models: list[FilterModel]) -> dict[str, list[str]]:
    """Map every record to drop onto the names of the models that flagged its question (at any length)."""
    question_of = {
        record.id: (record.task, record.closed_book_prompt or record.id) for record in records
    }
    flagged_by: dict[tuple[str, str], list[str]] = defaultdict(list)
    for model in models:
        for question in dict.fromkeys(question_of[record_id] for record_id in model.flagged):
            flagged_by[question].append(model.name)
    return {
        record.id: flagged_by[question_of[record.id]]
        for record in records
        if question_of[record.id] in flagged_by
    }
