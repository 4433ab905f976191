"""Outcomes drawn from known (lambda, k): the recovery check and the benchmark use them.

Two ways to draw: ``model`` draws each probe independently from the Dolce model itself (correct with
probability pi(lambda, k; L, C), else IDK), the textbook parameter-recovery check; ``layout`` places
``k`` spans once per problem and answers every window against that one layout, as the oracle does on
real data (neighbouring windows then share their fate). :func:`best_possible_hit` gives the ceiling
that no estimator beats on average for exact recovery.
"""

from __future__ import annotations

import random

import numpy as np

from longbench100.analysis.dolce.closed_forms import window_cover_array, window_cover_probability
from longbench100.analysis.dolce.refined_em import Problem, distinct_pairs
from longbench100.analysis.dolce.windows import covers, noisy_outcome, probe_windows, window_sizes

DRAWS = ("model", "layout")


def random_spans(lam: int, k: int, length: int, rng: random.Random) -> list[tuple[int, int]]:
    """``k`` non-overlapping spans of ``lam`` units, uniformly placed among ``length`` units."""
    if lam == 0:
        return [(0, 0)]
    gaps = sorted(
        rng.sample(range(length - k * lam + k), k)
    )  # stars and bars: span j has gaps[j] - j free units before it
    return [
        (gap + index * (lam - 1), gap + index * (lam - 1) + lam) for index, gap in enumerate(gaps)
    ]


def simulate_problem(
    problem_id: str,
    lam: int,
    k: int,
    length: int,
    sizes: tuple[int, ...],
    noise: float,
    rng: random.Random,
    stride: int = 1,
    draw: str = "model",
    max_per_problem: int | None = None,
) -> Problem:
    """Probe one simulated problem at every window (on ``stride``, thinned to ``max_per_problem``)."""
    windows = probe_windows(sizes, True, length, stride, max_per_problem)
    if draw == "layout":
        spans = random_spans(lam, k, length, rng)
        seen = [covers(start, size, spans) for size, start in windows]
    else:
        seen = [
            rng.random() < float(window_cover_probability(lam, k, length, size))
            for size, _ in windows
        ]
    outcomes = tuple(noisy_outcome(hit, noise, rng) for hit in seen)
    return Problem(problem_id, length, tuple(size for size, _ in windows), outcomes)


def grid_truths(sizes: tuple[int, ...], length: int) -> list[tuple[int, int]]:
    """The (lambda, k) pairs the recovery check draws from: the distinguishable candidate grid of a
    problem of ``length`` units probed at ``sizes`` and the whole context (one pair per class of
    pairs no probe can tell apart, see :func:`~longbench100.analysis.dolce.refined_em.distinct_pairs`)."""
    return distinct_pairs(window_sizes(sizes, True, length), length)


def best_possible_hit(problem: Problem, truth: tuple[int, int], noise: float) -> float:
    """How often the best possible estimator gets ``truth`` exactly on ``problem``'s outcomes.

    That estimator knows the true model (pi at and above lambda, IDK below, a uniformly random outcome
    with probability ``noise``) and picks the maximum-likelihood pair of the distinguishable grid, which
    is the Bayes-optimal guess for truths drawn uniformly from that grid. Returns 1 / (number of tied
    best pairs) when the truth is among them, else 0; averaged over problems it is the ceiling for
    exact recovery.
    """
    pairs = distinct_pairs(problem.windows, problem.length)
    lam, k = (np.array(values)[:, None] for values in zip(*pairs))
    pi = window_cover_array(lam, k, problem.length, np.array(problem.windows)[None, :])
    correct = np.array([outcome == 1.0 for outcome in problem.outcomes])
    idk = np.array([outcome is None for outcome in problem.outcomes])
    wrong = int((~correct & ~idk).sum())
    with np.errstate(divide="ignore"):
        log_correct = np.log((1 - noise) * pi + noise / 3)
        log_idk = np.log((1 - noise) * (1 - pi) + noise / 3)
        log_wrong = wrong * np.log(noise / 3) if wrong else 0.0
    score = (
        np.where(correct, log_correct, 0.0).sum(axis=1)
        + np.where(idk, log_idk, 0.0).sum(axis=1)
        + log_wrong
    )
    best = [pairs[index] for index in np.flatnonzero(score >= score.max() - 1e-9)]
    return 1 / len(best) if truth in best else 0.0
