"""passage_count: passages appear one to three times each, at least one of them twice; the answer is the number of distinct passages."""

from __future__ import annotations

import random
from typing import Callable

from longbench100.fitting.fit import BuildContext, fit_prompt
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus

from .base import Candidate, Sample, TaskBuilder, distinct_texts

MAX_COPIES = 3


def copies_with_a_repeat(rng: random.Random) -> Callable[[], int]:
    """Copies per picked document: the first gets 2-3, each later one 1-3, so every prompt holds a repeat
    (with none, the announced number of paragraphs would be the answer)."""
    drawn = 0

    def copies() -> int:
        nonlocal drawn
        drawn += 1
        return rng.randint(2 if drawn == 1 else 1, MAX_COPIES)

    return copies


class PassageCount(TaskBuilder):
    """Documents of sources 1-9, each repeated 1-3 times and shuffled; the filler counts as one more distinct passage.

    The pool holds one document per near-duplicate group, so the only repeats in a prompt are the
    deliberate copies and the answer (distinct documents) is unambiguous.
    """

    name = "passage_count"
    required_roles = ("real",)

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self.noisy_pool = distinct_texts(
            corpus.documents_of(corpus.sources_with_role(self.name, "real")), corpus.near_duplicates
        )

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: repeated whole documents plus a filler, shuffled together."""
        fitted = fit_prompt(
            ctx, rng, self.render, [], self.noisy_pool, copies=copies_with_a_repeat(rng)
        )
        if fitted is None:
            return None
        passages = [piece for piece in fitted.pieces if piece.is_passage]
        distinct = len(
            {self.corpus.near_duplicates.key(piece.doc) for piece in passages if piece.doc}
        )
        gold = {
            "sources": sorted({piece.doc.source for piece in passages if piece.doc}),
            "item_ids": [],
            "passages": [],
            "distinct": distinct,
            "total": len(passages),
            "depth": None,
        }
        return Sample(fitted, [str(distinct)], "How many distinct paragraphs are there?", gold)
