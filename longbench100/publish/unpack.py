"""Rebuild the original data folder (``<task>/<label>.jsonl`` and ``manifest.json``) from a verified snapshot.

The rebuilt files are byte-identical to what the generator wrote; each is checked against the sha256
in the generation manifest, so ``predict`` and ``score`` see exactly the published data.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .checksums import SnapshotChanged
from .parquet import read_records
from .snapshot import GENERATION_MANIFEST
from .source import MANIFEST
from .staging import staged_folder


def unpack_snapshot(snapshot: Path, manifest: dict, out: Path) -> int:
    """Write ``out/<task>/<label>.jsonl`` for every Parquet file of the (verified) snapshot and the generation
    manifest; return the number of records. Data files that were empty when published come back empty."""
    expected = {relative: entry["sha256"] for relative, entry in manifest["generation"]["files"].items()}
    records = 0
    with staged_folder(out, "--unpack-to") as staging:
        for relative, entry in manifest["files"].items():
            if "source" not in entry:
                continue
            lines = [json.dumps(record, ensure_ascii=False) + "\n" for record in read_records(snapshot / relative)]
            _write_checked(staging, entry["source"], "".join(lines).encode("utf-8"), expected[entry["source"]])
            records += len(lines)
        for empty in manifest.get("empty_splits", []):
            _write_checked(staging, f"{empty}.jsonl", b"", expected[f"{empty}.jsonl"])
        (staging / MANIFEST).write_bytes((snapshot / GENERATION_MANIFEST).read_bytes())
    return records


def _write_checked(root: Path, relative: str, data: bytes, sha256: str) -> None:
    """Write ``root/relative`` after checking ``data`` against the generation manifest's sha256 for it."""
    if hashlib.sha256(data).hexdigest() != sha256:
        raise SnapshotChanged(f"{relative}: the rebuilt file differs from the sha256 in the generation manifest")
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_bytes(data)
