"""What the judge made of one reply: its rubric's sub-scores, its score, or why it stays ungraded."""

from dataclasses import dataclass

from longbench100.judge.parse import section_score
from longbench100.judge.prompts import JudgePrompt, reply_reader


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
    return reply_reader(prompt).parts(prompt, reply)


def judge_verdict(
    prompt: JudgePrompt, reply: str | None, failure: str | None, truncated: bool
) -> Verdict:
    """Judge one reply: a failed request, a cut-off reply (unless its rubric reads what it
    completed) or an unparsable one is ungraded, with its reason."""
    if reply is None:
        return Verdict(None, None, f"request failed ({failure or 'unknown'})")
    reader = reply_reader(prompt)
    read = reader.cut_off_parts if truncated else reader.parts
    if read is None:
        return Verdict(None, reply, "truncated reply")
    parts = read(prompt, reply)
    if parts is None:
        return Verdict(None, reply, "truncated reply" if truncated else "invalid reply")
    return Verdict(reader.score(parts), reply, parts=parts)


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
