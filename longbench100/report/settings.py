"""How each results file was made (its ``settings``), and which settings differ between files.

``score`` records a top-level ``settings`` object in results.json (docs/results.md). Results from
before that block existed are read for what they hold (metric mode, metrics, judge, QA filter, base
lengths and data manifest hash sit elsewhere in them); the tokenizer and ROUGE-L variant are then
unknown. A setting that one file does not know cannot be checked, which is a warning, not an error.
"""

from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from longbench100.core.errors import UserError

SETTING_KEYS = (
    "metric_mode",
    "metrics",
    "rouge_variant",
    "judge",
    "qa_filter",
    "tokenizer",
    "base_lengths",
    "data_fingerprint",
    "suite",
    "judge_style",
    "tasks",
)
"""The settings ``report`` compares, in the order report.md lists them (``tasks``: the tasks scored,
read from the aggregates, so results over different task sets are not ranked in one table)."""

UNKNOWN_WHEN_NULL = ("tokenizer", "data_fingerprint", "suite")
"""Settings whose null value means "not recorded" (no manifest), rather than a real choice such as no judge."""

_TITLES = {
    "metric_mode": "metric mode (--metric)",
    "metrics": "metric per task",
    "rouge_variant": "ROUGE-L variant",
    "judge": "judge",
    "qa_filter": "QA filter threshold",
    "tokenizer": "tokenizer of the data",
    "base_lengths": "base lengths",
    "data_fingerprint": "data manifest sha256",
    "suite": "suite of the data",
    "judge_style": "judge style (--judge-style)",
    "tasks": "tasks scored",
}


@dataclass(frozen=True)
class Settings:
    """One results file's settings: ``values`` holds each known key of :data:`SETTING_KEYS`."""

    values: dict
    recorded: bool
    """True when the file has a ``settings`` block; False for older files read for what they hold."""

    def known(self, key: str) -> bool:
        """True when this file records ``key`` (a null tokenizer or data fingerprint counts as unknown)."""
        return key in self.values and not (key in UNKNOWN_WHEN_NULL and self.values[key] is None)


@dataclass(frozen=True)
class Difference:
    """One setting whose value differs between two results files."""

    key: str
    """The setting, e.g. ``metric_mode``, or ``metrics.single_doc_qa`` for one task's metric."""
    first: tuple[Path, object]
    second: tuple[Path, object]

    def describe(self) -> str:
        """E.g. ``metric_mode is 'classic' in a.json but 'judge' in b.json``."""
        first, second = self.first[1], self.second[1]
        # (a null fingerprint is "not recorded": never a difference)
        if self.key == "data_fingerprint" and isinstance(first, str) and isinstance(second, str):
            first, second = f"{first[:12]}...", f"{second[:12]}..."
        return f"{self.key} is {show_value(first)} in {self.first[0]} but {show_value(second)} in {self.second[0]}"


_TYPES = {
    "metric_mode": (str,),
    "metrics": (dict,),
    "rouge_variant": (str, type(None)),
    "judge": (dict, type(None)),
    "qa_filter": (int, float, type(None)),
    "tokenizer": (str, type(None)),
    "base_lengths": (list,),
    "data_fingerprint": (str, type(None)),
    "suite": (str, type(None)),
    "judge_style": (str, type(None)),
    "tasks": (list,),
}
"""The JSON types each recorded setting may have (docs/results.md)."""


def read_settings(data: dict) -> Settings:
    """The settings of a parsed results.json: its ``settings`` block, else what an older file holds,
    and the tasks its aggregates scored (``tasks``).

    Raises ``ValueError`` naming the setting when the block or one of its values has the wrong type.
    """
    settings = _read_settings(data)
    aggregates = data.get("aggregates")
    if isinstance(aggregates, dict) and isinstance(aggregates.get("tasks"), dict):
        settings.values["tasks"] = list(aggregates["tasks"])
    return settings


