"""common_words: a numbered word list where ten words appear 30 times and all others 3 times (RULER)."""

from __future__ import annotations

import random

from ..generate.fitting import BuildContext
from ..generate.rng import derive_rng
from ..generate.spans import whole_context_spans
from .base import Sample, TaskBuilder
from .synthetic import english_words, fill_units

COMMON = 10
COMMON_TIMES = 30
OTHER_TIMES = 3


def words_for_row(seed: int, row: int) -> list[str]:
    """The row's word order: its ten common words first, then the others in the order they are added.

    No common word is part of another word of the row ("pro" never sits beside "cuproid"), since
    the metric looks for each gold word inside the reply: the common words are drawn so that none
    holds another, and other words that hold a common word are left out.
    """
    words = list(english_words())
    derive_rng(seed, "common_words", "row", row).shuffle(words)
    common: list[str] = []
    for word in words:
        if not any(word in chosen or chosen in word for chosen in common):
            common.append(word)
        if len(common) == COMMON:
            break
    chosen = set(common)
    return common + [word for word in words if word not in chosen and not any(gold in word for gold in common)]


def word_list(words: list[str], others: int, rng: random.Random) -> list[str]:
    """The list's entries: the common words ``COMMON_TIMES`` each and ``others`` more ``OTHER_TIMES`` each, shuffled."""
    entries = [word for word in words[:COMMON] for _ in range(COMMON_TIMES)]
    entries += [word for word in words[COMMON:COMMON + others] for _ in range(OTHER_TIMES)]
    rng.shuffle(entries)
    return entries


def numbered(entries: list[str]) -> str:
    """``1. word`` lines."""
    return "\n".join(f"{number}. {word}" for number, word in enumerate(entries, start=1))


class CommonWords(TaskBuilder):
    """As many rarely repeated words as fill the budget around the row's ten common words; name the ten."""

    name = "common_words"
    required_roles = ()

    def build(self, ctx: BuildContext, row: int, candidate: None, rng: random.Random) -> Sample | None:
        """One sample: the list with the most other words whose prompt fits the budget less the answer space."""
        words = words_for_row(ctx.seed, row)

        def listed(others: int) -> str:
            return numbered(word_list(words, others, derive_rng(ctx.seed, self.name, ctx.label, row, "order", others)))

        def render(others: int) -> str:
            return self.templates.render(self.name, {"word_list": listed(others), "count": COMMON})

        filled = fill_units(ctx, ctx.budget, render, len(words) - COMMON)
        if filled is None:
            return None
        fitted, others = filled
        gold = {"sources": [], "item_ids": [], "passages": [], "times": {"common": COMMON_TIMES, "other": OTHER_TIMES},
                "spans": whole_context_spans(fitted.prompt, [listed(others)])}  # counting needs every entry
        return Sample(fitted, words[:COMMON], f"What are the {COMMON} most common words in the list?", gold)
