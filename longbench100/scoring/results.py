"""Assemble results.json (docs/results.md) and the compact terminal summary of it."""

import json
from datetime import datetime, timezone
from pathlib import Path

from longbench100.core.atomic import write_bytes_atomic
from longbench100.core.version import __version__

RESULTS_SCHEMA = "longbench100.results/1"


def build_settings(
    *,
    metric_mode: str,
    metrics: dict[str, str],
    rouge_variant: str,
    judge: dict | None,
    qa_filter: float | None,
    tokenizer: str | None,
    base_lengths: list[str],
    data_fingerprint: str | None,
    suite: str | None = None,
    judge_style: str | None = None,
) -> dict:
    """The ``settings`` block: everything that makes two results comparable (``report`` checks these keys)."""
    return {
        "metric_mode": metric_mode,
        "metrics": metrics,
        "rouge_variant": rouge_variant,
        "judge": None
        if judge is None
        else {"model": judge["model"], "base_url": judge["base_url"]},
        "qa_filter": qa_filter,
        "tokenizer": tokenizer,
        "base_lengths": base_lengths,
        "data_fingerprint": data_fingerprint,
        "suite": suite,
        "judge_style": judge_style,
    }


def build_results(
    *,
    model: str,
    data_dir: Path,
    manifest_sha256: str | None,
    predictions: Path,
    metric_mode: str,
    metrics: dict[str, str],
    judge: dict | None,
    settings: dict,
    outcome_counts: dict,
    base_labels: list[str],
    samples: list[dict],
    aggregates: dict,
) -> dict:
    """Return the results.json object; keys are in the order docs/results.md lists them."""
    return {
        "schema": RESULTS_SCHEMA,
        "model": model,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "longbench100_version": __version__,
        "data": {"path": str(data_dir), "manifest_sha256": manifest_sha256},
        "predictions": str(predictions),
        "metric_mode": metric_mode,
        "metrics": metrics,
        "judge": judge,
        "settings": settings,
        **outcome_counts,
        "base_labels": base_labels,
        "samples": samples,
        "aggregates": aggregates,
    }


def dumps_results(results: dict) -> str:
    """JSON text of results: indented, except that each per-sample object sits on one line."""
    parts = []
    for key, value in results.items():
        if key == "samples":
            rows = ",\n".join("  " + json.dumps(sample, ensure_ascii=False) for sample in value)
            text = f"[\n{rows}\n ]" if value else "[]"
        else:
            text = json.dumps(value, indent=1, ensure_ascii=False).replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_results(path: Path, results: dict) -> None:
    """Write results.json atomically (temporary file in the same folder, then rename), as readable as the data (0666 less the umask)."""
    write_bytes_atomic(path, dumps_results(results).encode("utf-8"))


def _number(value: float | None, width: int) -> str:
    """A right-aligned one-decimal number, or ``-`` for null."""
    return f"{'-' if value is None else f'{value:.1f}':>{width}}"


def summary_table(results: dict) -> str:
    """A compact text table: per task and overall, S_l at every length, Base Ability, average LC, exclusions."""
    aggregates = results["aggregates"]
    labels = list(aggregates["lengths"])
    rows = [
        (task, results["metrics"].get(task, ""), block)
        for task, block in aggregates["tasks"].items()
    ]
    rows.append(("overall", "", aggregates["overall"]))
    name_width = max(len(name) for name, _, _ in rows)
    metric_width = max([6] + [len(metric) for _, metric, _ in rows])
    header = (
        f"{'task':<{name_width}}  {'metric':<{metric_width}}"
        + "".join(f"{label:>7}" for label in labels)
        + f"{'base':>7}{'avgLC%':>8}{'filt':>6}{'ungr':>6}"
    )
    lines = [
        f"model {results['model']}: scores 0-100 per length, LC in percent of Base Ability",
        header,
    ]
    for name, metric, block in rows:
        lines.append(
            f"{name:<{name_width}}  {metric:<{metric_width}}"
            + "".join(_number(block["lengths"][label]["score"], 7) for label in labels)
            + _number(block["base_ability"], 7)
            + _number(block["avg_lc"], 8)
            + f"{block['n_filtered']:>6}{block['n_ungraded']:>6}"
        )
    return "\n".join(lines)
