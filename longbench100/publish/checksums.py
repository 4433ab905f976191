"""The snapshot manifest (``SNAPSHOT/manifest.json``): sha256 of every snapshot file, and checking them again."""

from __future__ import annotations

import json
from pathlib import Path

from longbench100.core.digests import file_sha256
from longbench100.core.errors import UserError
from longbench100.core.json_shape import check_shape
from longbench100.folders.layout import CONTROLS_FOLDER, decode_json, read_bytes

MANIFEST = "manifest.json"
FORMAT = "longbench100-snapshot/1"
_SNAPSHOT_SHAPE = {
    "files": {"*": {"sha256": str, "source?": str}},
    "generation": {
        "files": {"*": {"sha256": str}},
        "controls?": {"files": {"*": {"sha256": str}}},
    },
    "control_twins?": bool,
    "empty_splits?": [str],
}
"""The parts of a snapshot manifest that verifying and unpacking read."""


class SnapshotChanged(UserError):
    """A file listed in the snapshot manifest is missing or no longer has its recorded sha256."""


def write_snapshot_manifest(
    snapshot: Path, header: dict, files: dict[str, dict], generation: dict
) -> dict:
    """Write ``manifest.json``: ``header`` keys, then ``files`` (each given a ``sha256``), then the generation manifest."""
    entries = {
        relative: {"sha256": file_sha256(snapshot / relative), **extra}
        for relative, extra in files.items()
    }
    manifest = {"format": FORMAT, **header, "files": entries, "generation": generation}
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    (snapshot / MANIFEST).write_text(text, encoding="utf-8")
    return manifest


def read_snapshot_manifest(snapshot: Path) -> dict:
    """Read and sanity-check ``SNAPSHOT/manifest.json``."""
    if not snapshot.is_dir():
        raise UserError(f"{snapshot}: no such folder")
    path = snapshot / MANIFEST
    if not path.is_file():
        raise SnapshotChanged(f"{path}: missing (not a longbench100 snapshot?)")
    try:
        manifest = decode_json(read_bytes(path), str(path))
    except UserError as error:
        raise SnapshotChanged(str(error)) from None
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != FORMAT
        or not isinstance(manifest.get("files"), dict)
    ):
        raise UserError(f"{path}: not a {FORMAT} manifest")
    check_shape(manifest, _SNAPSHOT_SHAPE, str(path))
    return manifest


def verify_snapshot(snapshot: Path) -> dict:
    """Recompute the sha256 of every file the manifest lists; raise :class:`SnapshotChanged` at the first
    missing or changed one. Returns the manifest."""
    manifest = read_snapshot_manifest(snapshot)
    for relative, entry in manifest["files"].items():
        path = snapshot / relative
        if not path.is_file():
            raise SnapshotChanged(f"{relative}: missing from {snapshot}")
        if file_sha256(path) != entry.get("sha256"):
            raise SnapshotChanged(f"{relative}: changed (sha256 differs from {MANIFEST})")
    return manifest


def record_files(snapshot: Path, manifest: dict, controls: bool, option: str) -> list[str]:
    """The Parquet files of a (verified) snapshot's data records and, with ``controls``, of its
    control twins after them, as paths relative to ``snapshot``; a one-line error naming ``option``
    when twins are asked for and the snapshot was published without them."""
    files = [relative for relative, entry in manifest["files"].items() if "source" in entry]
    twins = [relative for relative in files if is_twin_file(relative)]
    if controls and not twins:
        raise UserError(
            f"{option}: {snapshot} is a snapshot published without its control twins; "
            "publish it again with --controls"
        )
    data = [relative for relative in files if not is_twin_file(relative)]
    return data + twins if controls else data


def is_twin_file(relative: str) -> bool:
    """Whether a snapshot file (``controls/<task>/<label>.parquet``) holds control twins."""
    return relative.startswith(f"{CONTROLS_FOLDER}/")
