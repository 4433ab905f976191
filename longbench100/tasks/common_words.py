"""common_words: a numbered word list where ten words appear 30 times and all others 3 times (RULER).

As RULER's ``common_words_extraction.py`` does, the prompt opens with a worked example followed by
its answer: from 4k up a list of 40 words (ten of them 10 times, the others 3 times) before the
task's 30 / 3; below 4k RULER's small settings, 20 words (3 / 1) before the task's 6 / 1. The
example's words never occur in the row's own list.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from longbench100.core.lengths import parse_length
from longbench100.fitting.fit import BuildContext
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import whole_context_spans
from longbench100.sources.records import Document
from longbench100.text.tokenization import Tokenizer

from .base import Candidate, Sample, TaskBuilder, uniform_fill
from .synthetic import english_words, fill_units

COMMON = 10
CONTROL_WORDS = 12_000  # words of the gold-removed twin's list (36,000 entries, about 230k tokens)
SHORT_LENGTH = 4096  # RULER uses its small settings below this length


@dataclass(frozen=True)
class Repeats:
    """How often the common and the other words appear, in the example and in the task's list."""

    example_words: int
    example_common: int
    example_other: int
    common: int
    other: int


LONG = Repeats(40, 10, 3, 30, 3)  # RULER's settings from 4k up
SHORT = Repeats(20, 3, 1, 6, 1)  # and below


def words_for_row(seed: int, row: int, stream: str = "row") -> list[str]:
    """The row's word order: its ten common words first, then the others in the order they are added.

    No common word is part of another word of the row ("pro" never sits beside "cuproid"), since
    the metric looks for each gold word inside the reply: the common words are drawn so that none
    holds another, and other words that hold a common word are left out.
    """
    words = list(english_words())
    derive_rng(seed, "common_words", stream, row).shuffle(words)
    common: list[str] = []
    for word in words:
        if not any(word in chosen or chosen in word for chosen in common):
            common.append(word)
        if len(common) == COMMON:
            break
    chosen = set(common)
    return common + [
        word for word in words if word not in chosen and not any(gold in word for gold in common)
    ]


def worked_example(seed: int, row: int, repeats: Repeats) -> tuple[list[str], str]:
    """The row's worked example: its words (the ten common ones first) and the example's numbered list."""
    words = words_for_row(seed, row, "example")[: repeats.example_words]
    entries = word_list(
        words,
        len(words) - COMMON,
        derive_rng(seed, "common_words", "example order", row),
        repeats.example_common,
        repeats.example_other,
    )
    return words, numbered(entries)


def word_list(
    words: list[str], others: int, rng: random.Random, common_times: int, other_times: int
) -> list[str]:
    """The list's entries: the common words ``common_times`` each and ``others`` more ``other_times`` each, shuffled."""
    entries = [word for word in words[:COMMON] for _ in range(common_times)]
    entries += [word for word in words[COMMON : COMMON + others] for _ in range(other_times)]
    rng.shuffle(entries)
    return entries


def numbered(entries: list[str]) -> str:
    """``1. word`` lines."""
    return "\n".join(f"{number}. {word}" for number, word in enumerate(entries, start=1))


class CommonWords(TaskBuilder):
    """As many rarely repeated words as fill the budget around the row's ten common words; name the ten."""

    name = "common_words"
    required_roles = ()

    def control_pool(self, tokenizer: Tokenizer) -> list[Document]:
        """A numbered list of English words, each the same number of times (the task's other-word
        count), shuffled: the gold-removed twin's list, where no ten words are the most common."""
        words = list(english_words())
        derive_rng(self.name, "control fill").shuffle(words)
        words = words[:CONTROL_WORDS]
        order = derive_rng(self.name, "control order")
        entries = word_list(words, len(words) - COMMON, order, LONG.other, LONG.other)
        return uniform_fill(self.name, numbered(entries), tokenizer)

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: the list with the most other words whose prompt fits the budget less the answer space."""
        repeats = SHORT if parse_length(ctx.label) < SHORT_LENGTH else LONG
        example_words, example_list = worked_example(ctx.seed, row, repeats)
        taken = set(example_words)
        words = [word for word in words_for_row(ctx.seed, row) if word not in taken]
        example = {"word_list": example_list, "answer": ", ".join(example_words[:COMMON])}

        def listed(others: int) -> str:
            return numbered(
                word_list(
                    words,
                    others,
                    derive_rng(ctx.seed, self.name, ctx.label, row, "order", others),
                    repeats.common,
                    repeats.other,
                )
            )

        def render(others: int) -> str:
            return self.templates.render(
                self.name, {"word_list": listed(others), "count": COMMON, "example": example}
            )

        filled = fill_units(ctx, ctx.budget, render, len(words) - COMMON)
        if filled is None:
            return None
        fitted, others = filled
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "times": {"common": repeats.common, "other": repeats.other},
            "example_words": example_words[:COMMON],
            "spans": whole_context_spans(fitted.prompt, [listed(others)]),
        }  # counting needs every entry
        return Sample(
            fitted, words[:COMMON], f"What are the {COMMON} most common words in the list?", gold
        )
