"""passage_retrieval: given the reference summary of one passage, name the passage it summarises.

Distractors come from the gold document's own source when it has enough text to fill the budget (a
government report among news articles is found by its genre alone); every prompt holds at least
two passages.
"""

from longbench100.fitting.fit import BuildContext
from longbench100.sources.records import Document, Item
from .base import Candidate, GoldAmongDistractors, Sample

MIN_SECOND_PASSAGE = 64
"""Tokens a candidate's prompt keeps free for a second passage (a cut-off opening at least)."""


class PassageRetrieval(GoldAmongDistractors):
    """Ground truth: summary items of one document (sources 9-15); distractors: documents of sources 9-15."""

    name = "passage_retrieval"

    def accepts(self, item: Item) -> bool:
        """Reference summaries of exactly one document."""
        return item.kind == "summary" and len(item.doc_ids) == 1

    def variables(self, item: Item) -> dict:
        """The summary to match."""
        return {"summary": item.summary}

    def candidates(self, ctx: BuildContext) -> list[Candidate]:
        """As the base builder's, each needing room for a second passage besides its own."""
        candidates = super().candidates(ctx)
        assert candidates is not None, "the base builder lists a candidate for every accepted item"
        return [Candidate(candidate.item, candidate.min_tokens + MIN_SECOND_PASSAGE)
                for candidate in candidates]

    def distractor_pool(self, item: Item, budget: int) -> list[Document]:
        """The gold's own source's documents when they hold twice the budget; else the task's whole noisy pool
        (a source too small to pad a long prompt alone: its documents then come along with the others')."""
        own = self.source_pools.get(item.source, [])
        return own if sum(document.tokens for document in own) >= 2 * budget else self.noisy_pool

    def build(self, ctx, row, candidate, rng) -> Sample | None:
        """As the base builder, with the gold passage number as the answer; ``None`` with fewer than two passages."""
        sample = super().build(ctx, row, candidate, rng)
        if sample is not None and sum(piece.is_passage for piece in sample.fitted.pieces) < 2:
            return None
        if sample is not None:
            sample.answers = [str(sample.gold["passages"][0])]
            sample.question = candidate.item.summary
        return sample
