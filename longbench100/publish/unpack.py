"""Rebuild the original data folder (``<task>/<label>.jsonl``, the control twins'
``controls/<task>/<label>.jsonl`` when they were published, and ``manifest.json``) from a verified
snapshot.

The rebuilt files are byte-identical to what the generator wrote; each is checked against the sha256
in the generation manifest, so ``predict`` and ``score`` see exactly the published data.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterator

from longbench100.folders.layout import decode_json, read_bytes

from .checksums import SnapshotChanged
from .parquet import read_records
from .snapshot import GENERATION_MANIFEST
from .source import MANIFEST
from .staging import staged_folder


def rebuilt_files(snapshot: Path, manifest: dict) -> Iterator[tuple[tuple[str, bytes], int]]:
    """Each data file (and control twin file) of the (verified) snapshot rebuilt from its Parquet
    file, as ``((relative path, bytes), records)``, checked against the generation manifest's sha256
    for it. Data files that were empty when published come back empty. A Parquet file changed after
    publishing is caught here even when the snapshot's own checksum list was updated to match it."""
    path = snapshot / GENERATION_MANIFEST
    generation = decode_json(read_bytes(path), str(path))
    if generation != manifest["generation"]:
        raise SnapshotChanged(
            f"{GENERATION_MANIFEST}: differs from the generation manifest inside {MANIFEST}"
        )
    generation_files = {
        **manifest["generation"]["files"],
        **(manifest["generation"].get("controls") or {}).get("files", {}),
    }
    expected = {relative: entry["sha256"] for relative, entry in generation_files.items()}
    for relative, entry in manifest["files"].items():
        if "source" not in entry:
            continue
        lines = [
            json.dumps(record, ensure_ascii=False) + "\n"
            for record in read_records(snapshot / relative)
        ]
        data = "".join(lines).encode("utf-8")
        yield _checked(entry["source"], data, expected, relative), len(lines)
    for empty in manifest.get("empty_splits", []):
        yield _checked(f"{empty}.jsonl", b"", expected, "empty_splits"), 0


def check_snapshot_contents(snapshot: Path, manifest: dict) -> int:
    """Rebuild every data file in memory and check it (:func:`rebuilt_files`); return the number of
    records."""
    return sum(records for _, records in rebuilt_files(snapshot, manifest))


def unpack_snapshot(snapshot: Path, manifest: dict, out: Path) -> int:
    """Write ``out/<task>/<label>.jsonl`` for every Parquet file of the (verified) snapshot and the generation
    manifest; return the number of records."""
    records = 0
    with staged_folder(out, "--unpack-to") as staging:
        for (relative, data), count in rebuilt_files(snapshot, manifest):
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            (staging / relative).write_bytes(data)
            records += count
        (staging / MANIFEST).write_bytes((snapshot / GENERATION_MANIFEST).read_bytes())
    return records


def _checked(
    relative: str, data: bytes, expected: dict[str, str], origin: str
) -> tuple[str, bytes]:
    """``(relative, data)`` once ``data`` matches the generation manifest's sha256 for
    ``relative``."""
    if hashlib.sha256(data).hexdigest() != expected.get(relative):
        raise SnapshotChanged(
            f"{relative}: the records rebuilt from {origin} differ from the "
            "sha256 in the generation manifest (changed after publishing)"
        )
    return relative, data
