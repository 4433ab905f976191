"""Atomic file writes: a temporary file in the target folder, then a rename, so readers never see half a file.

The temporary file is created with mode 0666 less the umask (0644 under the usual umask 022), like
any file the user creates, so manifest.json or results.json are as readable as the data beside them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically and durably (fsync before the rename), creating the parent folder when needed."""
    write_lines_atomic(path, (data,))


def write_lines_atomic(path: Path, lines: Iterable[bytes]) -> None:
    """:func:`write_bytes_atomic` of ``lines`` joined, each written as it comes (a long file is
    never held whole in memory: up to :data:`MOST_PARTS` of them at a time, in one system call);
    nothing is left at ``path`` when ``lines`` raises."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary, handle = _create_temporary(path)
    try:
        try:
            batch: list[bytes] = []
            for line in lines:
                batch.append(line)
                if len(batch) == MOST_PARTS:
                    write_parts(handle, batch)
                    batch = []
            write_parts(handle, batch)
            os.fsync(handle)
        finally:
            os.close(handle)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


MOST_PARTS = 1024
"""Most buffers one ``writev`` call takes (the least ``IOV_MAX`` POSIX allows)."""


def write_parts(handle: int, parts: Sequence[bytes]) -> None:
    """Write ``parts`` one after another to the open file descriptor ``handle``, as they are (not
    joined first), :data:`MOST_PARTS` at a time, until every byte is written."""
    views = [memoryview(part) for part in parts if part]
    start = 0
    while start < len(views):
        written = os.writev(handle, views[start : start + MOST_PARTS])
        while start < len(views) and written >= len(views[start]):
            written -= len(views[start])
            start += 1
        if written:
            views[start] = views[start][written:]


def _create_temporary(path: Path) -> tuple[Path, int]:
    """Create a new hidden file beside ``path`` (mode 0666 less the umask) and return it with its descriptor."""
    return create_new_file(lambda tag: path.with_name(f".{path.name}.{tag}.tmp"))


def create_new_file(named: Callable[[str], Path], mode: int = 0o666) -> tuple[Path, int]:
    """Create the file ``named(tag)`` for a random ``tag`` (another while one exists) and return
    it with its descriptor open for writing (``mode`` less the umask)."""
    while True:
        path = named(os.urandom(6).hex())
        try:
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue


def write_json_atomic(path: Path, value: object, *, indent: int | None = None) -> None:
    """Write ``value`` as JSON to ``path`` atomically (compact unless ``indent`` is given)."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)
    write_bytes_atomic(path, (text + ("\n" if indent is not None else "")).encode("utf-8"))
