"""The Dolce EM fit: per problem (lambda, k) by brute force over the candidate grid, vectorised with numpy.

A task's problems are fitted together (they share the background noise). Observations are reduced
to counts per (window size, outcome) for COW problems; PIG problems keep soft counts per window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .closed_forms import aspect_score_density, window_cover_array

COW_ITERATIONS = 10
PIG_ITERATIONS = 5
START_POSTERIOR = 0.9  # q(O | x) before the first M-step (the spec's 0.5 lets the noise swallow the IDKs)
OUTCOMES = ("correct", "wrong", "idk")  # the COW outcome columns
_TINY = 1e-300
_SMOOTH = 1e-6


@dataclass(frozen=True)
class Problem:
    """One problem's probe outcomes: ``outcomes[j]`` is a 0-1 score or ``None`` (IDK) at ``windows[j]``."""

    id: str
    length: int
    windows: tuple[int, ...]
    outcomes: tuple[float | None, ...]


@dataclass(frozen=True)
class Fit:
    """The fitted parameters of one problem."""

    lam: int
    k: int
    oracle_weight: float  # P_i(O): share of outcomes explained by the oracle
    oracle_below: tuple[float, float, float] | None  # COW: oracle categorical for C < lambda
    log_likelihood: float


def candidates(windows: tuple[int, ...] | list[int], length: int) -> list[int]:
    """Candidate values: the observed window sizes plus 0, (largest partial window + 1) and L."""
    partial = [window for window in windows if window < length]
    extra = {0, length, (max(partial) + 1) if partial else 1}
    return sorted({window for window in windows if window <= length} | {value for value in extra if value <= length})


def candidate_pairs(windows: tuple[int, ...] | list[int], length: int) -> list[tuple[int, int]]:
    """Every (lambda, k) from the candidates with ``k * lambda <= L``; (0, 0) for lambda = 0. Ordered by lambda, then k."""
    values = candidates(windows, length)
    pairs = [(0, 0)]
    for lam in values:
        pairs += [(lam, k) for k in values if lam > 0 and k > 0 and k * lam <= length]
    return pairs


def _window_table(problems: list[Problem]) -> np.ndarray:
    """Per problem its distinct window sizes, ascending, padded to ``[P, W]`` with -1."""
    distinct = [sorted(set(problem.windows)) for problem in problems]
    width = max(len(sizes) for sizes in distinct)
    sizes = np.full((len(problems), width), -1, dtype=np.int64)
    for row, values in enumerate(distinct):
        sizes[row, : len(values)] = values
    return sizes


