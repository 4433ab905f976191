"""multi_doc_sum: summarise several named news passages together into one summary."""

from ..records import Item
from .base import GoldAmongDistractors


class MultiDocSum(GoldAmongDistractors):
    """Ground truth: multi-document news summaries (source 20); distractors: documents of sources 10-15."""

    name = "multi_doc_sum"

    def accepts(self, item: Item) -> bool:
        """Items with a reference summary."""
        return item.kind == "summary"

    def question(self, item: Item, gold_numbers: list[int]) -> str:
        """What the prompt asks for: one summary of the named news passages."""
        return f"Summarise the news in Passages {', '.join(map(str, gold_numbers))} together."

    def answers(self, item: Item) -> list[str]:
        """The reference summary."""
        return [item.summary]
