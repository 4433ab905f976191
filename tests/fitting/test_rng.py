"""A pool's random order drawn the fast way is the standard library's, to the generator's state."""

from __future__ import annotations

import random

import pytest

from longbench100.fitting.rng import random_order


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 32, 33, 100, 1024, 1025, 3001])
def test_a_random_order_is_random_sample_of_the_whole_range(count: int) -> None:
    for seed in range(4):
        ours, theirs = random.Random(seed), random.Random(seed)
        ours.random()  # a generator part-way through its words, as a row's is
        theirs.random()
        assert random_order(ours, count) == theirs.sample(range(count), count)
        assert ours.getstate() == theirs.getstate()  # what the row draws next is the same too


def test_a_random_order_holds_every_index_once() -> None:
    order = random_order(random.Random(7), 500)
    assert sorted(order) == list(range(500)) and order != list(range(500))
