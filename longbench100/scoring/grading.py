"""Choose the metric of each task and grade answers with it (accuracy, classic or LLM judge)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from longbench100.catalog.judge_styles import DEFAULT_JUDGE_STYLE, style_metric
from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.judge.prompts import RUBRICS, JudgePrompt, section_prompt
from longbench100.judge.verdict import Verdict
from longbench100.scoring.metrics.classic import DEFAULT_ROUGE_VARIANT, rouge_l_many
from longbench100.scoring.metrics.metric_table import (
    CLASSIC,
    JUDGE_BY_SECTION,
    METRICS,
    ROUGE,
    metric_info,
)
from longbench100.scoring.metrics.sections import parse_sections

from .choices import METRIC_MODES

if TYPE_CHECKING:  # the judge's client machinery loads only where a judge grades
    from longbench100.judge.grader import Judge

JUDGE_METRICS = frozenset(name for name, metric in METRICS.items() if metric.judged)
"""The metrics that need the judge (read from the metric table)."""


def choose_metrics(
    tasks: list[str],
    mode: str,
    judge_configured: bool,
    families: dict[str, str] | None = None,
    judge_style: str = DEFAULT_JUDGE_STYLE,
) -> dict[str, str]:
    """Map each task to the metric that grades it.

    Accuracy tasks always use ``accuracy``, the recall tasks ``string_match_all`` / ``substring_match``. Judge tasks (SPEC.md: LLM judge) use ``qa_judge`` /
    ``summary_judge`` in mode ``judge``, and in mode ``auto`` when a judge is configured; otherwise
    their classic fallback in the metric table (``qa_f1`` / ``rouge_l``). Mode ``judge`` without a
    judge model is an error. ``families`` (the data's suite metrics) overrides a task's own metric family. With ``judge_style`` ``helmet``
    the judge tasks use HELMET's rubrics (``qa_judge_helmet`` / ``summary_judge_helmet``).
    """
    if mode not in METRIC_MODES:
        raise UserError(f"--metric {mode}: choose from {', '.join(METRIC_MODES)}")
    if mode == "judge" and not judge_configured:
        raise UserError(
            "--metric judge needs --judge-model (and --judge-base-url for a non-OpenAI server)"
        )
    use_judge = mode == "judge" or (mode == "auto" and judge_configured)
    chosen = {}
    for task in tasks:
        family = (families or {}).get(task, TASKS[task].metric)
        fallback = METRICS[family].fallback if family in METRICS else None
        if fallback is not None:
            chosen[task] = style_metric(family, judge_style) if use_judge else fallback
        else:
            chosen[task] = family
    return chosen


@dataclass(frozen=True)
class GradeJob:
    """One answer to grade: the data record, the metric, and the answer text."""

    record: DataRecord
    metric: str
    text: str


def section_prompts(job: GradeJob) -> list[JudgePrompt | None]:
    """One ``section_judge`` prompt per section of the record (its text and the reply's summary of it), ``None``
    for a section the reply does not summarise (it scores 0)."""
    sections = job.record.sections
    if sections is None:
        raise UserError(
            f"record {job.record.id} ({job.record.task}): its gold has no section spans, so the judge cannot grade it "
            "section by section (score it with --metric classic)"
        )
    summaries = parse_sections(job.text)
    return [
        section_prompt(section, summaries[number]) if summaries.get(number) else None
        for number, section in enumerate(sections, 1)
    ]


def section_verdict(job: GradeJob, judge: Judge) -> Verdict:
    """The sample's verdict from its sections' verdicts: the mean score (a missing summary 0), ungraded when any
    section is; ``parts`` holds each section's sub-scores (``None`` for a missing summary)."""
    verdicts = [
        None if prompt is None else judge.verdicts[prompt.text] for prompt in section_prompts(job)
    ]
    ungraded = [
        verdict.reason for verdict in verdicts if verdict is not None and verdict.score is None
    ]
    if ungraded or not verdicts:
        return Verdict(
            None, None, f"a section ungraded ({ungraded[0]})" if ungraded else "no section to grade"
        )
    scores = [
        verdict.score for verdict in verdicts if verdict is not None and verdict.score is not None
    ]
    score = sum(scores) / len(verdicts)  # a missing summary adds 0
    return Verdict(
        score,
        None,
        parts={"sections": [None if verdict is None else verdict.parts for verdict in verdicts]},
    )


def judge_prompt(job: GradeJob) -> JudgePrompt | None:
    """The judge prompt for a judge-metric job from its metric's rubric, or ``None`` when the answer
    is empty (scored 0) or is graded section by section (:func:`section_prompts`)."""
    rubric = RUBRICS.get(job.metric)
    if rubric is None:
        return None
    return rubric.prompt(job.record.question, list(job.record.answers), job.text)


def judge_prompts(jobs: list[GradeJob]) -> list[JudgePrompt]:
    """All judge prompts that grading ``jobs`` needs (duplicates included; the judge sends each once)."""
    prompts: list[JudgePrompt | None] = []
    for job in jobs:
        metric = metric_info(job.metric)
        if metric.kind == JUDGE_BY_SECTION:
            prompts += section_prompts(job)
        elif metric.judged:
            prompts.append(judge_prompt(job))
    return [prompt for prompt in prompts if prompt is not None]


def classic_grades(jobs: list[GradeJob], workers: int | None = None) -> list[float]:
    """Grade jobs of classic (no-judge) metrics, in order, quietly: each one a 0-1 float score
    (ROUGE-L over at most ``workers`` processes, see :func:`grade_jobs`)."""
    scores = grade_jobs(jobs, None, progress=False, rouge_workers=workers)
    graded = [float(score) for score in scores if score is not None]
    assert len(graded) == len(scores), "only a judge leaves a job ungraded"
    return graded


def grade_jobs(
    jobs: list[GradeJob],
    judge: Judge | None,
    *,
    progress: bool = True,
    rouge_variant: str = DEFAULT_ROUGE_VARIANT,
    rouge_workers: int | None = None,
) -> list[float | None]:
    """Grade every job, in order: 0-1 scores, ``None`` where the judge could not grade.

    ROUGE-L jobs (of ``rouge_variant``, see ``classic.ROUGE_VARIANTS``) run as one batch (on
    several processes when there are many: at most ``rouge_workers``, default every available
    CPU); judge prompts are
    sent as one batch (deduplicated, cached); empty answers to the judge score 0 without a call.
    """
    scores: list[float | None] = [None] * len(jobs)
    rouge: list[int] = []
    pending: list[tuple[int | None, JudgePrompt]] = []  # None: one section of a section_judge job
    sectioned: list[int] = []
    for index, job in enumerate(jobs):
        metric = metric_info(job.metric)
        if metric.kind == CLASSIC:
            scores[index] = metric.score(job.text, job.record)
        elif metric.kind == ROUGE:
            rouge.append(index)
        elif metric.kind == JUDGE_BY_SECTION:
            sectioned.append(index)
            pending += [(None, prompt) for prompt in section_prompts(job) if prompt is not None]
        else:
            prompt = judge_prompt(job)
            if prompt is None:
                scores[index] = 0.0
            else:
                pending.append((index, prompt))
    rouge_pairs = [(jobs[i].text, list(jobs[i].record.answers)) for i in rouge]
    for index, score in zip(rouge, rouge_l_many(rouge_pairs, rouge_variant, workers=rouge_workers)):
        scores[index] = score
    if pending:
        if judge is None:
            raise ValueError("judge metrics need a Judge")
        judged_scores = judge.grade([prompt for _, prompt in pending], progress=progress)
        for (pending_index, _), judged in zip(pending, judged_scores):
            if pending_index is not None:
                scores[pending_index] = judged
    for index in sectioned:
        scores[index] = section_verdict(jobs[index], judge).score if judge is not None else None
    return scores
