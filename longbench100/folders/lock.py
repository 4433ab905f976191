"""One run at a time per output: an exclusive OS file lock that the kernel releases when the holder dies.

The lock is a hidden file beside the output (``.<name>.longbench100.lock`` in the same folder), so it
adds nothing inside the output and works the same for folders and files, and for outputs that do not
exist yet. ``flock`` locks belong to the open file: when the process ends, however it ends (``kill -9``
included), the kernel drops the lock, so a stale lock never blocks a later run. The file holds the
holder's pid for the message and is removed when the holder finishes normally; a file left by a killed
run is simply locked again.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from longbench100.core.errors import UserError


def lock_path(output: Path) -> Path:
    """The lock file of an output folder or file."""
    output = output.absolute()
    return output.parent / f".{output.name}.longbench100.lock"


def _open_locked(path: Path, output: Path, option: str, wait: bool) -> int:
    """Open ``path`` and take its exclusive lock; retry when the file was removed meanwhile by its last holder."""
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise UserError(
                f"{option} {output}: cannot create its lock file {path} ({error.strerror})"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as error:
            holder = os.pread(handle, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(handle)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            raise UserError(
                f"{option} {output}: another longbench100 run (pid {holder}) is writing there; "
                "wait for it to finish, or pass --wait to wait for it"
            ) from None
        try:
            if os.stat(path).st_ino == os.fstat(handle).st_ino:
                return handle
        except FileNotFoundError:
            pass
        os.close(handle)  # the holder we waited for removed this file: lock the current one


@contextmanager
def output_lock(output: Path, option: str, wait: bool = False) -> Iterator[None]:
    """Hold the exclusive lock of ``output`` while the block runs.

    Another run holding it makes this one fail at once with a one-line :class:`UserError` naming its pid,
    or, with ``wait``, wait until it is released.
    """
    path = lock_path(output)
    handle = _open_locked(path, output, option, wait)
    try:
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        try:
            os.unlink(path)  # still locked: a waiter sees the file gone and locks a new one
        except OSError:
            pass
        os.close(handle)  # closing releases the lock
