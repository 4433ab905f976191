"""Atomic file writes: a temporary file in the target folder, then a rename, so readers never see half a file."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically and durably (fsync before the rename), creating the parent folder when needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False)
    try:
        with handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, value: object, *, indent: int | None = None) -> None:
    """Write ``value`` as JSON to ``path`` atomically (compact unless ``indent`` is given)."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)
    write_bytes_atomic(path, (text + ("\n" if indent is not None else "")).encode("utf-8"))
