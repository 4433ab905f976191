"""The prediction files ``PRED/<task>/<label>.jsonl``, written so that a crash never corrupts them.

Each record is appended as one complete line with a single ``write`` on a descriptor opened with
``O_APPEND``, so a process killed at any moment (even ``kill -9``) leaves whole lines only, except
possibly a torn last line after a power cut or a full disk; :meth:`PredictionStore.load` truncates
such a trailing partial line (a last line that is a whole record but lacks its newline, e.g. after a
hand edit, is kept and given its newline). A sample that is redone gets a second record appended;
the last record of an id wins, and :meth:`PredictionStore.compact` drops the superseded ones through
a temporary file and an atomic rename, so no record is ever removed before its replacement is on disk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from longbench100.core.atomic import write_bytes_atomic
from longbench100.core.errors import UserError


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
        """Return the records already in the file, in order (duplicate ids included).

        A last line without its newline is kept, and given the newline, when it is whole JSON; one that
        does not parse is a torn write and is cut off the file. Raises UserError, naming file and line,
        when a complete line is not a JSON object with an ``id``.
        """
        path = self.path(task, label)
        if not path.exists():
            return []
        data = path.read_bytes()
        complete = data.rfind(b"\n") + 1
        if complete < len(data):
            if _is_json(data[complete:]):  # a whole line that only lacks its newline: keep it
                self._close_fd(path)
                with path.open("ab") as handle:
                    handle.write(b"\n")
                    handle.flush()
                    os.fsync(handle.fileno())
                data += b"\n"
                complete = len(data)
            else:
                os.truncate(path, complete)
        records = []
        for line_no, line in enumerate(data[:complete].splitlines(), start=1):
            if not line.strip():
                continue
            record = _parse(line)
            if record is None:
                raise UserError(
                    f"{path}:{line_no}: not a prediction record; fix or delete that line, then rerun"
                )
            records.append(record)
        return records

    def rewrite(self, task: str, label: str, records: list[dict]) -> None:
        """Replace the file's contents with ``records`` atomically (temporary file, fsync, rename)."""
        path = self.path(task, label)
        self._close_fd(path)
        write_bytes_atomic(path, b"".join(_encode(record) for record in records))

    def compact(self, task: str, label: str) -> bool:
        """Keep only the last record of each id (in the position of its first one); return whether any was dropped.

        The file is rewritten atomically, and only when it holds superseded records.
        """
        records = self.load(task, label)
        latest = {record["id"]: record for record in records}
        if len(latest) == len(records):
            return False
        self.rewrite(task, label, list(latest.values()))
        return True

    def append(self, task: str, label: str, record: dict) -> None:
        """Append one record as one line, with one write to an ``O_APPEND`` descriptor."""
        path = self.path(task, label)
        fd = self._fds.get(path)
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = self._fds[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        data = memoryview(_encode(record))
        while (
            data
        ):  # a regular file takes the whole line at once; loop only in case of a short write
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


def _is_json(line: bytes) -> bool:
    """Whether ``line`` parses as JSON (a torn prefix of a record, which starts with ``{``, never does)."""
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _parse(line: bytes) -> dict | None:
    """Return ``line`` as a prediction record (a JSON object with a string ``id``), or ``None``."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        return None
    return record


def _encode(record: dict) -> bytes:
    """Return ``record`` as one JSON line (UTF-8, newline-terminated)."""
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()
