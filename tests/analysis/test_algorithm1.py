"""The default Dolce estimator is the paper's Algorithm 1: checked against an independent reference.

The reference below is written from the method's description alone, with plain loops and the
standard library: its own pi (the closed form with ``math.comb``), its own candidate grid, EM and
category rule. It shares no code with ``longbench100.analysis.dolce``; only the simulated outcomes come from
the package (they are inputs, not part of the estimator).
"""

from __future__ import annotations

import math
import random

import pytest

from longbench100.analysis.dolce.algorithm1 import fit_cow_algorithm1
from longbench100.analysis.dolce.categories import category, thresholds
from longbench100.analysis.dolce.simulate import grid_truths, simulate_problem

SMOOTH = 1e-6  # the pseudo-count both implementations add before normalising a categorical
TIE = 1e-9


def ref_binomial(n: int, r: int) -> int:
    return math.comb(n, r) if 0 <= r <= n else 0


def ref_pi(lam: int, k: int, length: int, window: int) -> float:
    if lam == 0:
        return 1.0
    if window < lam or k * lam > length:
        return 0.0
    w = length - window - k * lam + k
    u = min(window, 2 * lam - 2)
    top = 2 * ref_binomial(w + lam, k + 1) + (k - 1) / (k + 1) * (
        2 * k * lam + 2 * lam + w - 2 * k - k * u - 1
    ) * ref_binomial(w + u, k)
    return 1 - top / (ref_binomial(w + window, k) * (length - window + 1))


def ref_candidates(windows: list[int], length: int) -> list[tuple[int, int]]:
    observed = {c for c in windows if c <= length}
    partial = [c for c in windows if c < length]
    values = sorted(observed | {0, length, (max(partial) + 1) if partial else 1})
    values = [v for v in values if v <= length]
    pairs = [(0, 0)]
    for lam in values:
        for k in values:
            if lam > 0 and k > 0 and k * lam <= length:
                pairs.append((lam, k))
    return pairs


def ref_kind(outcome: float | None) -> int:
    if outcome is None:
        return 2
    return 0 if outcome >= 0.5 else 1


def ref_normalise(values: list[float]) -> list[float]:
    values = [value + SMOOTH for value in values]
    total = sum(values)
    return [value / total for value in values]


def ref_oracle(lam: int, k: int, length: int, window: int, below: list[float]) -> list[float]:
    if window < lam:
        return below
    p = ref_pi(lam, k, length, window)
    return [p, 0.0, 1 - p]


def ref_algorithm1(problems: list[tuple[int, list[int], list[float | None]]], rounds: int = 10):
    """Algorithm 1 for COW problems given as (L, windows, outcomes); returns [(lam, k)] and the noise."""
    post = [[0.5] * len(windows) for _, windows, _ in problems]
    chosen: list[tuple[int, int]] = []
    noise = [1 / 3] * 3
    for _ in range(rounds):
        noise_counts = [0.0, 0.0, 0.0]
        for (_, _, outcomes), q in zip(problems, post):
            for outcome, qo in zip(outcomes, q):
                noise_counts[ref_kind(outcome)] += 1 - qo
        noise = ref_normalise(noise_counts)
        chosen, weights, below_of = [], [], []
        for (length, windows, outcomes), q in zip(problems, post):
            weight = sum(q) / len(q)
            best = None
            scored = []
            for lam, k in ref_candidates(windows, length):
                counts = [0.0, 0.0, 0.0]
                for window, outcome, qo in zip(windows, outcomes, q):
                    if window < lam:
                        counts[ref_kind(outcome)] += qo
                below = ref_normalise(counts)
                log_likelihood = 0.0
                for window, outcome in zip(windows, outcomes):
                    x = ref_kind(outcome)
                    p = (
                        weight * ref_oracle(lam, k, length, window, below)[x]
                        + (1 - weight) * noise[x]
                    )
                    log_likelihood += math.log(max(p, 1e-300))
                scored.append((log_likelihood, lam, k, below))
                if best is None or log_likelihood > best:
                    best = log_likelihood
            partial = max((c for c in windows if c < length), default=0)

            def simplicity(entry, partial=partial, length=length):
                _, lam, k, _ = entry
                return k, (partial + 0.5 if lam == length and length > partial + 1 else lam)

            tied = [entry for entry in scored if entry[0] >= best - TIE * max(1.0, abs(best))]
            _, lam, k, below = min(tied, key=simplicity)
            chosen.append((lam, k))
            weights.append(weight)
            below_of.append(below)
        new_post = []
        for (length, windows, outcomes), (lam, k), weight, below in zip(
            problems, chosen, weights, below_of
        ):
            q = []
            for window, outcome in zip(windows, outcomes):
                x = ref_kind(outcome)
                oracle = weight * ref_oracle(lam, k, length, window, below)[x]
                q.append(oracle / max(oracle + (1 - weight) * noise[x], 1e-300))
            new_post.append(q)
        post = new_post
    return chosen, noise


