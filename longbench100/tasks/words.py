"""Needle keys as RULER draws them: an adjective and a noun from the ``wonderwords`` package's lists (``quizzical-lantern``).

RULER's ``niah.py`` builds its word keys from wonderwords' ``adjectivelist.txt`` and
``nounlist.txt``; ours take the same lists (910 adjectives x 6,782 nouns, about 6.2 million keys),
so that, as in RULER, a distractor needle sharing the asked key's adjective or noun is rare and the
key space never runs out. The lists are part of the output, so the package version is pinned and
the lists are checked against their sha256 on first use.
"""

import hashlib
import random
from functools import lru_cache

from longbench100.core.errors import UserError

LISTS_SHA256 = "92531ea73be83582a17521e1c73a03c1c398ef712f89079cd1db615fdc77527b"


@lru_cache(maxsize=1)
def key_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """wonderwords' adjectives and nouns, each list sorted and without repeats, checked against :data:`LISTS_SHA256`."""
    from wonderwords.random_word import _get_words_from_text_file

    adjectives = tuple(sorted(set(_get_words_from_text_file("adjectivelist.txt"))))
    nouns = tuple(sorted(set(_get_words_from_text_file("nounlist.txt"))))
    digest = hashlib.sha256("\n".join(adjectives + ("",) + nouns).encode("utf-8")).hexdigest()
    if digest != LISTS_SHA256:
        raise UserError(
            f"the wonderwords word lists differ from the ones longbench100 was built with (sha256 {digest[:12]}...); "
            "install the pinned version: pip install 'wonderwords==3.0.1'"
        )
    return adjectives, nouns


def word_key(rng: random.Random) -> str:
    """One adjective-noun key drawn from ``rng``, e.g. ``quizzical-lantern``."""
    adjectives, nouns = key_words()
    return f"{rng.choice(adjectives)}-{rng.choice(nouns)}"


def distinct_word_keys(rng: random.Random, count: int, exclude: set[str]) -> list[str]:
    """Up to ``count`` different word keys not in ``exclude``, in a random order drawn from ``rng``."""
    adjectives, nouns = key_words()
    total = len(adjectives) * len(nouns)
    indices = rng.sample(range(total), min(total, count + len(exclude)))
    keys = (f"{adjectives[index // len(nouns)]}-{nouns[index % len(nouns)]}" for index in indices)
    return [key for key in keys if key not in exclude][:count]
