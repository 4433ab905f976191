"""The prediction files ``PRED/<task>/<label>.jsonl``, written so that a crash never corrupts them.

Each record is appended as one complete line with a single ``write`` on a descriptor opened with
``O_APPEND``, so a process killed at any moment (even ``kill -9``) leaves whole lines only, except
possibly a torn last line after a power cut or a full disk; :meth:`PredictionStore.load` truncates
such a trailing partial line. Rewrites (dropping records to redo them) go through a temporary file
and an atomic rename.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..atomic import write_bytes_atomic
from ..errors import UserError


class PredictionStore:
    """Read, append to and rewrite the per-task, per-length prediction files under ``root``."""

    def __init__(self, root: Path) -> None:
        if root.exists() and not root.is_dir():
            raise UserError(f"--out {root} exists and is not a folder")
        self.root = root
        self._fds: dict[Path, int] = {}

    def path(self, task: str, label: str) -> Path:
        """Return the file that holds the predictions for ``task`` at ``label``."""
        return self.root / task / f"{label}.jsonl"

    def load(self, task: str, label: str) -> list[dict]:
        """Return the records already in the file, in order; a trailing partial line is cut off the file.

        Raises UserError, naming file and line, when a complete line is not a JSON object with an ``id``.
        """
        path = self.path(task, label)
        if not path.exists():
            return []
        data = path.read_bytes()
        complete = data.rfind(b"\n") + 1
        if complete < len(data):
            os.truncate(path, complete)
        records = []
        for line_no, line in enumerate(data[:complete].splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                raise UserError(f"{path}:{line_no}: not a prediction record; fix or delete that line, then rerun")
            records.append(record)
        return records

    def rewrite(self, task: str, label: str, records: list[dict]) -> None:
        """Replace the file's contents with ``records`` atomically (temporary file, fsync, rename)."""
        path = self.path(task, label)
        self._close_fd(path)
        write_bytes_atomic(path, b"".join(_encode(record) for record in records))

    def append(self, task: str, label: str, record: dict) -> None:
        """Append one record as one line, with one write to an ``O_APPEND`` descriptor."""
        path = self.path(task, label)
        fd = self._fds.get(path)
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = self._fds[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        data = memoryview(_encode(record))
        while data:  # a regular file takes the whole line at once; loop only in case of a short write
            data = data[os.write(fd, data) :]

    def _close_fd(self, path: Path) -> None:
        """Flush to disk and close the append descriptor for ``path``, if open."""
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.fsync(fd)
            os.close(fd)

    def close(self) -> None:
        """Flush every file to disk and close it."""
        for path in list(self._fds):
            self._close_fd(path)


def _encode(record: dict) -> bytes:
    """Return ``record`` as one JSON line (UTF-8, newline-terminated)."""
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()
