"""attributing (ETHIC): name every passage that supports a target among same-domain distractors.

The target is an item whose answer draws on several documents: a BioASQ question with its answer
(its relevant snippets support it) or a multi-document summary (its cluster's articles). The
passages around them are the supporting documents of the *most similar other targets* of the
same source (TF-IDF cosine of their questions, or of their texts when there is no question), nearest
first, as many as the length needs: passages on the same subject that support a neighbouring
question, not this one, as ETHIC's medical and legal versions draw their candidates from one
topic. Targets whose question is nearly the same as this one's (cosine >= 0.8) are skipped, so a
distractor never supports the same claim (a small source that runs out of neighbours pads with its
other documents, or the task's noisy sources when it does not pad). The answer is the set of supporting passage numbers
(metric ``id_f1``).

Information coverage by construction is the whole context: the answer is a set over all passages,
so every passage has to be read and judged; leaving any one unread can change the answer
(docs/coverage.md).
"""

from __future__ import annotations

import random
from functools import cached_property

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.spans import whole_context_spans
from longbench100.sources.records import Document, Item

from .base import Candidate, GoldAmongDistractors, Sample

MIN_SUPPORTING = 2  # one supporting passage would make this passage retrieval
SAME_QUESTION = 0.8  # neighbours at least this similar ask the same thing and are not used
POOL_MARGIN = 1.5  # the topical pool holds this many times the budget in tokens, so the fit still draws at random


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
            return "Which passages does this summary draw on?" + (
                f" Its request: {item.question}" if item.question else ""
            )
        return f"Which passages support the answer to this question: {item.question}"

    def distractor_pool(self, item: Item, budget: int) -> list[Document]:
        """The supporting documents of the targets most similar to ``item``, nearest first, about 1.5x the budget in tokens."""
        own = {self.corpus.near_duplicates.key(document) for document in self.gold_documents(item)}
        pool: list[Document] = []
        seen: set[str] = set(own)
        tokens = 0
        for neighbour in self._neighbours(item):
            for document in self.gold_documents(neighbour):
                key = self.corpus.near_duplicates.key(document)
                if key not in seen:
                    seen.add(key)
                    pool.append(document)
                    tokens += document.tokens
            if tokens >= POOL_MARGIN * budget:
                return pool
        rest = self.source_pools.get(item.source, self.noisy_pool)
        return pool + [
            document for document in rest if self.corpus.near_duplicates.key(document) not in seen
        ]

    def _neighbours(self, item: Item) -> list[Item]:
        """The task's other targets from the same source, most similar first, without those that ask nearly the same question."""
        index = self._item_index[item.id]
        similarity = (self._item_vectors @ self._item_vectors[index].T).toarray().ravel()
        order = sorted(range(len(self.items)), key=lambda other: (-similarity[other], other))
        return [
            self.items[other]
            for other in order
            if other != index
            and similarity[other] < SAME_QUESTION
            and self.items[other].source == item.source
        ]

    @cached_property
    def _item_index(self) -> dict[str, int]:
        return {item.id: index for index, item in enumerate(self.items)}

    @cached_property
    def _item_vectors(self):
        """L2-normalised TF-IDF vectors of every target's question (its target text when it has none)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = [item.question or item.summary or item.answers[0] for item in self.items]
        return TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(texts)

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The item's supporting passages among distractors; the answer lists their numbers."""
        sample = super().build(ctx, row, candidate, rng)
        if sample is None:
            return None
        sample.answers = [", ".join(str(number) for number in sample.gold["passages"])]
        sample.gold["spans"] = whole_context_spans(
            sample.fitted.prompt, [piece.text for piece in sample.fitted.pieces]
        )
        return sample
