"""Read results.json files written by ``longbench100 score``, checked against their schema and
version."""

import math
from dataclasses import dataclass, field, fields
from pathlib import Path

from longbench100.core.errors import UserError
from longbench100.core.json_shape import check_shape
from longbench100.core.version import __version__
from longbench100.folders.layout import decode_json, read_bytes

from ..scoring.results import RESULTS_SCHEMA
from ..scoring.samples import ScoredSample
from .settings import Settings, read_settings

_NUMBER = (float, type(None))
_TEXT = (str, type(None))
SAMPLE_SHAPE = {
    "id": str,
    "task": str,
    "label": str,
    "length": int,
    "row": int,
    "score": _NUMBER,
    "filtered?": bool,
    "closed_book_score?": _NUMBER,
    "metric?": str,
    "prediction?": _TEXT,
    "answers?": [str],
    "depth?": _NUMBER,
    "source?": _TEXT,
    "parts?": (dict, type(None)),
    "judge_reply?": _TEXT,
    "ungraded_reason?": _TEXT,
    "also?": ({"*": _NUMBER}, type(None)),
    "relevance_grades?": ([int], type(None)),
}
"""A per-sample entry of results.json (docs/results.md); other keys are allowed."""
_CI = ([float], type(None))
_COUNTS = {"n": int, "n_filtered": int, "n_ungraded": int}
_LENGTH_ENTRY = {
    "length": int,
    "score": _NUMBER,
    "ci": _CI,
    "lc": _NUMBER,
    "lc_ci": _CI,
    **_COUNTS,
    "n_tasks?": int,
}
_BLOCK = {
    "lengths": {"*": _LENGTH_ENTRY},
    "base_ability": _NUMBER,
    "base_ci": _CI,
    "avg_score": _NUMBER,
    "avg_score_ci": _CI,
    "avg_lc": _NUMBER,
    "avg_lc_ci": _CI,
    **_COUNTS,
    "warnings?": [str],
}
_TASK_BLOCK = {**_BLOCK, "base": {"labels": [str], "n": {"*": int}}}
_OVERALL_BLOCK = {**_BLOCK, "tasks?": [str], "excluded_tasks?": {"*": str}}
_SUITE_BLOCK = {"tasks": [str], "overall": (_OVERALL_BLOCK, type(None))}
RESULTS_SHAPE = {
    "schema": str,
    "model": str,
    "longbench100_version?": str,
    "samples": [SAMPLE_SHAPE],
    "aggregates": {
        "base_labels": [str],
        "overall": _OVERALL_BLOCK,
        "tasks": {"*": _TASK_BLOCK},
        "suites?": {"*": _SUITE_BLOCK},
    },
}
"""What ``report`` reads of results.json; ``show`` reads the samples of it (and of a baselines
run)."""
SHOWN_SHAPE = {"model": str, "samples": [SAMPLE_SHAPE]}
_CHECKED_FIGURES = ("base_ability", "avg_score", "avg_lc", "n", "n_filtered", "n_ungraded")


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


def read_results_json(path: Path, shape: dict = SHOWN_SHAPE) -> dict:
    """The parsed results.json at ``path`` (or a baselines run, for ``show``), refusing in one line
    a missing file, invalid UTF-8 or JSON, a schema or version this tool does not read, and content
    without ``shape``."""
    if not path.is_file():
        raise UserError(f"results file not found: {path}")
    data = decode_json(read_bytes(path), str(path))
    if isinstance(data, dict) and "schema" in data and data["schema"] != RESULTS_SCHEMA:
        raise UserError(
            f"{path}: schema {data['schema']!r} is not one this version reads ({RESULTS_SCHEMA})"
        )
    check_shape(data, shape, str(path))
    version = data.get("longbench100_version")
    if version is not None and _newer(version, __version__):
        raise UserError(
            f"{path}: written by longbench100 {version}, newer than this "
            f"{__version__}; upgrade to read it"
        )
    if not str(data["model"]).strip():
        raise UserError(f"{path}: model must name the model, not be empty")
    return data


def _newer(version: str, ours: str) -> bool:
    """Whether ``version`` (``1.2.3``) is later than ``ours``; a version that is not dotted numbers
    counts as later."""

    def parts(text: str) -> tuple[int, ...] | None:
        pieces = text.split(".")
        if not all(piece.isdigit() for piece in pieces):
            return None
        return tuple(int(piece) for piece in pieces)

    theirs, mine = parts(version), parts(ours)
    return theirs is None or (mine is not None and theirs > mine)


def load_result(path: Path) -> ModelResult:
    """Load one results.json file, checked against its schema and against its own samples."""
    data = read_results_json(path, RESULTS_SHAPE)
    aggregates = data["aggregates"]
    _check_figures(path, data)
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


