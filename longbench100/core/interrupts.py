"""Stopping on Ctrl-C or SIGTERM: both unwind like :class:`KeyboardInterrupt`, and the user is told how to go on.

The command line installs :func:`sigterm_as_interrupt` around every command, so ``kill PID`` runs
the same clean-up as Ctrl-C (partial files closed, worker processes stopped). A library function
that can be resumed re-raises the interrupt as :class:`Interrupted` with a hint ("rerun with
--resume"); the command line prints that hint as one line and exits 130 (Ctrl-C) or 143 (SIGTERM).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM."""


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C or SIGTERM, with what the user can do next."""

    def __init__(self, hint: str, cause: KeyboardInterrupt) -> None:
        super().__init__(hint)
        self.hint = hint
        self.terminated = isinstance(cause, Terminated)


def interrupt_message(stop: KeyboardInterrupt) -> str:
    """The one line to print for ``stop``: "interrupted" (or "terminated") and the hint when there is one."""
    terminated = stop.terminated if isinstance(stop, Interrupted) else isinstance(stop, Terminated)
    hint = stop.hint if isinstance(stop, Interrupted) else ""
    return ("terminated" if terminated else "interrupted") + (f": {hint}" if hint else "")


def interrupt_exit_code(stop: KeyboardInterrupt) -> int:
    """The shell's convention: 128 + the signal number (130 for SIGINT, 143 for SIGTERM)."""
    terminated = stop.terminated if isinstance(stop, Interrupted) else isinstance(stop, Terminated)
    return 128 + (signal.SIGTERM if terminated else signal.SIGINT)


def _raise_terminated(signal_number: int, frame: object) -> None:
    """SIGTERM handler: unwind the main thread like Ctrl-C does."""
    raise Terminated()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: no change)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
