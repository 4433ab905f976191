"""The Dolce EM fit: per problem (lambda, k) by brute force over the distinguishable candidate grid, vectorised
with numpy.

A task's problems are fitted together (they share the background noise). Observations are reduced
to counts per (window size, outcome) for COW problems; PIG problems keep soft counts per window.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

import numpy as np

from longbench100.analysis.dolce.closed_forms import aspect_score_density, window_cover_array

COW_ITERATIONS = 10
PIG_ITERATIONS = 5
START_POSTERIOR = (
    0.9  # q(O | x) before the first M-step (the spec's 0.5 lets the noise swallow the IDKs)
)
OUTCOMES = ("correct", "wrong", "idk")  # the COW outcome columns
_TINY = 1e-300
_SMOOTH = 1e-6
BELOW_PENALTY = 1.0  # BIC: (2 free parameters / 2) * log(n)
WEIGHT_PENALTY = 0.5  # BIC for the oracle weight P_i(O) against a noise-free problem (P_i(O) = 1)
_ALWAYS_IDK = np.array([0.0, 0.0, 1.0])
_EQUIVALENT = 1e-12  # pi values closer than this are the same probability (float rounding)


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


def categorical3(values: Iterable[float]) -> tuple[float, float, float]:
    """A categorical over the three outcomes (correct, wrong, IDK) as Python floats."""
    correct, wrong, idk = (float(value) for value in values)
    return correct, wrong, idk


def candidates(windows: tuple[int, ...] | list[int], length: int) -> list[int]:
    """Candidate values: the observed window sizes plus 0, (largest partial window + 1) and L."""
    partial = [window for window in windows if window < length]
    extra = {0, length, (max(partial) + 1) if partial else 1}
    return sorted(
        {window for window in windows if window <= length}
        | {value for value in extra if value <= length}
    )


def candidate_pairs(windows: tuple[int, ...] | list[int], length: int) -> list[tuple[int, int]]:
    """Every (lambda, k) from the candidates with ``k * lambda <= L``; (0, 0) for lambda = 0. Ordered by lambda, then k."""
    values = candidates(windows, length)
    pairs = [(0, 0)]
    for lam in values:
        pairs += [(lam, k) for k in values if lam > 0 and k > 0 and k * lam <= length]
    return pairs


def _equivalence_labels(pairs: list[tuple[int, int]], windows: list[int], length: int) -> list[int]:
    """For each pair the index of the first pair in ``pairs`` that no COW probe can tell from it.

    Two pairs are observationally equivalent on a problem when every probed window size gets the same
    pi and sits on the same side of lambda (below lambda the oracle's outcomes come from the
    problem's own categorical, at or above it from pi), so the COW likelihood of any outcomes is the
    same for both, whatever the noise and the oracle parameters.
    """
    lam = np.array([pair[0] for pair in pairs])[:, None]
    k = np.array([pair[1] for pair in pairs])[:, None]
    sizes = np.array(windows)[None, :]
    pi = window_cover_array(lam, k, length, sizes)  # [Q, W]
    below = sizes < lam
    same_pi = np.abs(pi[:, None, :] - pi[None, :, :]).max(axis=2, initial=0.0) <= _EQUIVALENT
    same_side = (below[:, None, :] == below[None, :, :]).all(axis=2)
    return [int(np.argmax(row)) for row in same_pi & same_side]


@lru_cache(maxsize=4096)
def _distinct_pairs(windows: tuple[int, ...], length: int) -> tuple[tuple[int, int], ...]:
    """:func:`distinct_pairs` for sorted distinct windows, cached (problems of a task share grids)."""
    pairs = candidate_pairs(windows, length)
    labels = _equivalence_labels(pairs, list(windows), length)
    return tuple(pair for index, pair in enumerate(pairs) if labels[index] == index)


def distinct_pairs(windows: tuple[int, ...] | list[int], length: int) -> list[tuple[int, int]]:
    """The candidate grid of a problem with equivalent pairs collapsed: one canonical pair per class.

    The canonical pair of a class is its first in :func:`candidate_pairs` order (smallest lambda, then
    smallest k). On the usual grids the classes with more than one member are: every lambda above the
    largest partial window (all k), which only the whole context catches, collapsing onto
    (largest partial window + 1, 1); and, when no closed-book probe was made, (0, 0) with (1, L).
    """
    return list(_distinct_pairs(tuple(sorted(set(windows))), length))


def canonical_pair(
    lam: int, k: int, windows: tuple[int, ...] | list[int], length: int
) -> tuple[int, int]:
    """The canonical representative of (``lam``, ``k``)'s equivalence class on this problem's windows
    (the pair itself when it is not on the candidate grid and has no equivalent there)."""
    pairs = candidate_pairs(windows, length)
    pairs = pairs if (lam, k) in pairs else pairs + [(lam, k)]
    labels = _equivalence_labels(pairs, sorted(set(windows)), length)
    return pairs[labels[pairs.index((lam, k))]]


def window_table(problems: list[Problem]) -> np.ndarray:
    """Per problem its distinct window sizes, ascending, padded to ``[P, W]`` with -1."""
    distinct = [sorted(set(problem.windows)) for problem in problems]
    width = max(len(sizes) for sizes in distinct)
    sizes = np.full((len(problems), width), -1, dtype=np.int64)
    for row, values in enumerate(distinct):
        sizes[row, : len(values)] = values
    return sizes


def pair_table(pairs: list[list[tuple[int, int]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per problem candidate pairs padded to ``[P, Q]``: lambda, k and a validity mask (padding is invalid)."""
    width = max(len(items) for items in pairs)
    lam = np.zeros((len(pairs), width), dtype=np.int64)
    k = np.zeros_like(lam)
    valid = np.zeros(lam.shape, dtype=bool)
    for row, items in enumerate(pairs):
        lam[row, : len(items)], k[row, : len(items)] = zip(*items)
        valid[row, : len(items)] = True
    return lam, k, valid


def cow_counts(problems: list[Problem], sizes: np.ndarray) -> np.ndarray:
    """Outcome counts ``[P, W, 3]`` (correct, wrong, IDK); scores binarised at 0.5."""
    counts = np.zeros((len(problems), sizes.shape[1], 3))
    for row, problem in enumerate(problems):
        slot = {int(window): index for index, window in enumerate(sizes[row]) if window >= 0}
        for window, outcome in zip(problem.windows, problem.outcomes):
            column = 2 if outcome is None else (0 if outcome >= 0.5 else 1)
            counts[row, slot[window], column] += 1
    return counts


def fit_cow(
    problems: list[Problem], iterations: int = COW_ITERATIONS
) -> tuple[list[Fit], tuple[float, float, float]]:
    """Fit correct-or-wrong problems of one task; returns one :class:`Fit` each and the task's noise categorical.

    Every distinguishable candidate pair (:func:`distinct_pairs`) runs its own EM: its own posteriors
    q(O | x), oracle weight P_i(O) and categorical below lambda, so pairs are compared each at its own
    best rather than at the weight of the previous step's winner. The task's noise is shared and
    re-estimated from the posteriors of each problem's best pair. The free categorical below lambda is
    kept only when its log-likelihood gain over "IDK below lambda" exceeds the BIC penalty for its two
    parameters (``BELOW_PENALTY`` * log of the probes below lambda); without it a long span absorbs
    stray correct answers. Likewise a pair's oracle weight P_i(O) is kept only when it beats a noise-free
    fit (P_i(O) = 1, IDK below lambda) by the BIC penalty for one parameter (``WEIGHT_PENALTY`` * log of
    the problem's probes): without that gate the shared noise, estimated from every problem, lends a
    noise-free problem stray correct answers and its single hit at C = lambda goes to the noise.
    Posteriors start at ``START_POSTERIOR`` and the noise at uniform: from 0.5
    the first noise estimate is mostly IDK (most windows miss the answer) and the noise competes with
    the oracle for the IDKs (docs/dolce.md has the measurements).
    """
    sizes = window_table(problems)
    counts = cow_counts(problems, sizes)
    lam, k, valid = pair_table(
        [distinct_pairs(problem.windows, problem.length) for problem in problems]
    )
    lengths = np.array([problem.length for problem in problems])[:, None, None]
    pi = window_cover_array(
        lam[:, :, None], k[:, :, None], lengths, np.maximum(sizes, 0)[:, None, :]
    )  # [P, Q, W]
    below = (sizes[:, None, :] < lam[:, :, None]) & (sizes[:, None, :] >= 0)  # [P, Q, W]
    posterior = np.full(
        pi.shape + (3,), START_POSTERIOR
    )  # q(O | x) per [P, Q, W, outcome]: each pair its own EM
    rows = np.arange(len(problems))
    best = np.zeros(len(problems), dtype=np.int64)
    noise = np.full(3, 1 / 3)
    below_counts = np.einsum("pqw,pw->pq", below.astype(float), counts.sum(axis=2))
    penalty = BELOW_PENALTY * np.log(np.maximum(below_counts, 1))
    weight_penalty = WEIGHT_PENALTY * np.log(np.maximum(counts.sum(axis=(1, 2)), 1))[:, None]
    pure = np.full(lam.shape, 1 - _SMOOTH)  # the noise-free oracle weight
    for iteration in range(iterations):
        if iteration:
            noise = normalise((counts * (1 - posterior[rows, best])).sum(axis=(0, 1)))
        weight = (
            np.einsum("pwx,pqwx->pq", counts, posterior)
            / np.maximum(counts.sum(axis=(1, 2)), 1)[:, None]
        )
        weight = np.clip(weight, _SMOOTH, 1 - _SMOOTH)
        free = normalise(
            np.einsum("pqw,pwx,pqwx->pqx", below.astype(float), counts, posterior)
        )  # [P, Q, 3]
        free_score, free_likely = _cow_scores(counts, pi, below, free, weight, noise)
        idk_score, idk_likely = _cow_scores(
            counts, pi, below, np.broadcast_to(_ALWAYS_IDK, free.shape), weight, noise
        )
        pure_score, _ = _cow_scores(
            counts, pi, below, np.broadcast_to(_ALWAYS_IDK, free.shape), pure, noise
        )
        use_free = (
            free_score - penalty > idk_score
        )  # [P, Q]: BIC for the two free parameters of the categorical
        mixed = np.where(use_free, free_score - penalty, idk_score) - weight_penalty
        use_pure = (
            pure_score >= mixed
        )  # a pair fitted noise free restarts its weighted variant from posteriors near 1
        weight = np.where(use_pure, pure, weight)
        use_free &= ~use_pure
        best = np.argmax(np.where(valid, np.maximum(mixed, pure_score), -np.inf), axis=1)
        likely = np.where(use_free[:, :, None, None], free_likely, idk_likely)
        mixture = weight[:, :, None, None] * likely + (1 - weight[:, :, None, None]) * noise
        posterior = weight[:, :, None, None] * likely / np.maximum(mixture, _TINY)
    score = np.where(use_pure, pure_score, np.where(use_free, free_score, idk_score))
    oracle_low = np.where(use_free[:, :, None], free, _ALWAYS_IDK)
    weight = np.where(use_pure, 1.0, weight)  # a noise-free fit reports P_i(O) = 1
    fits = [
        Fit(
            int(lam[row, best[row]]),
            int(k[row, best[row]]),
            float(weight[row, best[row]]),
            categorical3(oracle_low[row, best[row]]),
            float(score[row, best[row]]),
        )
        for row in rows
    ]
    return fits, categorical3(noise)


def _cow_scores(
    counts: np.ndarray,
    pi: np.ndarray,
    below: np.ndarray,
    oracle_low: np.ndarray,
    weight: np.ndarray,
    noise: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Log-likelihood ``[P, Q]`` of every candidate pair (its own oracle weight ``weight[P, Q]``) and the
    oracle's P(x | O) ``[P, Q, W, 3]`` behind it."""
    likely = cow_oracle_probabilities(pi, below, oracle_low)
    mixture = weight[:, :, None, None] * likely + (1 - weight[:, :, None, None]) * noise
    return (counts[:, None] * np.log(np.maximum(mixture, _TINY))).sum(axis=(2, 3)), likely


def normalise(values: np.ndarray) -> np.ndarray:
    """Smooth and normalise the last axis into probabilities."""
    values = values + _SMOOTH
    return values / values.sum(axis=-1, keepdims=True)


def cow_oracle_probabilities(
    pi: np.ndarray, below: np.ndarray, oracle_low: np.ndarray
) -> np.ndarray:
    """P(x | O) on ``[P, Q, W, 3]``: the problem's categorical below lambda, else (pi, 0, 1 - pi)."""
    above = np.stack([pi, np.zeros_like(pi), 1 - pi], axis=-1)
    return np.where(below[..., None], oracle_low[:, :, None, :], above)


PairChooser = Callable[[np.ndarray, list[tuple[int, int]], Problem], int]


def first_best(scores: np.ndarray, pairs: list[tuple[int, int]], problem: Problem) -> int:
    """The first best-scoring pair in candidate order (smallest lambda, then smallest k)."""
    return int(np.argmax(scores))


def fit_pig(
    problems: list[Problem], iterations: int = PIG_ITERATIONS, choose: PairChooser = first_best
) -> list[Fit]:
    """Fit partial-points problems of one task: oracle density rho(s), uniform noise density on [0, 1].

    An IDK answer counts as score 0 (no aspect found). ``choose`` picks the pair from the candidates'
    log-likelihoods (it decides ties).
    """
    fits = []
    for problem in problems:
        pairs = candidate_pairs(problem.windows, problem.length)
        scores = [0.0 if outcome is None else float(outcome) for outcome in problem.outcomes]
        density = np.array(
            [
                [
                    aspect_score_density(score, lam, k, problem.length, window)
                    for score, window in zip(scores, problem.windows)
                ]
                for lam, k in pairs
            ]
        )  # [Q, J]
        posterior = np.full(len(scores), 0.5)
        for _ in range(iterations):
            weight = float(np.clip(posterior.mean(), _SMOOTH, 1 - _SMOOTH))
            mixture = weight * density + (1 - weight)
            score = np.log(np.maximum(mixture, _TINY)).sum(axis=1)
            best = choose(score, pairs, problem)
            posterior = weight * density[best] / np.maximum(mixture[best], _TINY)
        lam, k = pairs[best]
        fits.append(Fit(lam, k, weight, None, float(score[best])))
    return fits
