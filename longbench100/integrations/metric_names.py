"""The names other evaluation tools show our metrics under: what each one measures, in their usual
spelling."""

from __future__ import annotations

_HARNESS_NAMES = {
    "accuracy": "acc",
    "qa_f1": "f1",
    "ndcg_at_10": "ndcg@10",
    "ndcg_at_10_lenient": "ndcg@10_lenient",
}


def harness_metric_name(metric: str) -> str:
    """The lm-eval / Inspect name of one of our metrics (``accuracy`` -> ``acc``, ``qa_f1`` ->
    ``f1``, ``ndcg_at_10`` -> ``ndcg@10``); other metrics keep their own name (``rouge_l``,
    ``substring_match``)."""
    return _HARNESS_NAMES.get(metric, metric)


def length_metric_name(metric: str, label: str) -> str:
    """The name of a metric at one length, as lm-eval groups report it per length (``acc_8k``)."""
    return f"{harness_metric_name(metric)}_{label}"
