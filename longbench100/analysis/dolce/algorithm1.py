"""The paper's estimator: Dolce's Algorithm 1, literally, vectorised with numpy.

COW (correct-or-wrong) problems of one task are fitted together: the background noise is one
categorical shared by all of them. Every posterior q(O | x) starts at 0.5; then ``T`` rounds of

* M-step: the noise categorical from the noise posteriors of every outcome of the task; per problem
  P_i(O) = the mean oracle posterior of its outcomes; per problem and candidate pair the oracle's
  categorical below lambda from the oracle-weighted outcomes with C < lambda; per problem the pair
  (lambda, k) with the largest likelihood prod_j sum_z P(x_ij | z) P_i(z), by brute force over every
  candidate pair (observed window sizes plus 0, largest partial window + 1 and L, with k * lambda <= L);
* E-step: q(O | x_ij) proportional to P_i(O) P(x_ij | O; lambda_i, k_i).

Ties between candidate pairs are broken towards the simplest explanation (:func:`simplest_best`).
PIG (partial points) problems use :func:`~longbench100.analysis.dolce.refined_em.fit_pig` with the same tie rule.
"""

from __future__ import annotations

import numpy as np

from longbench100.analysis.dolce.closed_forms import window_cover_array
from longbench100.analysis.dolce.refined_em import (
    COW_ITERATIONS,
    PIG_ITERATIONS,
    Fit,
    Problem,
    candidate_pairs,
    categorical3,
    cow_counts,
    cow_oracle_probabilities,
    fit_pig,
    normalise,
    pair_table,
    window_table,
)

START_POSTERIOR = 0.5  # the paper's q(z | x) before the first M-step
TIE_TOLERANCE = 1e-9  # log-likelihoods this close (relative to their size) are a tie
_TINY = 1e-300


def simplest_best(scores: np.ndarray, pairs: list[tuple[int, int]], problem: Problem) -> int:
    """The index of the best-scoring pair; among pairs tied within :data:`TIE_TOLERANCE`, the simplest.

    Simplest means the smallest k, then the smallest lambda, except that lambda = L ranks just before
    lambda = largest partial window + 1: both are caught by the whole context alone, and a holistic
    problem then reads lambda = L. Padding entries of ``scores`` may be ``-inf``.
    """
    length, largest_partial = (
        problem.length,
        largest_partial_window(problem.windows, problem.length),
    )
    best = float(np.max(scores))
    tied = np.flatnonzero(scores >= best - TIE_TOLERANCE * max(1.0, abs(best)))

    def rank(index: int) -> tuple[int, float]:
        lam, k = pairs[index]
        return k, (largest_partial + 0.5 if lam == length and length > largest_partial + 1 else lam)

    return int(min(tied.tolist(), key=rank))


def largest_partial_window(windows: tuple[int, ...] | list[int], length: int) -> int:
    """The largest window size smaller than the context (0 when there is none)."""
    return max((window for window in windows if window < length), default=0)


def fit_cow_algorithm1(
    problems: list[Problem], iterations: int = COW_ITERATIONS
) -> tuple[list[Fit], tuple[float, float, float]]:
    """Fit correct-or-wrong problems of one task by Algorithm 1; one :class:`Fit` each and the task's noise.

    ``Fit.oracle_below`` is the oracle's categorical below the chosen lambda (correct, wrong, IDK).
    """
    sizes = window_table(problems)
    counts = cow_counts(problems, sizes)  # [P, W, 3]
    pairs = [candidate_pairs(problem.windows, problem.length) for problem in problems]
    lam, k, valid = pair_table(pairs)
    lengths = np.array([problem.length for problem in problems])[:, None, None]
    pi = window_cover_array(
        lam[:, :, None], k[:, :, None], lengths, np.maximum(sizes, 0)[:, None, :]
    )  # [P, Q, W]
    below = ((sizes[:, None, :] < lam[:, :, None]) & (sizes[:, None, :] >= 0)).astype(
        float
    )  # [P, Q, W]
    totals = np.maximum(counts.sum(axis=(1, 2)), 1)
    rows = np.arange(len(problems))
    posterior = np.full(counts.shape, START_POSTERIOR)  # q(O | x) per [P, W, outcome]
    best = np.zeros(len(problems), dtype=np.int64)
    for _ in range(iterations):
        noise = normalise((counts * (1 - posterior)).sum(axis=(0, 1)))
        weight = (counts * posterior).sum(axis=(1, 2)) / totals  # P_i(O)
        oracle_low = normalise(np.einsum("pqw,pwx->pqx", below, counts * posterior))  # [P, Q, 3]
        likely = cow_oracle_probabilities(pi, below.astype(bool), oracle_low)  # [P, Q, W, 3]
        mixture = weight[:, None, None, None] * likely + (1 - weight[:, None, None, None]) * noise
        scores = np.where(
            valid, (counts[:, None] * np.log(np.maximum(mixture, _TINY))).sum(axis=(2, 3)), -np.inf
        )
        best = np.array([simplest_best(scores[row], pairs[row], problems[row]) for row in rows])
        chosen = likely[rows, best]  # [P, W, 3]
        posterior = weight[:, None, None] * chosen / np.maximum(mixture[rows, best], _TINY)
    fits = [
        Fit(
            int(lam[row, best[row]]),
            int(k[row, best[row]]),
            float(weight[row]),
            categorical3(oracle_low[row, best[row]]),
            float(scores[row, best[row]]),
        )
        for row in rows
    ]
    return fits, categorical3(noise)


def fit_pig_algorithm1(problems: list[Problem], iterations: int = PIG_ITERATIONS) -> list[Fit]:
    """Fit partial-points problems by Algorithm 1: the PIG model, ties broken by :func:`simplest_best`."""
    return fit_pig(problems, iterations, choose=simplest_best)
