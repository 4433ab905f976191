"""frequent_words: a text of coded words drawn with Zipf frequencies (alpha 2); name the three most frequent (RULER)."""

from __future__ import annotations

import itertools
import random
import string
from collections import Counter

from ..generate.fitting import BuildContext, Fitted
from ..generate.rng import derive_rng
from ..generate.spans import whole_context_spans
from .base import Sample, TaskBuilder
from .synthetic import fill_units

ALPHA = 2.0
VOCABULARY = 500
TOP = 3


def vocabulary_for_row(seed: int, row: int) -> list[str]:
    """The row's distinct coded words (3-6 random lowercase letters), most probable first."""
    rng = derive_rng(seed, "frequent_words", "row", row)
    codes: list[str] = []
    while len(codes) < VOCABULARY:
        code = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 6)))
        if code not in codes:
            codes.append(code)
    return codes


def word_stream(seed: int, row: int, count: int) -> list[int]:
    """The row's first ``count`` word ranks, drawn with probability proportional to ``1 / rank**ALPHA``.

    The same row gives the same stream at every length; a longer prompt takes a longer prefix.
    """
    weights = list(itertools.accumulate(1 / rank**ALPHA for rank in range(1, VOCABULARY + 1)))
    return derive_rng(seed, "frequent_words", "row", row, "stream").choices(range(VOCABULARY), cum_weights=weights, k=count)


def top_words(words: list[str]) -> list[str] | None:
    """The ``TOP`` most frequent words, most frequent first, or ``None`` when a tie makes them ambiguous."""
    ranked = Counter(words).most_common(TOP + 1)
    counts = [count for _, count in ranked] + [0]
    if len(ranked) < TOP or len(set(counts[:TOP + 1])) < TOP + 1:
        return None
    return [word for word, _ in ranked[:TOP]]


class FrequentWords(TaskBuilder):
    """A prefix of the row's Zipf stream of coded words, as long as the budget allows; name the three most frequent."""

    name = "frequent_words"
    required_roles = ()

    def build(self, ctx: BuildContext, row: int, candidate: None, rng: random.Random) -> Sample | None:
        """One sample: the longest stream prefix that fits, shortened word by word until the top three are untied."""
        codes = vocabulary_for_row(ctx.seed, row)
        stream = [codes[rank] for rank in word_stream(ctx.seed, row, ctx.budget)]

        def render(count: int) -> str:
            return self.templates.render(self.name, {"text": " ".join(stream[:count]), "count": TOP})

        filled = fill_units(ctx, ctx.budget, render, len(stream))
        if filled is None:
            return None
        fitted, count = filled
        while count > 0 and top_words(stream[:count]) is None:
            count -= 1
        answers = top_words(stream[:count])
        if answers is None:
            return None
        if count != filled[1]:
            prompt = render(count)
            fitted = Fitted(prompt, ctx.count_prompt(prompt), [], 0)
        gold = {"sources": [], "item_ids": [], "passages": [], "words": count,
                "counts": [stream[:count].count(word) for word in answers],
                "spans": whole_context_spans(fitted.prompt, [" ".join(stream[:count])])}  # counting needs every word
        return Sample(fitted, answers, f"What are the {TOP} most frequent coded words?", gold)
