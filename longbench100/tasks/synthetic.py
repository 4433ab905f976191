"""What the synthetic recall tasks share: filling a budget with repeated units, and the word list.

variable_tracking, common_words and frequent_words build their whole context from units (noise
sentences, numbered words, coded words) rather than from source passages; :func:`fill_units`
finds the largest number of units whose rendered prompt fits the budget, counting exactly.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Callable

from longbench100.core.errors import UserError
from longbench100.fitting.fit import BuildContext, Fitted

MAX_COUNTS = 40
WORDS_SHA256 = "6e2b70e661c464a84ab262797c8f6b87d96c252da76b140506d34ab9b16ac535"
"""sha256 of the word list (one word a line) from english-words 2.0.2: another list would change the data."""


def fill_units(
    ctx: BuildContext, budget: int, render: Callable[[int], str], most: int
) -> tuple[Fitted, int] | None:
    """The prompt ``render(n)`` and ``n``, for the largest ``n <= most`` whose exact token count is within ``budget``.

    ``render(n)`` must grow with ``n``. The search starts from a linear estimate (two exact counts),
    then narrows a bracket with exact counts; ``None`` when even ``render(0)`` is over budget.
    """
    fixed = ctx.count_prompt(render(0))
    if fixed > budget:
        return None
    probe = min(most, 64)
    per_unit = max(1e-3, (ctx.count_prompt(render(probe)) - fixed) / probe) if probe else 1.0
    fits, over = 0, most + 1  # render(fits) is within budget; render(over) is not (or out of range)
    best = (render(0), fixed)
    guess = min(most, int((budget - fixed) / per_unit))
    for _ in range(MAX_COUNTS):
        if over - fits <= 1:
            break
        guess = min(max(guess, fits + 1), over - 1)
        prompt = render(guess)
        tokens = ctx.count_prompt(prompt)
        if tokens <= budget:
            fits, best = guess, (prompt, tokens)
            guess = guess + max(1, int((budget - tokens) / per_unit))
        else:
            over = guess
            guess = guess - max(1, int((tokens - budget) / per_unit) + 1)
        if guess <= fits or guess >= over:
            guess = (fits + over) // 2
    return Fitted(best[0], best[1], [], 0), fits


@lru_cache(maxsize=1)
def english_words() -> tuple[str, ...]:
    """Plain lowercase English words (3-10 ASCII letters, nothing else) from the GCIDE dictionary list of ``english-words``, sorted.

    The list is checked against :data:`WORDS_SHA256`, so that a different package version cannot
    silently change what the same seed generates.
    """
    from english_words import get_english_words_set

    words = get_english_words_set(["gcide"], lower=True, alpha=True)
    kept = tuple(
        sorted(word for word in words if 3 <= len(word) <= 10 and word.isascii() and word.isalpha())
    )
    if hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest() != WORDS_SHA256:
        raise UserError(
            "the english-words package gives a different word list than english-words 2.0.2, so common_words "
            "would not be reproducible: install english-words==2.0.2"
        )
    return kept
