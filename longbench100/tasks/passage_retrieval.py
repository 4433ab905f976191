"""passage_retrieval: given the reference summary of one passage, name the passage it summarises."""

from ..records import Item
from .base import GoldAmongDistractors, Sample


class PassageRetrieval(GoldAmongDistractors):
    """Ground truth: summary items of one document (sources 9-15); distractors: documents of sources 9-15."""

    name = "passage_retrieval"

    def accepts(self, item: Item) -> bool:
        """Reference summaries of exactly one document."""
        return item.kind == "summary" and len(item.doc_ids) == 1

    def variables(self, item: Item) -> dict:
        """The summary to match."""
        return {"summary": item.summary}

    def build(self, ctx, row, candidate, rng) -> Sample | None:
        """As the base builder, with the gold passage number as the answer."""
        sample = super().build(ctx, row, candidate, rng)
        if sample is not None:
            sample.answers = [str(sample.gold["passages"][0])]
            sample.question = candidate.item.summary
        return sample
