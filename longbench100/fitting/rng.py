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
