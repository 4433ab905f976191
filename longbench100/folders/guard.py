"""The one check every command runs on what it is about to write, before any work.

Every folder the tool writes says what it is in a small marker file (``.longbench100-kind``: data,
predictions, probes, report, snapshot, lm-eval-export); folders made before the marker existed are
recognised by what they hold. A command refuses, in one line, to write

- where it cannot (a path under a regular file, /proc, a read-only mount: :mod:`.writable`);
- onto or into one of its own inputs (``predict --out`` = ``--data``; ``score --out`` onto a data or
  predictions file; ``coverage --out`` onto the data's ``manifest.json``);
- into a folder of another kind (predictions into a data folder, a report into a snapshot).
"""

from __future__ import annotations

import json
from pathlib import Path

from longbench100.folders.layout import list_data_files
from longbench100.core.errors import UserError
from longbench100.folders.writable import ensure_writable_dir, ensure_writable_file

KIND_FILE = ".longbench100-kind"
KINDS = ("data", "predictions", "probes", "report", "snapshot", "lm-eval-export")
_RUN_STATE = ".longbench100-run.json"  # a generation run in progress (generate/manifest.py)
_DESCRIBED = {"data": "a data folder", "predictions": "a predictions folder", "probes": "a Dolce probe folder",
              "report": "a report folder", "snapshot": "a dataset snapshot", "lm-eval-export": "an lm-eval export"}


def folder_kind(path: Path) -> str | None:
    """What the tool folder ``path`` is (one of :data:`KINDS`), or ``None`` for a missing, empty or foreign folder."""
    marker = path / KIND_FILE
    if marker.is_file():
        kind = marker.read_text(encoding="utf-8").strip()
        return kind if kind in KINDS else None
    return _inferred_kind(path) if path.is_dir() else None


def _inferred_kind(path: Path) -> str | None:
    """The kind of a folder written before markers existed, from what it holds."""
    manifest = _json_object(path / "manifest.json")
    if manifest is not None:
        if manifest.get("kind") == "dolce-probes":
            return "probes"
        if "files" in manifest and "generation" in manifest:
            return "snapshot"
        return "data"
    if (path / _RUN_STATE).is_file():
        return "data"
    if (path / "report.md").is_file():
        return "report"
    files = list_data_files(path)  # <task>/<length>.jsonl: the layout data and predictions share
    if files:
        record = _first_record(files[0].path)
        if record is not None:
            return "data" if "prompt" in record else "predictions" if "prediction" in record else None
    return None


def _json_object(path: Path) -> dict | None:
    """``path`` parsed as a JSON object, or ``None`` when absent or not one."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _first_record(path: Path) -> dict | None:
    """The first JSON line of a JSONL file, or ``None``."""
    try:
        with path.open(encoding="utf-8") as handle:
            value = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies somewhere below it (both resolved)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


Inputs = dict[str, "Path | None"] | list[tuple[str, "Path | None"]]
"""The inputs of a command: option name -> path, or (option name, path) pairs when an option repeats."""


def _check_not_an_input(path: Path, option: str, inputs: Inputs) -> None:
    """Refuse an output that is one of the inputs or lies inside an input folder."""
    for input_option, source in inputs.items() if isinstance(inputs, dict) else inputs:
        if source is not None and source.exists() and _inside(path, source):
            what = "is" if path.resolve() == source.resolve() else "lies inside"
            raise UserError(f"{option} {path}: {what} the input {input_option} {source}; "
                            "write to a new place, the input is never overwritten")


def guard_output_dir(path: Path, option: str, kind: str, inputs: Inputs | None = None) -> None:
    """Check before any work that the folder ``path`` can take this command's ``kind`` of output.

    ``inputs`` maps each input option to its path: the output may not be one of them or lie inside
    one. A folder that already holds another kind is refused; so is a path that cannot be written.
    """
    _check_not_an_input(path, option, inputs or {})
    ensure_writable_dir(path, option)
    present = folder_kind(path)
    if present is not None and present != kind:
        raise UserError(f"{option} {path}: is {_DESCRIBED[present]}, not {_DESCRIBED[kind]}; choose another folder")


_HOLDS_RECORDS = ("data", "predictions", "probes", "snapshot")  # folders a stray file would corrupt


def guard_output_file(path: Path, option: str, inputs: Inputs | None = None) -> None:
    """Check before any work that the file ``path`` can be written, is none of the inputs (nor inside one),
    and does not land in a data, predictions, probe or snapshot folder (as ``<folder>/x`` or
    ``<folder>/<task>/x``), where it would replace or add a file the folder's readers trust."""
    _check_not_an_input(path, option, inputs or {})
    ensure_writable_file(path, option)
    for folder in path.absolute().parents[:2]:
        kind = folder_kind(folder)
        if kind in _HOLDS_RECORDS:
            raise UserError(f"{option} {path}: lies inside {_DESCRIBED[kind]} ({folder}); write it elsewhere")


def mark_folder(path: Path, kind: str) -> None:
    """Record in the folder ``path`` (created if needed) that it is a ``kind`` folder; an equal marker is kept."""
    path.mkdir(parents=True, exist_ok=True)
    marker = path / KIND_FILE
    if not marker.is_file() or marker.read_text(encoding="utf-8").strip() != kind:
        marker.write_text(kind + "\n", encoding="utf-8")
