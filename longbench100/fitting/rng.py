"""Per-sample random generators derived from the run seed, so any one sample can be rebuilt alone."""

import hashlib
import random
from typing import Callable, TypeVar

T = TypeVar("T")


def derive_rng(*parts: object) -> random.Random:
    """A ``random.Random`` seeded from a hash of ``parts`` (e.g. seed, task, length, row)."""
    digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def distinct_draws(count: int, draw: Callable[[], T]) -> list[T]:
    """``count`` different values of ``draw()``, in drawing order (a repeat is dropped and drawn again)."""
    found: list[T] = []
    while len(found) < count:
        value = draw()
        if value not in found:
            found.append(value)
    return found


def random_order(rng: random.Random, count: int) -> list[int]:
    """``rng.sample(range(count), count)``: the same order, leaving ``rng`` in the same state, at
    about half the cost (a pool's random order is drawn whole for every prompt, and only its first
    few places are read). Python's own algorithm, written out: each place takes one of the ``m``
    indices left by ``getrandbits`` of ``m``'s bit length, drawn again while it is ``m`` or more,
    with the bit length worked out once per power of two rather than per place."""
    getrandbits = rng.getrandbits
    left = list(range(count))
    order: list[int] = []
    take = order.append
    highest = count
    while highest:
        bits = highest.bit_length()
        lowest = 1 << (bits - 1)
        for remaining in range(highest, lowest - 1, -1):
            drawn = getrandbits(bits)
            while drawn >= remaining:
                drawn = getrandbits(bits)
            take(left[drawn])
            left[drawn] = left[remaining - 1]
        highest = lowest - 1
    return order
