"""passage_count: passages appear once or more each (a mean number of copies drawn per row), at least
one of them twice; the answer is the number of distinct passages."""

from __future__ import annotations

import random
from typing import Callable

from longbench100.fitting.fit import BuildContext, fit_prompt
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus

from .base import Candidate, Sample, TaskBuilder, distinct_texts


def copies_with_a_repeat(rng: random.Random) -> Callable[[], int]:
    """Copies per picked document, around a mean drawn per row so the distinct share varies widely.

    Each row draws its distinct share uniformly in (0, 1] and shows each document about 1 / share
    times (the floor or the ceiling of that mean, so the mean holds); the first document gets at
    least 2, so every prompt holds a repeat (with none, the announced number of paragraphs would be
    the answer). A fixed spread of copies (the anchor's 1-3) makes the distinct count about half the
    announced total in every row, so other rows' share would predict it without the passages.
    """
    mean_copies = 1 / (1 - rng.random())
    drawn = 0

    def copies() -> int:
        nonlocal drawn
        drawn += 1
        whole = int(mean_copies)
        count = whole + (rng.random() < mean_copies - whole)
        return max(count, 2) if drawn == 1 else count

    return copies


class PassageCount(TaskBuilder):
    """Documents of sources 1-9, each repeated about a per-row mean number of times, shuffled; the
    filler counts as one more distinct passage.

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
