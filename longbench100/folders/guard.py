"""The one check every command runs on what it is about to write, before any work.

Every folder the tool writes says what it is in a small marker file (``.longbench100-kind``: data,
predictions, probes, report, snapshot, lm-eval-export); folders made before the marker existed are
recognised by what they hold. A command refuses, in one line, to write

- where it cannot (a path under a regular file, /proc, a read-only mount: :mod:`.writable`);
- onto or into one of its own inputs (``predict --out`` = ``--data``; ``score --out`` onto a data or
  predictions file; ``coverage --out`` onto the data's ``manifest.json``), nor into a folder that
  holds one of them (``report R/results.json --out R``);
- into a folder of another kind (predictions into a data folder, a report into a snapshot), or into
  a non-empty folder that carries no kind marker (a user's own folder);
- onto an existing file that is not its own kind of output (``score --out notes.md``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from longbench100.core.errors import UserError
from longbench100.folders.layout import RUN_STATE, list_data_files
from longbench100.folders.writable import ensure_writable_dir, ensure_writable_file

KIND_FILE = ".longbench100-kind"
KINDS = ("data", "predictions", "probes", "report", "snapshot", "lm-eval-export")
_DESCRIBED = {
    "data": "a data folder",
    "predictions": "a predictions folder",
    "probes": "a Dolce probe folder",
    "report": "a report folder",
    "snapshot": "a dataset snapshot",
    "lm-eval-export": "an lm-eval export",
}


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
    if (path / RUN_STATE).is_file():
        return "data"
    if (path / "report.md").is_file():
        return "report"
    files = list_data_files(path)  # <task>/<length>.jsonl: the layout data and predictions share
    if files:
        record = _first_record(files[0].path)
        if record is not None:
            return (
                "data" if "prompt" in record else "predictions" if "prediction" in record else None
            )
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
    for input_option, source in _given(inputs):
        if _inside(path, source):
            what = "is" if path.resolve() == source.resolve() else "lies inside"
            raise UserError(
                f"{option} {path}: {what} the input {input_option} {source}; "
                "write to a new place, the input is never overwritten"
            )


def _check_holds_no_input(folder: Path, option: str, inputs: Inputs) -> None:
    """Refuse an output folder that holds one of the inputs, which the files written there could
    replace."""
    for input_option, source in _given(inputs):
        if _inside(source, folder):
            raise UserError(
                f"{option} {folder}: holds the input {input_option} {source}, which "
                "the output could overwrite; write to a new folder"
            )


def _given(inputs: Inputs) -> list[tuple[str, Path]]:
    """The inputs that were given and exist, as (option, path) pairs."""
    pairs = inputs.items() if isinstance(inputs, dict) else inputs
    return [(option, source) for option, source in pairs if source is not None and source.exists()]


def _holds_user_files(folder: Path) -> bool:
    """Whether ``folder`` is a non-empty folder without a kind marker (files the tool did not mark
    as its own)."""
    if not folder.is_dir() or (folder / KIND_FILE).is_file():
        return False
    return any(not entry.name.startswith(".longbench100") for entry in folder.iterdir())


def guard_output_dir(path: Path, option: str, kind: str, inputs: Inputs | None = None) -> None:
    """Check before any work that the folder ``path`` can take this command's ``kind`` of output.

    ``inputs`` maps each input option to its path: the output may not be one of them, lie inside one
    or hold one. A folder that already holds another kind is refused, and so is a non-empty folder
    without a kind marker (a legacy data or predictions folder, recognised by its records, is kept
    writable for ``--resume``); so is a path that cannot be written.
    """
    _check_not_an_input(path, option, inputs or {})
    _check_holds_no_input(path, option, inputs or {})
    ensure_writable_dir(path, option)
    present = folder_kind(path)
    unmarked = _holds_user_files(path)
    if unmarked and present in _MARKED_ONLY:  # a user's own report.md says nothing of who wrote it
        present = None
    if present is not None and present != kind:
        raise UserError(
            f"{option} {path}: is {_DESCRIBED[present]}, not {_DESCRIBED[kind]}; choose another folder"
        )
    if unmarked and present is None:
        raise UserError(
            f"{option} {path}: is a non-empty folder that longbench100 did not write; "
            "choose an empty or new folder"
        )


_MARKED_ONLY = ("report", "lm-eval-export")
"""Kinds whose unmarked folders are never written into: what they hold (a report.md) a user may have
written."""
_HOLDS_RECORDS = ("data", "predictions", "probes", "snapshot")  # folders a stray file would corrupt

FILE_KINDS: dict[str, tuple[str, Callable[[dict], bool]]] = {
    "results": (
        "a results file of `longbench100 score`",
        lambda value: str(value.get("schema", "")).startswith("longbench100.results/"),
    ),
    "coverage": (
        "a coverage report of `longbench100 coverage`",
        lambda value: value.get("tool") == "longbench100" and "chunk_tokens" in value,
    ),
    "baselines": (
        "a run of `longbench100 baselines`",
        lambda value: value.get("model") == "no-model baselines" and "aggregates" in value,
    ),
    "dolce-fit": (
        "a fit of `longbench100 dolce fit`",
        lambda value: value.get("tool") == "longbench100" and "estimator" in value,
    ),
}
"""The single-file outputs: what each is called and how an earlier one is recognised (it may be
replaced)."""


def guard_output_file(path: Path, option: str, kind: str, inputs: Inputs | None = None) -> None:
    """Check before any work that the file ``path`` can be written, is none of the inputs (nor
    inside one), is new or an earlier output of the same ``kind`` (one of :data:`FILE_KINDS`), and
    does not land in a data, predictions, probe or snapshot folder (as ``<folder>/x`` or
    ``<folder>/<task>/x``), where it would replace or add a file the folder's readers trust."""
    _check_not_an_input(path, option, inputs or {})
    ensure_writable_file(path, option)
    for folder in path.absolute().parents[:2]:
        present = folder_kind(folder)
        if present in _HOLDS_RECORDS:
            raise UserError(
                f"{option} {path}: lies inside {_DESCRIBED[present]} ({folder}); write it elsewhere"
            )
    described, recognise = FILE_KINDS[kind]
    if path.exists():
        existing = _json_object(path)
        if existing is None or not recognise(existing):
            raise UserError(
                f"{option} {path}: exists and is not {described}; it is never "
                "replaced, choose a new file"
            )


def mark_folder(path: Path, kind: str) -> None:
    """Record in the folder ``path`` (created if needed) that it is a ``kind`` folder; an equal marker is kept."""
    path.mkdir(parents=True, exist_ok=True)
    marker = path / KIND_FILE
    if not marker.is_file() or marker.read_text(encoding="utf-8").strip() != kind:
        marker.write_text(kind + "\n", encoding="utf-8")


OUTPUTS_FILE = ".longbench100-outputs.json"
"""The files a command last wrote into its output folder (report, export lm-eval), relative to
it."""


def replace_outputs(folder: Path, written: list[Path]) -> None:
    """Once a command has written ``written`` into its own ``folder``: delete the files its previous
    run there wrote and this one did not (a report.html from an earlier ``--html``), then record
    ``written``. Only files a run recorded are ever deleted: a folder without the record keeps
    all."""
    record = folder / OUTPUTS_FILE
    now = sorted({path.relative_to(folder).as_posix() for path in written})
    try:
        before = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        before = []
    for relative in before if isinstance(before, list) else []:
        stale = folder / str(relative)
        own = _inside(stale, folder) and stale != folder
        if str(relative) not in now and own and stale.is_file():
            stale.unlink()
    record.write_text(json.dumps(now, indent=1) + "\n", encoding="utf-8")