def _pair_table(problems: list[Problem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate pairs padded to ``[P, Q]``: lambda, k and a validity mask (padding is invalid)."""
    pairs = [candidate_pairs(problem.windows, problem.length) for problem in problems]
    width = max(len(items) for items in pairs)
    lam = np.zeros((len(problems), width), dtype=np.int64)
    k = np.zeros_like(lam)
    valid = np.zeros(lam.shape, dtype=bool)
    for row, items in enumerate(pairs):
        lam[row, : len(items)], k[row, : len(items)] = zip(*items)
        valid[row, : len(items)] = True
    return lam, k, valid


def _cow_counts(problems: list[Problem], sizes: np.ndarray) -> np.ndarray:
    """Outcome counts ``[P, W, 3]`` (correct, wrong, IDK); scores binarised at 0.5."""
    counts = np.zeros((len(problems), sizes.shape[1], 3))
    for row, problem in enumerate(problems):
        slot = {int(window): index for index, window in enumerate(sizes[row]) if window >= 0}
        for window, outcome in zip(problem.windows, problem.outcomes):
            column = 2 if outcome is None else (0 if outcome >= 0.5 else 1)
            counts[row, slot[window], column] += 1
    return counts


def fit_cow(problems: list[Problem], iterations: int = COW_ITERATIONS) -> tuple[list[Fit], tuple[float, float, float]]:
    """Fit correct-or-wrong problems of one task; returns one :class:`Fit` each and the task's noise categorical.

    Posteriors q(O | x) start at ``START_POSTERIOR`` and the noise at uniform. Starting from 0.5
    makes the first noise estimate mostly IDK (most windows miss the answer); the noise then explains
    the IDKs as well as the oracle does, the oracle weight P_i(O) shrinks step by step, and a smaller
    weight trades against a larger pi (k and lambda drift upwards). Each step: M-step (noise from q(N | x) over the task,
    P_i(O) as the mean posterior, the oracle's categorical below each candidate lambda), brute-force
    choice of (lambda, k) for every problem at once, E-step.
    """
    sizes = _window_table(problems)
    counts = _cow_counts(problems, sizes)
    lam, k, valid = _pair_table(problems)
    lengths = np.array([problem.length for problem in problems])[:, None, None]
    pi = window_cover_array(lam[:, :, None], k[:, :, None], lengths, np.maximum(sizes, 0)[:, None, :])  # [P, Q, W]
    below = (sizes[:, None, :] < lam[:, :, None]) & (sizes[:, None, :] >= 0)  # [P, Q, W]
    posterior = np.full(counts.shape, START_POSTERIOR)  # q(O | x) per [P, W, outcome]
    rows = np.arange(len(problems))
    noise = np.full(3, 1 / 3)
    for iteration in range(iterations):
        if iteration:
            noise = _normalise((counts * (1 - posterior)).sum(axis=(0, 1)))
        weight = (counts * posterior).sum(axis=(1, 2)) / np.maximum(counts.sum(axis=(1, 2)), 1)
        weight = np.clip(weight, _SMOOTH, 1 - _SMOOTH)
        oracle_low = _normalise(np.einsum("pqw,pwx->pqx", below.astype(float), counts * posterior))  # [P, Q, 3]
        likely = _cow_oracle_probabilities(pi, below, oracle_low)  # [P, Q, W, 3]
        mixture = weight[:, None, None, None] * likely + (1 - weight[:, None, None, None]) * noise
        score = (counts[:, None] * np.log(np.maximum(mixture, _TINY))).sum(axis=(2, 3))
        best = np.argmax(np.where(valid, score, -np.inf), axis=1)
        posterior = weight[:, None, None] * likely[rows, best] / np.maximum(mixture[rows, best], _TINY)
    fits = [
        Fit(int(lam[row, best[row]]), int(k[row, best[row]]), float(weight[row]),
            tuple(float(value) for value in oracle_low[row, best[row]]), float(score[row, best[row]]))
        for row in rows
    ]
    return fits, tuple(float(value) for value in noise)


def _normalise(values: np.ndarray) -> np.ndarray:
    """Smooth and normalise the last axis into probabilities."""
    values = values + _SMOOTH
    return values / values.sum(axis=-1, keepdims=True)


def _cow_oracle_probabilities(pi: np.ndarray, below: np.ndarray, oracle_low: np.ndarray) -> np.ndarray:
    """P(x | O) on ``[P, Q, W, 3]``: the problem's categorical below lambda, else (pi, 0, 1 - pi)."""
    above = np.stack([pi, np.zeros_like(pi), 1 - pi], axis=-1)
    return np.where(below[..., None], oracle_low[:, :, None, :], above)


def fit_pig(problems: list[Problem], iterations: int = PIG_ITERATIONS) -> list[Fit]:
    """Fit partial-points problems of one task: oracle density rho(s), uniform noise density on [0, 1].

    An IDK answer counts as score 0 (no aspect found).
    """
    fits = []
    for problem in problems:
        pairs = candidate_pairs(problem.windows, problem.length)
        scores = [0.0 if outcome is None else float(outcome) for outcome in problem.outcomes]
        density = np.array([
            [aspect_score_density(score, lam, k, problem.length, window) for score, window in zip(scores, problem.windows)]
            for lam, k in pairs
        ])  # [Q, J]
        posterior = np.full(len(scores), 0.5)
        for _ in range(iterations):
            weight = float(np.clip(posterior.mean(), _SMOOTH, 1 - _SMOOTH))
            mixture = weight * density + (1 - weight)
            score = np.log(np.maximum(mixture, _TINY)).sum(axis=1)
            best = int(np.argmax(score))
            posterior = weight * density[best] / np.maximum(mixture[best], _TINY)
        lam, k = pairs[best]
        fits.append(Fit(lam, k, weight, None, float(score[best])))
    return fits
