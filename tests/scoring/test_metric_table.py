"""The metric table (scoring/metrics/metric_table.py) and the rubric registry (judge/prompts.py)."""

from __future__ import annotations

import pytest

from longbench100.catalog.judge_styles import HELMET_METRICS
from longbench100.catalog.suites import ALTERNATIVE_METRICS
from longbench100.catalog.task_info import TASKS
from longbench100.judge.prompts import (
    RUBRICS,
    helmet_summary_prompt,
    qa_prompt,
    summary_prompt,
)
from longbench100.scoring.grading import choose_metrics
from longbench100.scoring.metrics.metric_table import (
    CLASSIC,
    JUDGE,
    JUDGE_BY_SECTION,
    METRICS,
    ROUGE,
    metric_info,
)

QUESTION = "Who wrote the letter?"
ANSWERS = ["Ada Lovelace", "Lovelace"]
REPLY = "The letter was written by Ada Lovelace. She sent it in 1843."


def test_every_metric_a_task_or_suite_can_name_is_in_the_table() -> None:
    named = {info.metric for info in TASKS.values()}
    named |= {name for info in TASKS.values() for name in info.also}
    assert named | set(ALTERNATIVE_METRICS) <= set(METRICS)
    assert set(HELMET_METRICS.values()) <= set(METRICS)


def test_each_kind_has_what_its_grading_needs() -> None:
    """Classic rows carry their function, the others none; only judge families fall back, to a
    metric graded without the judge; exact-answer metrics are classic ones."""
    for name, metric in METRICS.items():
        assert metric.kind in (CLASSIC, ROUGE, JUDGE, JUDGE_BY_SECTION), name
        assert (metric.grade is not None) == (metric.kind == CLASSIC), name
        if metric.fallback is not None:
            assert metric.judged and not METRICS[metric.fallback].judged, name
        if metric.exact_answer:
            assert metric.kind == CLASSIC, name


def test_the_needle_tasks_of_the_suites_are_exact_answer_tasks() -> None:
    """The report draws these as needle heatmaps; a judged or prose task never is one."""
    exact = {task for task, info in TASKS.items() if METRICS[info.metric].exact_answer}
    assert {"kv_retrieval", "counting_stars", "niah_single_1"} <= exact
    assert not {"single_doc_qa", "multi_doc_sum"} & exact


def test_the_rubric_registry_covers_exactly_the_whole_reply_judge_metrics() -> None:
    assert set(RUBRICS) == {name for name, metric in METRICS.items() if metric.kind == JUDGE}


@pytest.mark.parametrize(
    ("metric", "direct"),
    [
        ("qa_judge", lambda: qa_prompt(QUESTION, ANSWERS, REPLY)),
        ("qa_judge_helmet", lambda: qa_prompt(QUESTION, ANSWERS, REPLY, "qa_judge_helmet")),
        ("summary_judge", lambda: summary_prompt(QUESTION, ANSWERS[0], REPLY)),
        ("summary_judge_helmet", lambda: helmet_summary_prompt(QUESTION, ANSWERS[0], REPLY)),
    ],
)
def test_a_registered_rubric_renders_the_prompt_its_builder_renders(metric, direct) -> None:
    """The registry only routes: the prompt is the builder's own, under the metric's rubric name."""
    prompt = RUBRICS[metric].prompt(QUESTION, ANSWERS, REPLY)
    assert prompt == direct() and prompt is not None and prompt.metric == metric


def test_an_empty_reply_has_no_prompt_under_any_rubric() -> None:
    assert all(rubric.prompt(QUESTION, ANSWERS, "  ") is None for rubric in RUBRICS.values())


def test_without_a_judge_each_family_takes_its_fallback_and_with_one_its_style() -> None:
    families = {name: name for name, metric in METRICS.items() if metric.fallback is not None}
    tasks = [
        next(task for task, info in TASKS.items() if info.metric == family) for family in families
    ]
    classic = choose_metrics(tasks, "auto", False)
    judged = choose_metrics(tasks, "auto", True, judge_style="helmet")
    for task in tasks:
        family = TASKS[task].metric
        assert classic[task] == METRICS[family].fallback
        assert judged[task] == HELMET_METRICS.get(family, family)


def test_an_unknown_metric_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown metric 'bleu'"):
        metric_info("bleu")
