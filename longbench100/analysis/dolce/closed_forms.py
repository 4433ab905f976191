"""The two closed forms of the Dolce model, exact in rational arithmetic.

``window_cover_probability`` (pi): the chance that a window of ``C`` consecutive units, placed
uniformly among ``L`` units, fully covers at least one of ``k`` non-overlapping spans of ``lambda``
units placed uniformly. ``aspect_score_probability`` (rho~): the chance that a window of ``C`` units
holds at least one copy of exactly ``m`` of ``lambda`` aspects, each present as ``k`` single-unit
copies on distinct, uniformly placed units.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb

import numpy as np
from numpy.typing import ArrayLike


def binomial(n: int, r: int) -> int:
    """``n`` choose ``r``, and 0 outside ``0 <= r <= n``."""
    return comb(n, r) if 0 <= r <= n else 0


@lru_cache(maxsize=None)
def window_cover_probability(lam: int, k: int, length: int, window: int) -> Fraction:
    """pi(lambda, k; L, C) as an exact fraction.

    1 when ``lam == 0`` (nothing to find), 0 when ``window < lam`` or ``k * lam > length`` is impossible.
    """
    if lam == 0:
        return Fraction(1)
    if window < lam or k < 1 or k * lam > length:
        return Fraction(0)
    free = length - window - k * lam + k
    overlap = min(window, 2 * lam - 2)
    numerator = 2 * (k + 1) * binomial(free + lam, k + 1) + (k - 1) * (
        2 * k * lam + 2 * lam + free - 2 * k - k * overlap - 1
    ) * binomial(free + overlap, k)
    denominator = (k + 1) * binomial(free + window, k) * (length - window + 1)
    return 1 - Fraction(numerator, denominator)


@lru_cache(maxsize=None)
def aspect_score_probability(hits: int, lam: int, k: int, length: int, window: int) -> Fraction:
    """rho~: the chance that exactly ``hits`` of ``lam`` aspects have a copy inside the window.

    Inclusion-exclusion over the aspects that must be missed; zero when the layout cannot occur.
    """
    if lam == 0:
        return Fraction(1 if hits == 0 else 0)
    if not 0 <= hits <= lam or k * lam > length or not 0 <= window <= length:
        return Fraction(0)
    total = 0
    for extra in range(hits + 1):
        missed_units = k * (lam - hits + extra)
        total += (-1) ** extra * binomial(hits, extra) * binomial(length - missed_units, window)
    return Fraction(binomial(lam, hits) * total, binomial(length, window))


def aspect_score_density(score: float, lam: int, k: int, length: int, window: int) -> float:
    """rho(s): the continuous (linearly interpolated) density of the window score ``s`` in [0, 1]."""
    if lam == 0:
        return 1.0
    position = score * lam
    low, high = int(position // 1), int(-(-position // 1))
    if low == high:
        return float((lam + 1) * aspect_score_probability(low, lam, k, length, window))
    a, b = low / lam, high / lam
    rho_a = aspect_score_probability(low, lam, k, length, window)
    rho_b = aspect_score_probability(high, lam, k, length, window)
    return float((lam * lam + lam) * ((b - score) * rho_a + (score - a) * rho_b))


def _log_binomial(n: np.ndarray, r: np.ndarray) -> np.ndarray:
    """log of ``n`` choose ``r`` elementwise (integer-valued arrays), ``-inf`` outside ``0 <= r <= n``."""
    inside = (r >= 0) & (r <= n)
    n_safe = np.where(inside, n, 0).astype(np.int64)
    r_safe = np.where(inside, r, 0).astype(np.int64)
    log_factorial = np.concatenate(
        ([0.0], np.cumsum(np.log(np.arange(1, max(int(n_safe.max(initial=0)), 1) + 1))))
    )
    value = log_factorial[n_safe] - log_factorial[r_safe] - log_factorial[n_safe - r_safe]
    return np.where(inside, value, -np.inf)


def window_cover_array(
    lam: ArrayLike, k: ArrayLike, length: ArrayLike, window: ArrayLike
) -> np.ndarray:
    """pi for whole arrays at once (broadcast), in floating point; equal to :func:`window_cover_probability`
    to about 1e-9 (tests compare them)."""
    lam, k, length, window = np.broadcast_arrays(
        *(np.asarray(value, dtype=np.float64) for value in (lam, k, length, window))
    )
    possible = (lam >= 1) & (window >= lam) & (k >= 1) & (k * lam <= length)
    free = length - window - k * lam + k
    overlap = np.minimum(window, 2 * lam - 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        base = _log_binomial(free + window, k)
        first = 2 * np.exp(_log_binomial(free + lam, k + 1) - base)
        factor = (k - 1) / (k + 1) * (2 * k * lam + 2 * lam + free - 2 * k - k * overlap - 1)
        second = factor * np.exp(_log_binomial(free + overlap, k) - base)
        value = 1 - (first + np.where(factor == 0, 0.0, second)) / (length - window + 1)
    value = np.where(possible, np.clip(value, 0.0, 1.0), 0.0)
    return np.where(lam == 0, 1.0, value)
