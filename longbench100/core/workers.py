"""Worker processes that never outlive their parent, and a pool that stops at once when interrupted.

A killed parent (``kill -9``) cannot tell its workers to stop, and a worker blocked on a pipe to it
would wait for ever. So each worker asks Linux to kill it when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), and elsewhere watches its parent's id from a thread. Workers ignore
Ctrl-C, which the terminal sends to the whole process group: the parent alone decides to stop.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

_PR_SET_PDEATHSIG = 1
PARENT_POLL_S = 0.5
"""How often a worker without ``prctl`` checks that its parent is alive."""


def die_with_parent(parent_pid: int) -> None:
    """Pool initializer: end this worker when the process ``parent_pid`` ends, and leave Ctrl-C to it.

    SIGTERM gets its default action back (a forked worker inherits the parent's Python handler).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _kill_me_when_parent_dies():
        threading.Thread(
            target=_watch_parent, args=(parent_pid,), name="parent-watch", daemon=True
        ).start()
    if os.getppid() != parent_pid:  # the parent died before the request above took effect
        os._exit(1)


def _kill_me_when_parent_dies() -> bool:
    """Ask Linux to send this process SIGKILL when its parent ends; ``False`` where that is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes.util  # here: only a worker needs it

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    """Exit the process as soon as its parent is no longer ``parent_pid`` (it died; the process was re-parented)."""
    while os.getppid() == parent_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _start_worker(
    parent_pid: int, initializer: Callable[..., None] | None, initargs: tuple
) -> None:
    """Pool initializer: :func:`die_with_parent`, then the caller's ``initializer(*initargs)``."""
    die_with_parent(parent_pid)
    if initializer is not None:
        initializer(*initargs)


@contextmanager
def worker_pool(
    workers: int,
    start_method: str = "fork",
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers die with this process; on any exception it drops the queued jobs.

    ``initializer(*initargs)`` runs in each worker as it starts (with ``fork``, ``initargs`` reach
    the workers by inheritance, not pickled).

    A normal exit waits for the workers as usual. An exception (Ctrl-C, SIGTERM turned into
    :class:`KeyboardInterrupt`, an error) cancels every job not yet handed to a worker and waits only
    for the few in hand (at most ``workers + 1``), instead of running everything already submitted.
    The workers are not killed: one killed while sending its result leaves the pool's result pipe
    torn, and the pool (CPython 3.11) then waits for ever at interpreter exit.
    """
    import multiprocessing  # here: a run in one process needs none of the pool machinery
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context(start_method),
        initializer=_start_worker,
        initargs=(os.getpid(), initializer, initargs),
    )
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
