"""passage_count: whole documents, one of them shown twice or more, shuffled; the answer is the
number of distinct passages, which each row draws uniformly over the counts its budget allows."""

from __future__ import annotations

import random
from typing import Callable, Sequence

from longbench100.fitting.fit import USUAL_FILL, BuildContext, Fitted, fit_prompt
from longbench100.fitting.packing import first_fit
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document

from .base import Candidate, Sample, TaskBuilder, distinct_texts

FILL_ATTEMPTS = 4


class DistinctTarget:
    """A packer (:data:`~longbench100.fitting.packing.Packer`) that draws the row's number of
    distinct documents first, then packs the room with copies of them.

    The documents a first fit places once each (the pool in a random order) bound the row: as many
    of them as leave room for a second copy of their cheapest are the most it can hold
    (:attr:`most`). The row draws its count uniformly from 1 to that most, takes that many of them
    at random, and fills the room with copies of randomly chosen ones while any fits, so at least
    one is repeated. The count is then uniform over what the budget allows, whatever the other rows
    hold, and the announced total (about the room over a document's size) does not follow from it.
    A fixed spread of copies (the anchor's 1-3) makes the count about half the announced total in
    every row, so other rows' share would predict it without reading the passages.
    """

    def __init__(self) -> None:
        self.most = 0
        self.drawn: set[str] = set()

    def __call__(
        self,
        pool: Sequence[Document],
        rng: random.Random,
        room: int,
        per_passage: int,
        excluded: Callable[[Document], bool],
    ) -> list[tuple[Document, int]]:
        """``(document, copies)`` pairs: the drawn number of documents, filling ``room``."""
        fitting = [document for document, _ in first_fit(pool, rng, room, per_passage, excluded)]
        if not fitting:
            return []

        def cost(document: Document) -> int:
            return document.tokens + per_passage

        cheapest = min(fitting, key=cost)
        self.most = max(
            1, len(fitting) - (sum(map(cost, fitting)) + cost(cheapest) > room)
        )  # a lone document too large to show twice is shown once
        chosen = rng.sample(fitting, rng.randint(1, self.most))
        if cost(min(chosen, key=cost)) > room - sum(map(cost, chosen)) and cheapest not in chosen:
            # no second copy fits: the cheapest document stands in for the dearest chosen one,
            # which frees at least the room of a copy of it (another document is left out)
            chosen[chosen.index(max(chosen, key=cost))] = cheapest
        self.drawn = {document.id for document in chosen}
        copies = [1] * len(chosen)
        left = room - sum(map(cost, chosen))
        while fits := [index for index, document in enumerate(chosen) if cost(document) <= left]:
            index = rng.choice(fits)
            copies[index] += 1
            left -= cost(chosen[index])
        return list(zip(chosen, copies))


class PassageCount(TaskBuilder):
    """Documents of sources 1-9, a drawn number of them each shown once or more, shuffled; the
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
        """One sample: copies of the drawn documents plus a filler, shuffled together."""
        target, fitted = self._fit(ctx, rng)
        if fitted is None:
            return None
        passages = [piece for piece in fitted.pieces if piece.is_passage]
        keys = self.corpus.near_duplicates.key
        distinct = len({keys(piece.doc) for piece in passages if piece.doc})
        # the filler (a cut, or a whole document where one fits the gap) is one passage more
        extra = len(
            {
                keys(piece.doc)
                for piece in passages
                if piece.doc and piece.doc.id not in target.drawn
            }
        )
        gold = {
            "sources": sorted({piece.doc.source for piece in passages if piece.doc}),
            "item_ids": [],
            "passages": [],
            "distinct": distinct,
            "total": len(passages),
            # the counts this row could hold: what its room allowed, never above the passages shown
            "possible": [1 + extra, min(target.most + extra, len(passages))],
            "depth": None,
        }
        return Sample(fitted, [str(distinct)], "How many distinct paragraphs are there?", gold)

    def _fit(self, ctx: BuildContext, rng: random.Random) -> tuple[DistinctTarget, Fitted | None]:
        """The packed prompt and its packer. A draw whose gap (under the cheapest drawn document)
        no filler of the few tried can close is drawn again, up to :data:`FILL_ATTEMPTS` times:
        few documents leave a gap as large as one of them, where a first fit leaves one under the
        pool's smallest."""
        for _ in range(FILL_ATTEMPTS):
            target = DistinctTarget()
            fitted = fit_prompt(ctx, rng, self.render, [], self.noisy_pool, packer=target)
            if fitted is None or fitted.padding_ran_out or fitted.tokens >= ctx.budget * USUAL_FILL:
                break
        return target, fitted
