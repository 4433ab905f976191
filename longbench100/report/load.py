"""Read results.json files written by ``longbench100 score``."""

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..scoring.samples import ScoredSample

REQUIRED_KEYS = ("model", "samples", "aggregates")


@dataclass(frozen=True)
class ModelResult:
    """One model's results: its name, scored samples and stored aggregates (see docs/aggregates.md)."""

    model: str
    path: Path
    samples: list[ScoredSample]
    aggregates: dict
    manifest_sha256: str | None = None
    """sha256 of the data folder's manifest.json the model was scored on (``data.manifest_sha256``), if known."""


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


def load_result(path: Path) -> ModelResult:
    """Load one results.json file."""
    if not path.is_file():
        raise UserError(f"results file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UserError(f"{path} is not a results.json: invalid JSON ({error})") from None
    if not isinstance(data, dict) or any(key not in data for key in REQUIRED_KEYS):
        raise UserError(f"{path} is not a results.json: it needs the keys {', '.join(REQUIRED_KEYS)}")
    aggregates = data["aggregates"]
    if not isinstance(aggregates, dict) or any(key not in aggregates for key in ("base_labels", "overall", "tasks")):
        raise UserError(f"{path} is not a results.json: 'aggregates' lacks base_labels/overall/tasks")
    try:
        samples = [ScoredSample.from_json(sample) for sample in data["samples"]]
    except TypeError as error:
        raise UserError(f"{path} is not a results.json: bad sample record ({error})") from None
    block = data.get("data")
    sha = block.get("manifest_sha256") if isinstance(block, dict) else None
    return ModelResult(str(data["model"]), path, samples, aggregates, sha if isinstance(sha, str) and sha else None)


def data_mismatch(results: list[ModelResult]) -> str | None:
    """A warning when the models were not (provably) scored on the same data, else ``None``.

    Compares the data manifests' sha256 stored in the results: different hashes mean different data
    (another generation, a filtered copy); a missing hash next to a known one cannot be checked.
    Results that all lack the hash are not flagged.
    """
    known = {result.manifest_sha256 for result in results if result.manifest_sha256 is not None}
    unknown = [result.model for result in results if result.manifest_sha256 is None]
    if len(known) <= 1 and (not known or not unknown):
        return None
    by_hash = ", ".join(
        f"{result.model}: {result.manifest_sha256[:12] if result.manifest_sha256 else 'unknown'}" for result in results
    )
    what = "on different data" if len(known) > 1 else "on data that cannot be checked to be the same"
    return (
        f"the models were scored {what} (data manifest sha256 {by_hash}): their scores are not directly "
        "comparable, and the paired comparison only uses the sample ids they share"
    )
