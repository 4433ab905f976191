"""Read results.json files written by ``longbench100 score``."""

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from longbench100.core.errors import UserError
from ..scoring.samples import ScoredSample
from .settings import Settings, read_settings

REQUIRED_KEYS = ("model", "samples", "aggregates")


@dataclass(frozen=True)
class ModelResult:
    """One model's results: its name, scored samples and stored aggregates (see docs/aggregates.md)."""

    model: str
    path: Path
    samples: list[ScoredSample]
    aggregates: dict
    settings: Settings
    """How the results were made (metric, judge, QA filter, tokenizer, data fingerprint, ...)."""
    skipped_tasks: dict = field(default_factory=dict)
    """The data's suite tasks that generation skipped, each with why (results ``skipped_tasks``)."""
    rows: dict = field(default_factory=dict)
    """How incomplete predictions were scored (results ``rows``: ``missing_rows`` and the
    ``incomplete`` cells)."""


def load_results(paths: list[Path]) -> list[ModelResult]:
    """Load results.json files, refusing missing or malformed files and repeated model names."""
    if not paths:
        raise UserError("no results files given: pass e.g. results/*.json")
    results: list[ModelResult] = []
    for path in paths:
        result = load_result(path)
        clash = next((other for other in results if other.model == result.model), None)
        if clash is not None:
            raise UserError(
                f"model {result.model!r} appears in both {clash.path} and {path}: give each model one results file"
            )
        results.append(result)
    base_labels = {tuple(result.aggregates["base_labels"]) for result in results}
    if len(base_labels) > 1:
        raise UserError(
            "the results use different base lengths ("
            + "; ".join(",".join(labels) for labels in sorted(base_labels))
            + "): score every model with the same --base-lengths"
        )
    return results


def read_results_json(path: Path) -> dict:
    """The parsed results.json at ``path``, refusing a missing file, invalid JSON or missing top-level keys."""
    if not path.is_file():
        raise UserError(f"results file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UserError(f"{path} is not a results.json: invalid JSON ({error})") from None
    if not isinstance(data, dict) or any(key not in data for key in REQUIRED_KEYS):
        raise UserError(f"{path} is not a results.json: it needs the keys {', '.join(REQUIRED_KEYS)}")
    if not isinstance(data["samples"], list) or not all(isinstance(sample, dict) for sample in data["samples"]):
        raise UserError(f"{path} is not a results.json: 'samples' must be a list of objects")
    return data


def load_result(path: Path) -> ModelResult:
    """Load one results.json file."""
    data = read_results_json(path)
    aggregates = data["aggregates"]
    if not isinstance(aggregates, dict) or any(key not in aggregates for key in ("base_labels", "overall", "tasks")):
        raise UserError(f"{path} is not a results.json: 'aggregates' lacks base_labels/overall/tasks")
    try:
        samples = [ScoredSample.from_json(_sample_fields(sample)) for sample in data["samples"]]
    except (TypeError, AttributeError) as error:
        raise UserError(f"{path} is not a results.json: bad sample record ({error})") from None
    try:
        settings = read_settings(data)
        _check_depth(aggregates.get("depth", {}))
        _check_suites(aggregates.get("suites", {}))
        _check_also(aggregates.get("also", {}))
    except ValueError as error:
        raise UserError(f"{path} is not a results.json: {error}") from None
    skipped = data.get("skipped_tasks")
    rows = data.get("rows")
    if not (isinstance(rows, dict) and isinstance(rows.get("incomplete"), dict)):
        rows = {}
    skipped = skipped if isinstance(skipped, dict) else {}
    return ModelResult(str(data["model"]), path, samples, aggregates, settings, skipped, rows)


def _check_depth(depth: object) -> None:
    """Raise ``ValueError`` unless ``aggregates["depth"]`` has the shape docs/aggregates.md gives."""
    def is_bin(entry: object) -> bool:
        return (isinstance(entry, dict) and all(isinstance(entry.get(key), (int, float)) for key in ("lo", "hi"))
                and isinstance(entry.get("score"), (int, float, type(None))))

    if not isinstance(depth, dict) or not all(
        isinstance(by_label, dict)
        and all(isinstance(bins, list) and all(is_bin(entry) for entry in bins) for bins in by_label.values())
        for by_label in depth.values()
    ):
        raise ValueError("aggregates.depth must map task -> length -> list of {lo, hi, n, score}")


def _check_suites(suites: object) -> None:
    """Raise ``ValueError`` unless ``aggregates["suites"]`` maps suite -> {tasks: [names], overall: block or null}."""
    if not isinstance(suites, dict) or not all(
        isinstance(block, dict) and isinstance(block.get("tasks"), list)
        and all(isinstance(task, str) for task in block["tasks"])
        and isinstance(block.get("overall"), (dict, type(None)))
        for block in suites.values()
    ):
        raise ValueError("aggregates.suites must map suite -> {tasks: [task names], overall: block or null}")


def _check_also(also: object) -> None:
    """Raise ``ValueError`` unless ``aggregates["also"]`` maps task -> length -> metric -> mean (number or null)."""
    if not isinstance(also, dict) or not all(
        isinstance(by_label, dict) and all(
            isinstance(means, dict) and all(
                isinstance(value, (int, float, type(None))) and not isinstance(value, bool) for value in means.values()
            )
            for means in by_label.values()
        )
        for by_label in also.values()
    ):
        raise ValueError("aggregates.also must map task -> length -> secondary metric -> mean (number or null)")


_SAMPLE_FIELDS = frozenset(entry.name for entry in fields(ScoredSample))


def _sample_fields(sample: dict) -> dict:
    """The keys of a per-sample record that make a ``ScoredSample`` (the per-sample log adds others)."""
    return {key: value for key, value in sample.items() if key in _SAMPLE_FIELDS}
