"""Write a filtered copy of a data folder: same layout, QA files without the dropped records, new manifest.

Every file other than the QA data files, ``manifest.json`` and hidden files (run state, temporary
files) is copied unchanged. Kept lines are copied byte for byte. The new ``manifest.json`` is the
original one with the row counts and sha256 of every data file updated (``files``, and
``tasks.<task>.lengths.<label>.rows`` where the generator's manifest has them), the filter's record
under ``qa_filter``, and the original manifest (with its sha256) under ``original_manifest``.
"""

import copy
import hashlib
import json
import shutil
from pathlib import Path

from longbench100.catalog.task_info import TASKS
from longbench100.core.atomic import write_bytes_atomic, write_json_atomic
from longbench100.core.errors import UserError
from longbench100.folders.data_records import data_files
from longbench100.folders.guard import guard_output_dir, mark_folder
from longbench100.folders.layout import MANIFEST, read_folder_manifest, sealed_manifest
from longbench100.publish.staging import remove_stale_staging, staged_folder


def _file_entry(path: Path) -> dict:
    """sha256 and non-blank line count of a data file."""
    data = path.read_bytes()
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "rows": sum(1 for line in data.splitlines() if line.strip()),
    }


def _updated_files(original: object, entries: dict[str, dict]) -> object:
    """The manifest's ``files`` with new sha256/rows: a mapping or a list of ``{"path": ...}`` objects is
    updated in place (other keys kept); anything else is replaced by a mapping path -> entry."""
    if isinstance(original, dict) and all(isinstance(value, dict) for value in original.values()):
        return {path: {**original.get(path, {}), **entry} for path, entry in entries.items()}
    if isinstance(original, list) and all(
        isinstance(item, dict) and "path" in item for item in original
    ):
        by_path = {item["path"]: item for item in original}
        return [{**by_path.get(path, {"path": path}), **entry} for path, entry in entries.items()]
    return entries


def _update_task_rows(tasks: object, entries: dict[str, dict]) -> None:
    """Set ``tasks[task]["lengths"][label]["rows"]`` (the generator's per-length counts) to the new row counts."""
    if not isinstance(tasks, dict):
        return
    for relative, entry in entries.items():
        task, label = relative.removesuffix(".jsonl").split("/")
        task_entry = tasks.get(task)
        lengths = task_entry.get("lengths") if isinstance(task_entry, dict) else None
        cell = lengths.get(label) if isinstance(lengths, dict) else None
        if isinstance(cell, dict) and "rows" in cell:
            cell["rows"] = entry["rows"]


def _hidden(relative: Path) -> bool:
    """Whether any part of a relative path starts with a dot (``.longbench100-run.json``, temporary files)."""
    return any(part.startswith(".") for part in relative.parts)


def check_filter_out(data_dir: Path, out_dir: Path, predictions: list[Path]) -> None:
    """Before any work: refuse to write into an input, into a non-empty folder or where nothing can be written."""
    guard_output_dir(
        out_dir,
        "--out",
        "data",
        [("--data", data_dir), *(("--predictions", path) for path in predictions)],
    )
    if out_dir.exists() and any(out_dir.iterdir()):
        raise UserError(f"--out {out_dir}: exists and is not an empty folder")


def write_filtered(
    data_dir: Path, out_dir: Path, dropped: set[str], filter_record: dict
) -> dict[str, dict]:
    """Copy ``data_dir`` to ``out_dir`` without the ``dropped`` records; return the new data files'
    entries.

    The copy is built in a staging folder beside ``out_dir`` and renamed to it only once complete,
    so a crash or a full disk leaves no half-written data folder (and a rerun starts afresh)."""
    check_filter_out(data_dir, out_dir, [])
    remove_stale_staging(out_dir)
    try:
        with staged_folder(out_dir, "--out") as staging:
            return _write_copy(data_dir, staging, dropped, filter_record)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise UserError(
            f"--out {out_dir}: cannot write the filtered copy ({reason}); nothing was "
            "kept, rerun when there is room"
        ) from None


def _write_copy(
    data_dir: Path, out_dir: Path, dropped: set[str], filter_record: dict
) -> dict[str, dict]:
    """:func:`write_filtered` into the (staging) folder ``out_dir``."""
    mark_folder(out_dir, "data")
    data_paths = set(data_files(data_dir))
    for source in sorted(data_dir.rglob("*")):
        target = out_dir / source.relative_to(data_dir)
        if (
            source.is_dir()
            or source == data_dir / MANIFEST
            or _hidden(source.relative_to(data_dir))
        ):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source in data_paths and TASKS[source.parent.name].closed_book:
            kept = [
                line
                for line in source.read_bytes().splitlines(keepends=True)
                if _kept(line, dropped)
            ]
            write_bytes_atomic(target, b"".join(kept))
        else:
            shutil.copy2(source, target)
    entries = {
        path.relative_to(out_dir).as_posix(): _file_entry(path) for path in data_files(out_dir)
    }
    manifest_path = data_dir / MANIFEST
    original = read_folder_manifest(data_dir)
    manifest = (
        copy.deepcopy(original) if isinstance(original, dict) else {}
    )  # the original stays verbatim
    manifest["files"] = _updated_files(manifest.get("files"), entries)
    _update_task_rows(manifest.get("tasks"), entries)
    manifest["qa_filter"] = filter_record
    manifest["original_manifest"] = {
        "sha256": hashlib.sha256(manifest_path.read_bytes()).hexdigest()
        if original is not None
        else None,
        "manifest": original,
    }
    write_json_atomic(out_dir / MANIFEST, sealed_manifest(manifest), indent=1)
    return entries


def _kept(line: bytes, dropped: set[str]) -> bool:
    """Whether a data line survives: blank lines go, records whose id is dropped go."""
    return bool(line.strip()) and json.loads(line)["id"] not in dropped
