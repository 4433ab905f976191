"""HELMET summary grading: combine a summary's precision call and its key-point recall call into one verdict.

Precision is the share of the summary's sentences the reference supports (the ``summary_judge``
rubric, which also gives fluency 0/1); recall is the share of the reference's key points the summary
conveys; the score is fluency x F1(precision, recall). A summary is ungraded when any of its calls
(key-point extraction, precision, recall) gives no valid verdict; the reason names that call.
"""

from longbench100.judge.parse import recall_score
from longbench100.judge.prompts import JudgePrompt, recall_prompt
from longbench100.judge.verdict import Verdict


def f1(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall (0 when both are 0)."""
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def summary_calls(prompt: JudgePrompt, key_points: list[str] | None) -> list[JudgePrompt]:
    """The calls of a ``summary_judge_helmet`` prompt: its precision call, and its recall call once ``key_points`` are known."""
    calls = [prompt.precision_call()]
    return calls if key_points is None else [*calls, recall_prompt(key_points, prompt.summary)]


def _ungraded(verdict: Verdict, call: str) -> Verdict:
    """A summary left ungraded by one of its calls: that call's reply and reason, naming the call."""
    return Verdict(None, verdict.reply, f"{verdict.reason} ({call})")


def summary_verdict(
    prompt: JudgePrompt, key_points: list[str] | Verdict, verdicts: dict[str, Verdict]
) -> Verdict:
    """The verdict of a ``summary_judge_helmet`` prompt from its calls' verdicts (by prompt text).

    ``key_points`` are the reference's key points, or the ungraded verdict of their extraction.
    The sub-scores (``parts``) keep fluency, precision, recall, F1, the counts behind them and the key points.
    """
    if isinstance(key_points, Verdict):
        return _ungraded(key_points, "key points")
    precision_verdict = verdicts[prompt.text]
    if precision_verdict.parts is None:
        return _ungraded(precision_verdict, "precision")
    recall_verdict = verdicts[recall_prompt(key_points, prompt.summary).text]
    if recall_verdict.parts is None:
        return _ungraded(recall_verdict, "recall")
    sentences, points = precision_verdict.parts, recall_verdict.parts
    precision = sentences["supported"] / sentences["n_sentences"]
    recall = recall_score(points)
    parts = {
        "fluency": sentences["fluency"],
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
        "supported": sentences["supported"],
        "n_sentences": sentences["n_sentences"],
        "supported_key_points": points["supported_key_points"],
        "n_key_points": points["n_key_points"],
        "key_points": key_points,
    }
    reply = f"[precision]\n{precision_verdict.reply}\n\n[recall]\n{recall_verdict.reply}"
    return Verdict(parts["fluency"] * parts["f1"], reply, parts=parts)
