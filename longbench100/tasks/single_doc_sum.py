"""single_doc_sum: summarise one named passage hidden among distractors."""

import re

from ..records import Item
from .base import GoldAmongDistractors

_GENERIC_REQUEST = re.compile(r"^(please\s+)?(help me\s+)?(write|give|generate|summari[sz]e|provide)\b.*\bsummar", re.IGNORECASE | re.DOTALL)


class SingleDocSum(GoldAmongDistractors):
    """Ground truth: summary items of one document (sources 10-15); distractors: documents of sources 10-15."""

    name = "single_doc_sum"

    def accepts(self, item: Item) -> bool:
        """Reference summaries of exactly one document."""
        return item.kind == "summary" and len(item.doc_ids) == 1

    def variables(self, item: Item) -> dict:
        """The source's own request when it asks for something specific (a query-focused summary)."""
        request = item.question or ""
        return {"request": "" if _GENERIC_REQUEST.match(request) or request.lower().startswith("summarize the whole") else request}

    def question(self, item: Item, gold_numbers: list[int]) -> str:
        """What the prompt asks for: a summary of the named passage, with the source's request when specific."""
        request = self.variables(item)["request"]
        return f"Summarise Passage {gold_numbers[0]}." + (f" {request}" if request else "")

    def answers(self, item: Item) -> list[str]:
        """The reference summary."""
        return [item.summary]
