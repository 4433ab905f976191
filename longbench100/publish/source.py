"""Read a generated data folder for publishing: its manifest and the data files it lists (and, when
asked, its control twins), checked by sha256."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError
from longbench100.core.lengths import normalized_label, parse_length
from longbench100.folders.layout import (
    CONTROLS_FOLDER,
    check_data_files,
    controls_folder,
    list_data_files,
    read_bytes,
    read_folder_manifest,
)

MANIFEST = "manifest.json"
REQUIRED_KEYS = ("version", "options", "tokenizer", "sources", "files")


@dataclass(frozen=True)
class DataFile:
    """One ``<task>/<label>.jsonl`` file listed in the manifest."""

    task: str
    label: str
    path: Path
    relative: str
    sha256: str


@dataclass(frozen=True)
class DataFolder:
    """A generated data folder: the manifest (parsed and as bytes), its data files and the control
    twins' files to publish (none unless asked), each in task, then length order."""

    root: Path
    manifest: dict
    manifest_bytes: bytes
    files: list[DataFile]
    twins: list[DataFile]


def read_data_folder(root: Path, controls: bool = False) -> DataFolder:
    """Read ``root/manifest.json`` and check that every data file it lists exists with the recorded
    sha256; with ``controls``, every control twin file it lists too (``--controls``)."""
    if not root.is_dir():
        raise UserError(f"--data {root}: no such folder")
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise UserError(
            f"--data {root}: no {MANIFEST} (publish needs a folder written by `longbench100 generate`)"
        )
    manifest = read_folder_manifest(root)
    assert manifest is not None, "the manifest file was found just above"
    manifest_bytes = read_bytes(manifest_path)
    missing = [key for key in REQUIRED_KEYS if key not in manifest]
    if missing:
        raise UserError(
            f"{manifest_path}: not a longbench100 generation manifest (missing {', '.join(missing)})"
        )
    if not isinstance(manifest["files"], dict) or not manifest["files"]:
        raise UserError(f"{manifest_path}: 'files' lists no data files")
    files = [
        _data_file(root, relative, entry, manifest_path)
        for relative, entry in manifest["files"].items()
    ]
    files.sort(key=_file_order)
    check_data_files(root, manifest, list_data_files(root))
    return DataFolder(
        root, manifest, manifest_bytes, files, _twin_files(root, manifest) if controls else []
    )


def _twin_files(root: Path, manifest: dict) -> list[DataFile]:
    """The control twin files the manifest lists (``controls.files``), checked by sha256 like the
    data files; a one-line error when the folder has none."""
    controls = manifest.get("controls")
    listed = controls.get("files") if isinstance(controls, dict) else None
    if not isinstance(listed, dict) or not listed:
        raise UserError(
            f"--controls: {root} holds no control twins (its {MANIFEST} lists none); "
            "generate writes them unless --no-controls"
        )
    twins = [
        _data_file(root, relative, entry, root / MANIFEST, CONTROLS_FOLDER)
        for relative, entry in listed.items()
    ]
    check_data_files(root, {"files": listed}, list_data_files(controls_folder(root)))
    return sorted(twins, key=_file_order)


def _file_order(item: DataFile) -> tuple[int, int]:
    """A file's place: the task's in the task list, then its length."""
    return list(TASKS).index(item.task), parse_length(item.label)


def _data_file(
    root: Path, relative: str, entry: object, manifest_path: Path, folder: str = ""
) -> DataFile:
    """Parse one ``files`` entry (``[<folder>/]<task>/<label>.jsonl`` -> ``{"sha256": ...}``)."""
    prefix = f"{folder}/" if folder else ""
    parts = relative.removeprefix(prefix).split("/") if relative.startswith(prefix) else []
    task, name = parts if len(parts) == 2 else ("", "")
    label = name.removesuffix(".jsonl")
    if task not in TASKS or not name.endswith(".jsonl") or not _is_label(label):
        raise UserError(f"{manifest_path}: file {relative!r} is not {prefix}<task>/<label>.jsonl")
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        raise UserError(f"{manifest_path}: file {relative!r} has no sha256")
    return DataFile(task, label, root / relative, relative, entry["sha256"])


def _is_label(label: str) -> bool:
    """Whether ``label`` is a canonical length label (``8k``, ``5000``), as the generator names its files."""
    try:
        return normalized_label(label) == label
    except UserError:
        return False
