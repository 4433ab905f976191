"""single_doc_sum: summarise one named passage hidden among distractors, or answer the item's narrower request about it."""

from longbench100.sources.records import Item

from .base import GoldAmongDistractors
from .summary_requests import specific_request


class SingleDocSum(GoldAmongDistractors):
    """Ground truth: summary items of one document (sources 10-15); distractors: documents of sources 10-15."""

    name = "single_doc_sum"

    def accepts(self, item: Item) -> bool:
        """Reference summaries of exactly one document."""
        return item.kind == "summary" and len(item.doc_ids) == 1

    def variables(self, item: Item) -> dict:
        """The item's request when it is query-focused (empty for a generic summary, which the template words itself)."""
        return {"request": specific_request(item)}

    def question(self, item: Item, gold_numbers: list[int]) -> str:
        """What the prompt asks for: the query-focused request, else a summary of the named passage."""
        return specific_request(item) or f"Summarise Passage {gold_numbers[0]}."

    def answers(self, item: Item) -> list[str]:
        """The reference summary."""
        return [item.reference_summary]