def _check_figures(path: Path, data: dict) -> None:
    """Refuse aggregates that the samples beside them do not give (an edited Base Ability, score or
    LC): recompute the point figures of every task and the overall from the samples (no
    bootstrap)."""
    from longbench100.scoring.aggregates.aggregate import aggregate  # noqa: PLC0415 - numpy, only for reports

    samples = [ScoredSample.from_json(_sample_fields(sample)) for sample in data["samples"]]
    stored = data["aggregates"]
    try:
        computed = aggregate(
            samples, list(stored["base_labels"]), n_boot=0, unscored=_unscored_tasks(stored)
        )
    except (UserError, ValueError) as error:
        raise UserError(f"{path}: its samples cannot be aggregated ({error})") from None
    blocks = [("overall", stored["overall"], computed["overall"])]
    blocks += [
        (f"tasks.{task}", block, computed["tasks"].get(task, {}))
        for task, block in stored["tasks"].items()
    ]
    for name, block, fresh in blocks:
        figures = [(figure, block[figure], fresh.get(figure)) for figure in _CHECKED_FIGURES]
        for label, entry in block["lengths"].items():
            again = (fresh.get("lengths") or {}).get(label) or {}
            figures += [
                (f"lengths.{label}.{key}", entry[key], again.get(key))
                for key in ("score", "lc", "n", "n_filtered", "n_ungraded")
            ]
        for figure, value, expected in figures:
            if not _same(value, expected):
                raise UserError(
                    f"{path}: aggregates.{name}.{figure} is {value} but its samples "
                    f"give {expected}: edited after scoring? score the predictions "
                    "again"
                )


def _unscored_tasks(aggregates: dict) -> dict[str, str]:
    """The tasks the overall left out that have no scored samples at all ({task: reason}): tasks of
    the data that ``score --allow-missing`` could not score, which make the overall null."""
    excluded = aggregates["overall"].get("excluded_tasks")
    if not isinstance(excluded, dict):
        return {}
    return {
        task: str(reason) for task, reason in excluded.items() if task not in aggregates["tasks"]
    }


def _same(value: float | None, expected: float | None) -> bool:
    """Whether a stored figure equals the recomputed one (both null, or equal to rounding)."""
    if value is None or expected is None:
        return value is None and expected is None
    return math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-9)


def _check_depth(depth: object) -> None:
    """Raise ``ValueError`` unless ``aggregates["depth"]`` has the shape docs/aggregates.md gives."""

    def is_bin(entry: object) -> bool:
        return (
            isinstance(entry, dict)
            and all(isinstance(entry.get(key), (int, float)) for key in ("lo", "hi"))
            and isinstance(entry.get("score"), (int, float, type(None)))
        )

    if not isinstance(depth, dict) or not all(
        isinstance(by_label, dict)
        and all(
            isinstance(bins, list) and all(is_bin(entry) for entry in bins)
            for bins in by_label.values()
        )
        for by_label in depth.values()
    ):
        raise ValueError("aggregates.depth must map task -> length -> list of {lo, hi, n, score}")


def _check_suites(suites: object) -> None:
    """Raise ``ValueError`` unless ``aggregates["suites"]`` maps suite -> {tasks: [names], overall: block or null}."""
    if not isinstance(suites, dict) or not all(
        isinstance(block, dict)
        and isinstance(block.get("tasks"), list)
        and all(isinstance(task, str) for task in block["tasks"])
        and isinstance(block.get("overall"), (dict, type(None)))
        for block in suites.values()
    ):
        raise ValueError(
            "aggregates.suites must map suite -> {tasks: [task names], overall: block or null}"
        )


def _check_also(also: object) -> None:
    """Raise ``ValueError`` unless ``aggregates["also"]`` maps task -> length -> metric -> mean (number or null)."""
    if not isinstance(also, dict) or not all(
        isinstance(by_label, dict)
        and all(
            isinstance(means, dict)
            and all(
                isinstance(value, (int, float, type(None))) and not isinstance(value, bool)
                for value in means.values()
            )
            for means in by_label.values()
        )
        for by_label in also.values()
    ):
        raise ValueError(
            "aggregates.also must map task -> length -> secondary metric -> mean (number or null)"
        )


_SAMPLE_FIELDS = frozenset(entry.name for entry in fields(ScoredSample))


def _sample_fields(sample: dict) -> dict:
    """The keys of a per-sample record that make a ``ScoredSample`` (the per-sample log adds others)."""
    return {key: value for key, value in sample.items() if key in _SAMPLE_FIELDS}
