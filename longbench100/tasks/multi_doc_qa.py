"""multi_doc_qa: a multi-hop question whose supporting passages are split out and shuffled among distractors."""

from longbench100.sources.records import Item
from .base import GoldAmongDistractors


class MultiDocQa(GoldAmongDistractors):
    """Ground truth: multi-hop QA items (sources 16-19); distractors: documents of sources 1-8."""

    name = "multi_doc_qa"
    closed_book = True

    def accepts(self, item: Item) -> bool:
        """Questions with answers and at least one supporting passage."""
        return item.kind == "qa"

    def variables(self, item: Item) -> dict:
        """The question; the closed-book switch is off for the main prompt."""
        return {"question": item.question, "closed_book": False}
