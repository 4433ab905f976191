"""Which windows to probe: window sizes from the grid and window starts on a stride."""

from __future__ import annotations

import random

from longbench100.core.errors import UserError

DEFAULT_WINDOWS = "0,1,2,5,10,20,50,100,200,500,all"
WHOLE = "all"
MIN_STRIDED_WINDOWS = (
    10  # a stride never leaves a window size with fewer windows than this (or than it has)
)


def parse_windows(text: str) -> tuple[tuple[int, ...], bool]:
    """Parse ``--windows``: comma-separated unit counts, and ``all`` for the whole context.

    Returns the sorted distinct sizes and whether ``all`` was given.
    """
    sizes: set[int] = set()
    whole = False
    for part in (piece.strip() for piece in text.split(",")):
        if part == WHOLE:
            whole = True
        elif part.isdigit():
            sizes.add(int(part))
        else:
            raise UserError(f"--windows {text}: {part!r} is not a whole number of units or 'all'")
    if not sizes and not whole:
        raise UserError("--windows: give at least one window size")
    return tuple(sorted(sizes)), whole


def window_sizes(sizes: tuple[int, ...], whole: bool, length: int) -> list[int]:
    """The sizes that apply to a context of ``length`` units: those below ``length``, then ``length``
    itself when ``all`` was asked for (a size at or above ``length`` also means the whole context)."""
    chosen = sorted({size for size in sizes if size < length})
    if whole or any(size >= length for size in sizes):
        chosen.append(length)
    return chosen


def window_starts(size: int, length: int, stride: int, cap: int | None = None) -> list[int]:
    """Starts of the windows of ``size`` units: every ``stride``-th of the ``length - size + 1`` positions,
    thinned to ``cap`` evenly spaced ones when there are more; a single probe for size 0.

    The stride shrinks where it would leave fewer than ``MIN_STRIDED_WINDOWS`` windows of the size (all
    of them when there are fewer): in a short context a stride of 5 would keep one or two windows per
    size, too few for the fit to tell a span from its neighbours (docs/dolce.md, "Sampling cost").
    """
    if size == 0:
        return [0]  # closed book: one probe
    positions = length - size + 1
    every = max(
        min(stride, (positions - 1) // (MIN_STRIDED_WINDOWS - 1)), 1
    )  # range(0, n, s) keeps ceil(n / s)
    starts = list(range(0, positions, every))
    if cap is not None and len(starts) > cap:
        step = (len(starts) - 1) / max(cap - 1, 1)
        starts = sorted({starts[round(index * step)] for index in range(cap)})
    return starts


def probe_windows(
    sizes: tuple[int, ...],
    whole: bool,
    length: int,
    stride: int = 1,
    max_per_problem: int | None = None,
) -> list[tuple[int, int]]:
    """Every probed ``(size, start)`` for a context of ``length`` units, smallest size first.

    ``max_per_problem`` shares a budget equally across sizes (each keeps at least one window).
    """
    chosen = window_sizes(sizes, whole, length)
    cap = max(max_per_problem // len(chosen), 1) if max_per_problem and chosen else None
    return [(size, start) for size in chosen for start in window_starts(size, length, stride, cap)]


def covers(start: int, size: int, spans: list[tuple[int, int]]) -> bool:
    """Whether the window ``[start, start + size)`` fully holds at least one ``[a, b)`` of ``spans``."""
    return any(start <= a and b <= start + size for a, b in spans)


def noisy_outcome(correct: bool, noise: float, rng: random.Random) -> float | None:
    """The oracle's outcome: 1 when it sees the gold material, IDK (None) otherwise; with probability
    ``noise`` instead a uniformly random one of correct, wrong and IDK."""
    if noise > 0 and rng.random() < noise:
        return rng.choice((1.0, 0.0, None))
    return 1.0 if correct else None
