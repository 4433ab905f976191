"""Leave the process without tearing the interpreter down.

A command ends holding everything it loaded: tokenizer tables, token-count caches, sentence pools,
source records (hundreds of MB for a 128k run). A normal interpreter exit frees each of those
objects one by one before the process ends, which takes longer than some whole commands (about
0.07 s after a warm 128k ``generate``); the operating system frees the same memory at once when
the process ends. So the console entry runs what a normal exit runs before the freeing, in the same order (waiting
for threads that are not daemons, with the clean-up they registered; the ``atexit`` handlers, such as
multiprocessing's and logging's; flushing the standard streams), and ends the process with the same
exit status. Where this Python lacks the hooks used for that, it exits the usual way.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable

STREAM_FAILURE_STATUS = 120
"""The status Python itself exits with when it cannot flush standard output at exit (a closed pipe)."""


def exit_status(code: object) -> int:
    """The process status ``sys.exit(code)`` ends with: 0 for ``None``, an int as is, anything else printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_and_leave(command: Callable[[], object]) -> None:
    """Run ``command`` (a click entry point, which ends with :class:`SystemExit`), then leave at once with its status.

    An exception other than :class:`SystemExit` propagates and the interpreter exits as usual (its
    traceback is printed as usual)."""
    try:
        command()
        status = 0
    except SystemExit as stop:
        status = exit_status(stop.code)
    wait_for_threads = getattr(threading, "_shutdown", None)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if wait_for_threads is None or run_exit_handlers is None:
        sys.exit(status)
    wait_for_threads()
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except (OSError, ValueError):
            status = status or STREAM_FAILURE_STATUS
    os._exit(status)
