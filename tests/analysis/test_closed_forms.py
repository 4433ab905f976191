"""pi and rho~ against brute-force enumeration of every layout and window on small contexts."""

from fractions import Fraction
from itertools import combinations, permutations

import pytest

from longbench100.analysis.dolce.closed_forms import (
    aspect_score_density,
    aspect_score_probability,
    window_cover_probability,
)


def _span_layouts(length: int, lam: int, k: int) -> list[list[tuple[int, int]]]:
    """Every placement of ``k`` non-overlapping spans of ``lam`` units in ``length`` units."""
    layouts = []
    for starts in combinations(range(length), k):
        spans = [(start, start + lam) for start in starts]
        if spans[-1][1] <= length and all(a[1] <= b[0] for a, b in zip(spans, spans[1:])):
            layouts.append(spans)
    return layouts


def _brute_pi(lam: int, k: int, length: int, window: int) -> Fraction:
    """Share of (layout, window start) pairs where the window covers a whole span."""
    layouts = _span_layouts(length, lam, k)
    hits = total = 0
    for spans in layouts:
        for start in range(length - window + 1):
            total += 1
            hits += any(start <= a and b <= start + window for a, b in spans)
    return Fraction(hits, total)


@pytest.mark.parametrize("length", range(1, 11))
def test_pi_matches_enumeration(length):
    for lam in range(1, length + 1):
        for k in range(1, length // lam + 1):
            for window in range(0, length + 1):
                assert window_cover_probability(lam, k, length, window) == _brute_pi(
                    lam, k, length, window
                ), (lam, k, length, window)


def test_pi_edge_cases():
    assert window_cover_probability(0, 0, 7, 0) == 1  # lambda = 0: answerable with no context
    assert window_cover_probability(3, 1, 7, 2) == 0  # C < lambda
    assert (
        window_cover_probability(2, 3, 6, 2) == _brute_pi(2, 3, 6, 2) == Fraction(3, 5)
    )  # k * lambda = L: only aligned windows
    assert window_cover_probability(3, 2, 6, 4) == _brute_pi(3, 2, 6, 4)
    assert window_cover_probability(3, 1, 9, 5) == Fraction(5 - 3 + 1, 9 - 3 + 1)  # k = 1 form
    assert window_cover_probability(4, 2, 7, 7) == 0  # k * lambda > L cannot occur


def _brute_rho(hits: int, lam: int, k: int, length: int, window: int) -> Fraction:
    """Share of labelled layouts (aspect of each unit) where exactly ``hits`` aspects touch the window."""
    labels = [aspect for aspect in range(lam) for _ in range(k)] + [-1] * (length - k * lam)
    layouts = set(permutations(labels))
    good = sum(
        len({label for label in layout[:window] if label >= 0}) == hits for layout in layouts
    )
    return Fraction(good, len(layouts))


@pytest.mark.parametrize("length", range(1, 8))
def test_rho_matches_enumeration(length):
    for lam in range(1, length + 1):
        for k in range(1, length // lam + 1):
            for window in range(0, length + 1):
                for hits in range(0, lam + 1):
                    expected = _brute_rho(hits, lam, k, length, window)
                    assert aspect_score_probability(hits, lam, k, length, window) == expected, (
                        hits,
                        lam,
                        k,
                        length,
                        window,
                    )


def test_rho_edge_cases_and_density():
    assert aspect_score_probability(0, 0, 0, 5, 0) == 1  # lambda = 0
    assert aspect_score_probability(0, 2, 1, 5, 0) == 1  # no window: nothing seen
    assert aspect_score_probability(2, 2, 2, 4, 4) == 1  # k * lambda = L, whole context
    assert sum(aspect_score_probability(m, 3, 1, 7, 3) for m in range(4)) == 1
    # rho at a level m / lambda is (lambda + 1) * rho~(m); between levels it is the straight line
    at_level = aspect_score_density(1 / 3, 3, 1, 9, 4)
    assert at_level == pytest.approx(4 * float(aspect_score_probability(1, 3, 1, 9, 4)))
    middle = aspect_score_density(0.5, 3, 1, 9, 4)
    assert middle == pytest.approx((at_level + aspect_score_density(2 / 3, 3, 1, 9, 4)) / 2)
