"""frequent_words: RULER's frequent-words extraction (fwe) on our exact budgets.

As in RULER's ``freq_words_extraction.py``: a vocabulary of 6-letter random codes, one per 50
tokens of budget; word of rank k appears ``int(N * k**-2 / zeta(2))`` times for a text of N words
(exact Zipf counts, alpha = 2, not samples); the top-ranked word is replaced by the noise token
"...." that the prompt says to ignore, and the answer is the codes of ranks 2-4. Codes that are
English words are never drawn, and the words are shuffled.
"""

from __future__ import annotations

import random
import string
from functools import lru_cache

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import whole_context_spans
from longbench100.sources.records import Document
from longbench100.text.tokenization import Tokenizer

from .base import Candidate, Sample, TaskBuilder, uniform_fill
from .synthetic import english_words, fill_units

ALPHA = 2.0
CODE_LETTERS = 6
TOKENS_PER_VOCABULARY_WORD = 50  # RULER: vocab_size = max_seq_length // 50
NOISE = "...."
ANSWER_RANKS = 3  # the codes of ranks 2, 3 and 4
CONTROL_CODES, CONTROL_REPEATS = 4000, 20  # the gold-removed twin's text: 80,000 coded words
ZETA_2 = 1.6449340668482264  # zeta(2) = pi**2 / 6, RULER's normaliser (scipy.special.zeta(2.0))


def vocabulary_for_row(seed: int, row: int, size: int) -> list[str]:
    """``size`` distinct 6-letter codes that are not English words, in rank order; rank 1 is the noise token."""
    rng = derive_rng(seed, "frequent_words", "row", row)
    english = _english_word_set()
    codes: dict[str, None] = {}
    while len(codes) < size - 1:
        code = "".join(rng.choice(string.ascii_lowercase) for _ in range(CODE_LETTERS))
        if code not in english:
            codes.setdefault(code)
    return [NOISE, *codes]


@lru_cache(maxsize=1)
def _english_word_set() -> frozenset[str]:
    """The English word list as a set, built once (codes that are English words are not drawn)."""
    return frozenset(english_words())


def rank_counts(words: int, size: int) -> list[int]:
    """How often each rank appears in a text of ``words`` words: ``int(words * k**-ALPHA / zeta(ALPHA))``."""
    return [int(words * rank**-ALPHA / ZETA_2) for rank in range(1, size + 1)]


def coded_text(vocabulary: list[str], words: int, rng: random.Random) -> list[str]:
    """The text's words: each code repeated its rank's count, shuffled by ``rng``."""
    text = [
        code
        for code, count in zip(vocabulary, rank_counts(words, len(vocabulary)))
        for _ in range(count)
    ]
    rng.shuffle(text)
    return text


class FrequentWords(TaskBuilder):
    """A Zipf text of coded words as long as the budget allows; name the three most frequent codes, ignoring "....".

    The vocabulary is the row's (one code per 50 tokens of the length's budget, so it grows with
    the length as RULER's does); the text size is the largest that fits, found by exact counts.
    """

    name = "frequent_words"
    required_roles = ()

    def control_pool(self, tokenizer: Tokenizer) -> list[Document]:
        """A text of coded words, each the same number of times, shuffled: the gold-removed twin's
        text, where no code is more frequent than another."""
        codes = vocabulary_for_row(-1, 0, CONTROL_CODES + 1)[1:]
        text = [code for code in codes for _ in range(CONTROL_REPEATS)]
        derive_rng(self.name, "control order").shuffle(text)
        return uniform_fill(self.name, " ".join(text), tokenizer)

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: the longest Zipf text that fits; the gold is the codes of ranks 2-4."""
        vocabulary = vocabulary_for_row(
            ctx.seed, row, max(ANSWER_RANKS + 2, ctx.budget // TOKENS_PER_VOCABULARY_WORD)
        )

        def text(words: int) -> str:
            return " ".join(
                coded_text(
                    vocabulary,
                    words,
                    derive_rng(ctx.seed, self.name, ctx.label, row, "order", words),
                )
            )

        def render(words: int) -> str:
            return self.templates.render(self.name, {"text": text(words), "noise": NOISE})

        filled = fill_units(ctx, ctx.budget, render, ctx.budget)
        if filled is None:
            return None
        fitted, words = filled
        counts = rank_counts(words, len(vocabulary))
        if (
            not counts[1] > counts[2] > counts[3] > counts[4]
        ):  # too short a text to rank the answers
            return None
        answers = vocabulary[1 : 1 + ANSWER_RANKS]
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "words": sum(counts),
            "vocabulary": len(vocabulary),
            "noise": NOISE,
            "noise_count": counts[0],
            "counts": counts[1 : 1 + ANSWER_RANKS],
            "spans": whole_context_spans(fitted.prompt, [text(words)]),
        }  # counting needs every word
        return Sample(
            fitted,
            answers,
            "What are the three most frequent coded words, ignoring the dots?",
            gold,
        )
