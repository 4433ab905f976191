"""single_doc_qa: a question about one passage, hidden among distractors; the instruction names that passage."""

from ..records import Item
from .base import GoldAmongDistractors


class SingleDocQa(GoldAmongDistractors):
    """Ground truth: single-document QA items (sources 1-8); distractors: documents of sources 1-8."""

    name = "single_doc_qa"
    closed_book = True

    def accepts(self, item: Item) -> bool:
        """Questions with answers about exactly one document."""
        return item.kind == "qa" and len(item.doc_ids) == 1

    def variables(self, item: Item) -> dict:
        """The question; the closed-book switch is off for the main prompt."""
        return {"question": item.question, "closed_book": False}
