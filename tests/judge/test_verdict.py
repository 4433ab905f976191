"""How a judge reply becomes a verdict: each prompt's reader comes from the rubric registry, so the
same reply reads differently under different rubrics, and an unregistered rubric is no silent
summary."""

import pytest

from longbench100.catalog.judge_styles import QA_HELMET, SUMMARY_HELMET
from longbench100.judge.annotation_rubric import ANNOTATION_KINDS, SUMMARY
from longbench100.judge.coverage_rubric import COVERAGE_METRIC
from longbench100.judge.prompts import (
    KEY_POINT_RECALL,
    KEY_POINTS,
    RUBRICS,
    SECTION_JUDGE,
    JudgePrompt,
    reply_reader,
)
from longbench100.judge.verdict import judge_verdict, verdict_parts

EVERY_CALL_METRIC = [
    *RUBRICS,
    KEY_POINTS,
    KEY_POINT_RECALL,
    SECTION_JUDGE,
    COVERAGE_METRIC,
    *sorted(ANNOTATION_KINDS),
]


@pytest.mark.parametrize("metric", EVERY_CALL_METRIC)
def test_every_call_the_judge_makes_has_a_reader(metric: str) -> None:
    reader = reply_reader(JudgePrompt(metric, "prompt"))
    assert callable(reader.parts) and callable(reader.score)


def test_an_unregistered_rubric_is_an_error_not_a_summary_verdict() -> None:
    with pytest.raises(KeyError):
        verdict_parts(JudgePrompt("made_up_judge", "prompt"), '{"fluency": 1}')


@pytest.mark.parametrize(
    ("metric", "reply", "score"),
    [
        ("qa_judge", '{"fluency": 2, "correctness": 3}', 1.0),
        ("qa_judge", '{"fluency": 1, "correctness": 3}', 0.5),
        (QA_HELMET, '{"fluency": 1, "correctness": 2}', 2 / 3),
        (SECTION_JUDGE, '{"consistency": 5, "relevance": 3, "faithfulness": 1}', 0.5),
        (KEY_POINT_RECALL, '{"supported": [1, 3]}', 0.5),
        (KEY_POINTS, '{"key_points": ["one", "two"]}', 1.0),
    ],
)
def test_a_reply_is_scored_by_its_own_rubric(metric: str, reply: str, score: float) -> None:
    verdict = judge_verdict(JudgePrompt(metric, "prompt", n_sentences=4), reply, None, False)
    assert verdict.reason is None and verdict.score == pytest.approx(score)


def test_the_same_reply_is_valid_under_one_rubric_and_invalid_under_another() -> None:
    reply = '{"fluency": 2, "correctness": 3}'
    assert judge_verdict(JudgePrompt("qa_judge", "p"), reply, None, False).score == 1.0
    helmet = judge_verdict(JudgePrompt(QA_HELMET, "p"), reply, None, False)
    assert helmet.score is None and helmet.reason == "invalid reply"  # HELMET's fluency is 0/1


def test_a_helmet_summary_reads_its_reply_as_its_precision_call_does() -> None:
    reply = '{"fluency": 1, "supported": [1, 2]}'
    whole = verdict_parts(JudgePrompt(SUMMARY_HELMET, "p", n_sentences=2), reply)
    assert whole is not None
    assert whole == verdict_parts(JudgePrompt("summary_judge", "p", n_sentences=2), reply)


def test_a_cut_off_reply_is_ungraded_unless_its_rubric_keeps_what_it_completed() -> None:
    qa = judge_verdict(JudgePrompt("qa_judge", "p"), '{"fluency": 2, "correctness": 3}', None, True)
    assert qa.score is None and qa.reason == "truncated reply"
    chunk = "A long chunk of text."
    summary = JudgePrompt(SUMMARY, "p", reference=chunk)
    kept = judge_verdict(summary, "The hero leaves home. He finds a cave and", None, True)
    assert kept.score == 1.0 and kept.parts == {"summary": "The hero leaves home."}
    lost = judge_verdict(summary, "The hero leaves home and", None, True)
    assert lost.score is None and lost.reason == "truncated reply"


def test_a_failed_request_names_its_failure() -> None:
    verdict = judge_verdict(JudgePrompt("qa_judge", "p"), None, "HTTP 503", False)
    assert verdict.score is None and verdict.reason == "request failed (HTTP 503)"
