"""Score one model's predictions against a data folder: one :class:`ScoredSample` per data record.

Every answer (and, for QA tasks with the filter on, every closed-book answer) is graded in one
batch so judge calls share one progress bar, one cache pass and one concurrency pool. A QA sample
whose closed-book score is at or above the threshold is marked ``filtered``. A missing prediction
(only with ``--allow-missing``) or a failed one (``prediction`` null) scores 0 and is counted.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from ..task_info import TASKS
from .data import DataRecord
from .grading import GradeJob, grade_jobs, judge_prompts
from .judge import Judge, JudgePlan
from .predictions import Prediction
from .samples import ScoredSample


@dataclass(frozen=True)
class _Pending:
    """The jobs of one record: its answer (None: no answer, scores 0) and its closed-book answer."""

    record: DataRecord
    answer: GradeJob | None
    closed_book: GradeJob | None


@dataclass
class ScoreOutcome:
    """The scored samples plus the counts that results.json reports next to them."""

    samples: list[ScoredSample]
    missing_predictions: int = 0
    failed_predictions: int = 0
    qa_filter: dict = field(default_factory=dict)


def _pending(
    records: list[DataRecord], predictions: dict[str, Prediction], metrics: dict[str, str], qa_threshold: float | None
) -> list[_Pending]:
    """Pair every record with the jobs that grade it."""
    pending = []
    for record in records:
        metric = metrics[record.task]
        prediction = predictions.get(record.id)
        answer = closed = None
        if prediction is not None and prediction.prediction is not None:
            answer = GradeJob(record, metric, prediction.prediction)
        wants_closed = qa_threshold is not None and TASKS[record.task].closed_book
        if wants_closed and prediction is not None and prediction.closed_book_prediction is not None:
            closed = GradeJob(record, metric, prediction.closed_book_prediction)
        pending.append(_Pending(record, answer, closed))
    return pending


def _jobs(pending: list[_Pending]) -> list[GradeJob]:
    """Every job of every record, answers first then closed-book answers."""
    return [item.answer for item in pending if item.answer] + [item.closed_book for item in pending if item.closed_book]


def plan_judging(
    records: list[DataRecord],
    predictions: dict[str, Prediction],
    metrics: dict[str, str],
    qa_threshold: float | None,
    judge: Judge,
) -> JudgePlan:
    """What scoring would ask of the judge (calls after cache hits, prompt tokens), without asking."""
    return judge.plan(judge_prompts(_jobs(_pending(records, predictions, metrics, qa_threshold))))


def score_predictions(
    records: list[DataRecord],
    predictions: dict[str, Prediction],
    metrics: dict[str, str],
    qa_threshold: float | None,
    judge: Judge | None,
    *,
    progress: bool = True,
) -> ScoreOutcome:
    """Grade every record's prediction and build its :class:`ScoredSample`, applying the QA filter."""
    pending = _pending(records, predictions, metrics, qa_threshold)
    jobs = _jobs(pending)
    grades = {(job.record.id, job.text): score for job, score in zip(jobs, grade_jobs(jobs, judge, progress=progress))}
    outcome = ScoreOutcome(samples=[])
    cells: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for item in pending:
        record = item.record
        if record.id not in predictions:
            outcome.missing_predictions += 1
        elif item.answer is None:
            outcome.failed_predictions += 1
        score = grades[record.id, item.answer.text] if item.answer else 0.0
        closed_score = grades[record.id, item.closed_book.text] if item.closed_book else None
        filtered = closed_score is not None and closed_score >= qa_threshold
        if qa_threshold is not None and TASKS[record.task].closed_book:
            cell = cells[record.task].setdefault(
                record.label, {"n": 0, "dropped": 0, "no_closed_book": 0, "closed_book_ungraded": 0}
            )
            cell["n"] += 1
            cell["dropped"] += filtered
            cell["no_closed_book"] += item.closed_book is None
            cell["closed_book_ungraded"] += item.closed_book is not None and closed_score is None
        outcome.samples.append(
            ScoredSample(
                id=record.id,
                task=record.task,
                label=record.label,
                length=record.length,
                row=record.row,
                score=score,
                filtered=filtered,
                closed_book_score=closed_score,
                metric=metrics[record.task],
            )
        )
    outcome.qa_filter = {"threshold": qa_threshold, "tasks": {task: dict(labels) for task, labels in cells.items()}}
    return outcome
