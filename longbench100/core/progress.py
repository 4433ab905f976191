"""Progress for long network work: a tqdm bar on a terminal, plain lines in a log or a pipe.

A bar redraws itself with carriage returns, which a log file or CI output shows as one endless line
(or not at all: tqdm disables itself when stderr is not a terminal). Off a terminal the same calls
print one line when the work starts, one at most every :data:`EVERY_S` seconds, and one at the end.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm

EVERY_S = 10.0


class PlainProgress:
    """The part of tqdm's interface the runners use, printing whole lines to stderr."""

    def __init__(
        self, total: int, desc: str, unit: str, initial: int = 0, silent: bool = False
    ) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.n = initial
        self.postfix: dict[str, Any] = {}
        self._silent = silent
        self._started = self._printed = time.monotonic()
        self._line(f"{total} {unit}s to do")

    def _line(self, text: str) -> None:
        if not self._silent:
            print(f"{self.desc}: {text}", file=sys.stderr, flush=True)

    def _status(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        extra = "".join(f", {value} {key}" for key, value in self.postfix.items())
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        return f"{self.n}/{self.total} {self.unit}s{share}{extra}, {self.n / elapsed:.1f}/s"

    def update(self, count: int = 1) -> None:
        """Count ``count`` more finished units; print a line when the last one is old enough."""
        self.n += count
        if time.monotonic() - self._printed >= EVERY_S:
            self._printed = time.monotonic()
            self._line(self._status())

    def set_postfix(self, refresh: bool = True, **values: Any) -> None:
        """Show ``values`` (e.g. ``failed=3``) in the following lines."""
        self.postfix = values

    def close(self) -> None:
        """Print the closing line."""
        self._line(
            self._status() + " - done" if self.n >= self.total else self._status() + " - stopped"
        )

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def progress_bar(
    total: int,
    desc: str,
    unit: str,
    show: bool | None = None,
    *,
    initial: int = 0,
    leave: bool = True,
) -> tqdm | PlainProgress:
    """A tqdm bar on a terminal, plain lines elsewhere; ``show`` False shows nothing, None means shown.
    ``initial`` units are done already (a resumed run); ``leave`` False clears a terminal bar when it closes."""
    if show is False:
        return PlainProgress(total, desc, unit, initial, silent=True)
    if sys.stderr.isatty():
        from tqdm import tqdm  # only a terminal shows a bar: a quiet or logged run never loads tqdm

        return tqdm(
            total=total, initial=initial, desc=desc, unit=unit, dynamic_ncols=True, leave=leave
        )
    return PlainProgress(total, desc, unit, initial)
