"""multi_doc_sum: summarise the named passages of one item together, or answer the item's narrower request from them."""

from longbench100.fitting.templates import passage_phrase
from longbench100.sources.records import Item

from .base import GoldAmongDistractors
from .summary_requests import specific_request


class MultiDocSum(GoldAmongDistractors):
    """Ground truth: multi-document summaries (source 20 and its stand-ins); distractors: documents of sources 10-15."""

    name = "multi_doc_sum"

    def accepts(self, item: Item) -> bool:
        """Items with a reference summary."""
        return item.kind == "summary"

    def variables(self, item: Item) -> dict:
        """The item's request when it is query-focused (empty for a generic summary of the news passages)."""
        return {"request": specific_request(item)}

    def question(self, item: Item, gold_numbers: list[int]) -> str:
        """What the prompt asks for: the query-focused request, else one summary of the named passages."""
        return specific_request(item) or f"Summarise the news in {passage_phrase(gold_numbers)}" + (
            " together." if len(gold_numbers) > 1 else "."
        )

    def answers(self, item: Item) -> list[str]:
        """The reference summary."""
        return [item.reference_summary]
