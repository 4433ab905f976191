"""attributing (ETHIC): name every passage that supports a target among same-domain distractors.

The target is an item whose answer draws on several documents: a BioASQ question with its answer
(its relevant snippets support it) or a multi-document summary (its cluster's articles). The
passages around them come from the item's own source when that source also pads (same field,
so topic alone does not give the supporting passages away), else from the task's noisy sources.
The answer is the set of supporting passage numbers (metric ``id_f1``).

Information coverage by construction is the whole context: the answer is a set over all passages,
so every passage has to be read and judged; leaving any one unread can change the answer
(docs/coverage.md).
"""

from __future__ import annotations

import random

from ..generate.fitting import BuildContext
from ..generate.spans import whole_context_spans
from ..records import Document, Item
from .base import Candidate, GoldAmongDistractors, Sample

MIN_SUPPORTING = 2  # one supporting passage would make this passage retrieval


class Attributing(GoldAmongDistractors):
    """Ground truth: items with at least two supporting documents; distractors: their source's other documents."""

    name = "attributing"

    def accepts(self, item: Item) -> bool:
        """Items with a target text (an answer or a summary) and at least two distinct supporting documents."""
        has_target = item.summary is not None or any(answer.strip() for answer in item.answers)
        return has_target and len(self.gold_documents(item)) >= MIN_SUPPORTING

    def variables(self, item: Item) -> dict:
        """The target: a question with its answer, or a summary (with its request when it has one)."""
        if item.kind == "summary":
            return {"question": item.question or "", "target": item.summary, "kind": "summary"}
        return {"question": item.question or "", "target": item.answers[0], "kind": "answer"}

    def question(self, item: Item, gold_numbers: list[int]) -> str:
        """What the prompt asks, in one line."""
        if item.kind == "summary":
            return "Which passages does this summary draw on?" + (f" Its request: {item.question}" if item.question else "")
        return f"Which passages support the answer to this question: {item.question}"

    def distractor_pool(self, item: Item, budget: int) -> list[Document]:
        """The item's own source's documents when that source pads this task (same domain), else the noisy pool."""
        return self.source_pools.get(item.source, self.noisy_pool)

    def build(self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random) -> Sample | None:
        """The item's supporting passages among distractors; the answer lists their numbers."""
        sample = super().build(ctx, row, candidate, rng)
        if sample is None:
            return None
        sample.answers = [", ".join(str(number) for number in sample.gold["passages"])]
        sample.gold["spans"] = whole_context_spans(sample.fitted.prompt, [piece.text for piece in sample.fitted.pieces])
        return sample
