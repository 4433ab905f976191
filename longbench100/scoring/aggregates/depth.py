"""Score by gold depth: the mean score of the samples whose ground truth starts in each tenth of the context.

This is the "lost in the middle" view: a model that reads the whole context scores the same in every
decile, one that attends to the edges dips in the middle deciles. :func:`decile_bins` bins one
(task, length) cell; :func:`~longbench100.scoring.aggregates.aggregate.aggregate` stores the bins of every cell
under its ``"depth"`` key (docs/aggregates.md).
"""

from bisect import bisect_right

N_BINS = 10
"""Number of depth bins: deciles of the 0-1 gold depth."""

EDGES = tuple(index / N_BINS for index in range(N_BINS + 1))
"""Bin edges 0.0, 0.1, ..., 1.0: bin i holds lo <= depth < hi, the last bin also depth == 1.0."""


def decile_of(depth: float) -> int:
    """Return the bin (0-9) of a gold depth in [0, 1]; 1.0 falls in the last bin. Refuse other values."""
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"gold depth {depth} is outside 0-1")
    return min(bisect_right(EDGES, depth) - 1, N_BINS - 1)


def decile_bins(pairs: list[tuple[float, float]]) -> list[dict]:
    """Bin ``(depth, score)`` pairs (score 0-1) into the ten deciles of depth.

    Returns ten dicts ``{"lo", "hi", "n", "score"}`` in depth order; ``score`` is the mean in points
    (0-100) of the bin's samples, or ``None`` for a bin without samples (``n`` 0).
    """
    totals = [0.0] * N_BINS
    counts = [0] * N_BINS
    for depth, score in pairs:
        index = decile_of(depth)
        totals[index] += score
        counts[index] += 1
    return [
        {
            "lo": EDGES[index],
            "hi": EDGES[index + 1],
            "n": counts[index],
            "score": totals[index] / counts[index] * 100.0 if counts[index] else None,
        }
        for index in range(N_BINS)
    ]
