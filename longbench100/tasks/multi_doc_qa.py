"""multi_doc_qa: a multi-hop question whose supporting passages are shuffled among distractors.

An item needs at least two supporting passages (different texts): 100-LongBench keeps only the
rag-mini-bioasq questions with more than one relevant passage (``get_dataset`` in
uservan/100-LongBench ``utils/data_utils.py``); a question one passage answers is single_doc_qa's.
"""

from longbench100.sources.records import Item

from .base import GoldAmongDistractors

MIN_SUPPORTING_PASSAGES = 2


class MultiDocQa(GoldAmongDistractors):
    """Ground truth: multi-hop QA items (sources 16-19); distractors: documents of sources 1-8."""

    name = "multi_doc_qa"
    closed_book = True

    def accepts(self, item: Item) -> bool:
        """Questions with answers and at least two supporting passages of different texts."""
        return item.kind == "qa" and len(self.gold_documents(item)) >= MIN_SUPPORTING_PASSAGES

    def variables(self, item: Item) -> dict:
        """The question; the closed-book switch is off for the main prompt."""
        return {"question": item.question, "closed_book": False}
