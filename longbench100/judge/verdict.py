"""What the judge made of one reply: its rubric's sub-scores, its score, or why it stays ungraded."""

from dataclasses import dataclass

from longbench100.catalog.judge_styles import QA_HELMET
from longbench100.judge.annotation_rubric import ANNOTATION_KINDS, read_annotation
from longbench100.judge.coverage_rubric import COVERAGE_METRIC, coverage_parts, coverage_score
from longbench100.judge.parse import (
    helmet_qa_parts,
    helmet_qa_score,
    key_points_parts,
    qa_parts,
    qa_score,
    recall_parts,
    section_parts,
    section_score,
    summary_parts,
    summary_score,
)
from longbench100.judge.prompts import KEY_POINT_RECALL, KEY_POINTS, SECTION_JUDGE, JudgePrompt


@dataclass(frozen=True)
class Verdict:
    """What the judge made of one prompt: the score (``None``: ungraded), the raw reply, why it is ungraded
    (``"invalid reply"``, ``"truncated reply"``, ``"request failed (HTTP 503)"``) and the rubric's sub-scores."""

    score: float | None
    reply: str | None
    reason: str | None = None
    parts: dict | None = None


def verdict_parts(prompt: JudgePrompt, reply: str) -> dict | None:
    """The sub-scores of a judge reply under the prompt's rubric, or ``None`` when it holds no valid verdict."""
    if prompt.metric == "qa_judge":
        return qa_parts(reply)
    if prompt.metric == QA_HELMET:
        return helmet_qa_parts(reply)
    if prompt.metric == KEY_POINTS:
        return key_points_parts(reply)
    if prompt.metric == KEY_POINT_RECALL:
        return recall_parts(reply, prompt.n_sentences)
    if prompt.metric == COVERAGE_METRIC:
        return coverage_parts(reply)
    if prompt.metric == SECTION_JUDGE:
        return section_parts(reply)
    if prompt.metric in ANNOTATION_KINDS:
        return read_annotation(prompt.metric, reply, prompt.reference)
    return summary_parts(reply, prompt.n_sentences)


def verdict_score(prompt: JudgePrompt, parts: dict) -> float:
    """The score of valid sub-scores (from :func:`verdict_parts`) under the prompt's rubric.

    A key-point extraction or a chunk annotation grades nothing: a valid one scores 1.
    """
    if prompt.metric == "qa_judge":
        return qa_score(parts)
    if prompt.metric == QA_HELMET:
        return helmet_qa_score(parts)
    if prompt.metric == KEY_POINTS or prompt.metric in ANNOTATION_KINDS:
        return 1.0
    if prompt.metric == KEY_POINT_RECALL:
        return parts["supported_key_points"] / parts["n_key_points"]
    if prompt.metric == COVERAGE_METRIC:
        return coverage_score(parts)
    if prompt.metric == SECTION_JUDGE:
        return section_score(parts)
    return summary_score(parts)


def judge_verdict(
    prompt: JudgePrompt, reply: str | None, failure: str | None, truncated: bool
) -> Verdict:
    """Judge one reply: a failed request, a cut-off reply or an unparsable one is ungraded, with its reason."""
    if reply is None:
        return Verdict(None, None, f"request failed ({failure or 'unknown'})")
    if (
        truncated and prompt.metric in ANNOTATION_KINDS
    ):  # an annotation keeps what a cut-off reply completed
        parts = read_annotation(prompt.metric, reply, prompt.reference, cut_off=True)
        return (
            Verdict(1.0, reply, parts=parts)
            if parts is not None
            else Verdict(None, reply, "truncated reply")
        )
    if truncated:
        return Verdict(None, reply, "truncated reply")
    parts = verdict_parts(prompt, reply)
    if parts is None:
        return Verdict(None, reply, "invalid reply")
    return Verdict(verdict_score(prompt, parts), reply, parts=parts)


def weighted_verdict(verdict: Verdict, weighted: dict | None) -> Verdict:
    """A section verdict scored from its probability-weighted ratings when the server sent logprobs, else as it is."""
    if weighted is None or verdict.parts is None:
        return verdict
    return Verdict(
        section_score(weighted),
        verdict.reply,
        verdict.reason,
        {**verdict.parts, "weighted": weighted},
    )
