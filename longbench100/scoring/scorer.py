"""Score one model's predictions against a data folder: one :class:`ScoredSample` per data record.

Every answer (and, for QA tasks with the filter on, every closed-book answer) is graded in one
batch so judge calls share one progress bar, one cache pass and one concurrency pool. A QA sample
whose closed-book score is at or above the threshold is marked ``filtered``. Every record graded
has an answer (:mod:`.complete_rows` leaves out records without one or whose request failed, never
scoring them 0).
Each sample carries its per-sample log: the answer, the gold answers, where the gold material sits,
and for judge metrics the judge's sub-scores, or its raw reply and the reason when it is ungraded.
A task's secondary metrics (``TaskInfo.also``) grade the same answer in the same batch.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from longbench100.catalog.task_info import TASKS
from longbench100.folders.data_records import DataRecord
from longbench100.judge.grader import Judge, Verdict
from longbench100.judge.prompts import JudgePrompt
from longbench100.scoring.metrics.classic import DEFAULT_ROUGE_VARIANT
from longbench100.scoring.metrics.metric_table import JUDGE_BY_SECTION, METRICS
from longbench100.scoring.metrics.ranking import grade_levels

from .grading import (
    JUDGE_METRICS,
    GradeJob,
    grade_jobs,
    judge_prompt,
    judge_prompts,
    section_verdict,
)
from .predictions import Prediction
from .samples import ScoredSample
from .secondary import secondary_jobs, secondary_metrics


@dataclass(frozen=True)
class _Pending:
    """The jobs of one record: its answer (None: no answer, never graded), its closed-book answer, and
    the answer's secondary metrics (``TaskInfo.also``)."""

    record: DataRecord
    answer: GradeJob | None
    closed_book: GradeJob | None
    also: tuple[GradeJob, ...] = ()


@dataclass
class ScoreOutcome:
    """The scored samples plus the counts that results.json reports next to them."""

    samples: list[ScoredSample]
    qa_filter: dict = field(default_factory=dict)


def _pending(
    records: list[DataRecord],
    predictions: dict[str, Prediction],
    metrics: dict[str, str],
    qa_threshold: float | None,
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
        if (
            wants_closed
            and prediction is not None
            and prediction.closed_book_prediction is not None
        ):
            closed = GradeJob(record, metric, prediction.closed_book_prediction)
        also = tuple(secondary_jobs(record, answer.text)) if answer else ()
        pending.append(_Pending(record, answer, closed, also))
    return pending


def _jobs(pending: list[_Pending]) -> list[GradeJob]:
    """Every job of every record: answers, then closed-book answers, then secondary metrics."""
    answers = [item.answer for item in pending if item.answer]
    closed_book = [item.closed_book for item in pending if item.closed_book]
    return answers + closed_book + [job for item in pending for job in item.also]


def _secondary_scores(
    item: _Pending, grades: dict[tuple[str, str, str], float | None]
) -> dict[str, float] | None:
    """The record's secondary scores by metric name, or ``None`` when its task has none."""
    names = secondary_metrics(item.record.task)
    if not names:
        return None
    graded: dict[str, float] = {}
    for job in item.also:
        score = grades[item.record.id, job.metric, job.text]
        assert score is not None, "secondary metrics are graded without a judge, so always graded"
        graded[job.metric] = score
    return {name: graded[name] for name in names}


def _verdict(job: GradeJob | None, judge: Judge | None) -> Verdict | None:
    """The judge's verdict on a judge-metric answer, or ``None`` (no judge metric, empty answer, no answer)."""
    if job is None or judge is None or job.metric not in JUDGE_METRICS:
        return None
    if METRICS[job.metric].kind == JUDGE_BY_SECTION:
        return section_verdict(job, judge)
    prompt = judge_prompt(job)
    return None if prompt is None else judge.verdicts.get(prompt.text)


def scoring_prompts(
    records: list[DataRecord],
    predictions: dict[str, Prediction],
    metrics: dict[str, str],
    qa_threshold: float | None,
) -> list[JudgePrompt]:
    """Every judge prompt that scoring these predictions needs (duplicates included)."""
    return judge_prompts(_jobs(_pending(records, predictions, metrics, qa_threshold)))


def score_predictions(
    records: list[DataRecord],
    predictions: dict[str, Prediction],
    metrics: dict[str, str],
    qa_threshold: float | None,
    judge: Judge | None,
    *,
    progress: bool = True,
    rouge_variant: str = DEFAULT_ROUGE_VARIANT,
) -> ScoreOutcome:
    """Grade every record's prediction and build its :class:`ScoredSample`, applying the QA filter.

    Every record must have an answer in ``predictions`` (:func:`.complete_rows.select_rows`)."""
    pending = _pending(records, predictions, metrics, qa_threshold)
    jobs = _jobs(pending)
    scores = grade_jobs(jobs, judge, progress=progress, rouge_variant=rouge_variant)
    grades = {(job.record.id, job.metric, job.text): score for job, score in zip(jobs, scores)}
    outcome = ScoreOutcome(samples=[])
    cells: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for item in pending:
        record = item.record
        if item.answer is None:
            raise ValueError(f"{record.id}: no answer; a missing answer is never scored 0")
        score = grades[record.id, item.answer.metric, item.answer.text]
        closed_score = (
            grades[record.id, item.closed_book.metric, item.closed_book.text]
            if item.closed_book
            else None
        )
        filtered = (
            closed_score is not None and qa_threshold is not None and closed_score >= qa_threshold
        )
        if qa_threshold is not None and TASKS[record.task].closed_book:
            cell = cells[record.task].setdefault(
                record.label, {"n": 0, "dropped": 0, "no_closed_book": 0, "closed_book_ungraded": 0}
            )
            cell["n"] += 1
            cell["dropped"] += filtered
            cell["no_closed_book"] += item.closed_book is None
            cell["closed_book_ungraded"] += item.closed_book is not None and closed_score is None
        verdict = _verdict(item.answer, judge)
        ungraded = verdict if score is None else None  # a reply the judge gave but could not grade
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
                prediction=item.answer.text,
                answers=record.answers,
                depth=record.depth,
                source=record.source,
                parts=None
                if verdict is None or verdict.parts is None
                else {**verdict.parts, "reasoning": verdict.reply},
                judge_reply=ungraded.reply if ungraded is not None else None,
                ungraded_reason=ungraded.reason if ungraded is not None else None,
                also=_secondary_scores(item, grades),
                relevance_grades=grade_levels(record),
            )
        )
    outcome.qa_filter = {
        "threshold": qa_threshold,
        "tasks": {task: dict(labels) for task, labels in cells.items()},
    }
    return outcome