def _read_settings(data: dict) -> Settings:
    """:func:`read_settings` without the tasks scored."""
    block = data.get("settings")
    if block is not None and not isinstance(block, dict):
        raise ValueError("'settings' must be an object")
    if isinstance(block, dict):
        values = {key: block[key] for key in SETTING_KEYS if key in block and key != "tasks"}
        for key, value in values.items():
            if not isinstance(value, _TYPES[key]):
                raise ValueError(f"settings.{key} has the wrong type ({type(value).__name__})")
        if isinstance(values.get("judge"), dict):
            values["judge"] = _judge_identity(values["judge"])
        return Settings(values, recorded=True)
    values = {}
    for key in ("metric_mode", "metrics"):
        if key in data:
            values[key] = data[key]
    if "judge" in data:
        values["judge"] = (
            _judge_identity(data["judge"]) if isinstance(data["judge"], dict) else data["judge"]
        )
    qa_filter = data.get("qa_filter")
    if isinstance(qa_filter, dict) and "threshold" in qa_filter:
        values["qa_filter"] = qa_filter["threshold"]
    if "base_labels" in data:
        values["base_lengths"] = data["base_labels"]
    block = data.get("data")
    if (
        isinstance(block, dict)
        and isinstance(block.get("manifest_sha256"), str)
        and block["manifest_sha256"]
    ):
        values["data_fingerprint"] = block["manifest_sha256"]
    return Settings(values, recorded=False)


def differences(first: tuple[Path, Settings], second: tuple[Path, Settings]) -> list[Difference]:
    """The settings both files know and that differ, in :data:`SETTING_KEYS` order.

    ``metrics`` is compared task by task over the tasks both files scored (a model scored on
    fewer tasks differs in ``tasks``); each differing task is reported as ``metrics.<task>``.
    """
    (path_a, a), (path_b, b) = first, second
    found = []
    for key in SETTING_KEYS:
        if not (a.known(key) and b.known(key)):
            continue
        if key == "metrics" and isinstance(a.values[key], dict) and isinstance(b.values[key], dict):
            for task in a.values[key]:
                if task in b.values[key] and a.values[key][task] != b.values[key][task]:
                    found.append(
                        Difference(
                            f"metrics.{task}",
                            (path_a, a.values[key][task]),
                            (path_b, b.values[key][task]),
                        )
                    )
        elif a.values[key] != b.values[key]:
            found.append(Difference(key, (path_a, a.values[key]), (path_b, b.values[key])))
    return found


@dataclass(frozen=True)
class SettingsCheck:
    """The outcome of comparing every pair of results files' settings."""

    differences: list[Difference]
    """Every differing setting between any two files (empty: made the same way, as far as recorded)."""
    warnings: list[str]
    """Lines about what could not be checked: older files without settings, settings some files lack."""

    @property
    def mixed(self) -> bool:
        """True when some setting differs between two files."""
        return bool(self.differences)


def check_settings(files: list[tuple[Path, Settings]], *, allow_mixed: bool) -> SettingsCheck:
    """Compare the settings of every pair of files; refuse differences unless ``allow_mixed``.

    Raises :class:`UserError` (one line naming the first differing setting and its two files) when
    settings differ and ``allow_mixed`` is false.
    """
    found = [
        difference
        for first, second in combinations(files, 2)
        for difference in differences(first, second)
    ]
    if found and not allow_mixed:
        more = (
            f" (and {len(found) - 1} more difference{'s' if len(found) > 2 else ''})"
            if len(found) > 1
            else ""
        )
        raise UserError(
            f"the results were made with different settings: {found[0].describe()}{more}; "
            "rescore them alike, or pass --allow-mixed to report them anyway"
        )
    warnings = [
        f"{path} records no settings (scored by an older longbench100): compared on what it holds"
        for path, settings in files
        if not settings.recorded and len(files) > 1
    ]
    notes = unchecked(files)
    if notes:
        warnings.append("cannot check that the results were made alike for: " + "; ".join(notes))
    return SettingsCheck(found, warnings)


def pair_differs(first: tuple[Path, Settings], second: tuple[Path, Settings]) -> bool:
    """True when two files differ in some setting both record."""
    return bool(differences(first, second))


def unchecked(files: list[tuple[Path, Settings]]) -> list[str]:
    """Settings that some files record and others do not, as ``key (unknown in a.json, b.json)``."""
    notes = []
    for key in SETTING_KEYS:
        missing = [str(path) for path, settings in files if not settings.known(key)]
        if missing and len(missing) < len(files):
            notes.append(f"{key} (unknown in {', '.join(missing)})")
    return notes


def setting_title(key: str) -> str:
    """A human title for a setting key, for report.md."""
    return _TITLES[key]


def show_value(value: object) -> str:
    """A compact one-line rendering of a setting's value."""
    if value is None:
        return "none"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {show_value(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value)


def _judge_identity(judge: dict) -> dict:
    """The part of a judge record that decides the grades: its model and endpoint."""
    return {"model": judge.get("model"), "base_url": judge.get("base_url")}