def ref_category(lam: int, k: int, windows: list[int], length: int) -> str:
    grid = sorted({c for c in windows if 0 < c < length})
    tertile, largest = (grid[len(grid) // 3], grid[-1]) if grid else (1, 1)
    if lam == 0:
        return "I"
    if lam <= tertile:
        return "II" if k > tertile else "III"
    return "IV" if lam <= largest else "V"


def simulated_task(seed: int, sizes: tuple[int, ...], noise: float, count: int, draw: str):
    rng = random.Random(seed)
    problems = []
    for index in range(count):
        length = rng.choice((30, 60, 100))
        truth = rng.choice(grid_truths(sizes, length))
        problems.append(simulate_problem(f"p{index}", *truth, length, sizes, noise, rng, draw=draw))
    return problems


@pytest.mark.parametrize(
    "seed,sizes,noise,draw",
    [
        (1, (0, 1, 2, 5, 10, 20), 0.0, "model"),
        (2, (0, 1, 2, 5, 10, 20), 0.1, "model"),
        (3, (0, 1, 2, 5, 10, 20, 50), 0.2, "layout"),
        (4, (1, 2, 5, 10), 0.05, "layout"),  # no closed-book probe
        (5, (0, 2, 10), 0.3, "model"),
    ],
)
def test_the_default_estimator_equals_an_independent_algorithm1(seed, sizes, noise, draw):
    problems = simulated_task(seed, sizes, noise, 14, draw)
    fits, fitted_noise = fit_cow_algorithm1(problems)
    reference, reference_noise = ref_algorithm1(
        [(p.length, list(p.windows), list(p.outcomes)) for p in problems]
    )
    assert [(fit.lam, fit.k) for fit in fits] == reference
    assert fitted_noise == pytest.approx(tuple(reference_noise), abs=1e-9)
    for fit, problem in zip(fits, problems):
        ours = category(fit.lam, fit.k, thresholds(list(problem.windows), problem.length))
        assert ours == ref_category(fit.lam, fit.k, list(problem.windows), problem.length)


def test_ties_go_to_the_simplest_explanation():
    """A problem answered only with the whole context: every lambda past the largest partial window, with
    any k, explains it equally; the estimator reads lambda = L, k = 1 (holistic)."""
    problems = simulated_task(7, (0, 1, 2, 5), 0.0, 1, "model")
    length = 40
    windows = [c for c in (0, 1, 2, 5) for _ in range(length - c + 1)] + [length]
    whole_only = problems[0].__class__(
        "h", length, tuple(windows), tuple([None] * (len(windows) - 1) + [1.0])
    )
    fits, _ = fit_cow_algorithm1([whole_only])
    assert (fits[0].lam, fits[0].k) == (length, 1)
    assert ref_algorithm1([(length, windows, list(whole_only.outcomes))])[0] == [(length, 1)]
