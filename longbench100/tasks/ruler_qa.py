"""RULER's QA tasks (NVIDIA/RULER ``scripts/data/synthetic/qa.py``): a question's own paragraphs among
distractor paragraphs of the same dataset, the question asked after them.

As RULER builds them: every paragraph is a numbered "Document N"; the question's context (SQuAD: its
paragraph; HotpotQA: all ten paragraphs the dataset gives the question, supporting and distracting) is
always in; for SQuAD the other paragraphs of the same article come next (RULER's ``more_context``: all of
them where they fit, else a random share), then random paragraphs of the dataset fill the length; all
are shuffled together. Scored by RULER's ``string_match_part`` (a gold answer inside the reply).

Ours fits each prompt to the exact budget (the last paragraph may be cut at a sentence end; RULER
searches a number of whole paragraphs per length), never shows a paragraph twice (RULER repeats the
dataset when it runs out) and keeps the loader's answerability rules (no bare yes/no answer, which a
reply holding "yes" would match half the time).
"""

from __future__ import annotations

import random
from typing import ClassVar

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.pieces import Piece, distractor_piece
from longbench100.fitting.spans import coverage_spans
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document, Item

from .base import Candidate, GoldAmongDistractors, Sample, distinct_texts

NEIGHBOUR_SHARE = 0.9  # of the room left by the question's own paragraphs, at most this much goes to its article's others


class RulerQa(GoldAmongDistractors):
    """A question's paragraphs among random paragraphs of its own dataset (the task's ``real`` sources)."""

    required_roles = ("real",)
    same_article_first: ClassVar[bool] = False  # SQuAD: the article's other paragraphs pad first

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self.dataset = {
            name: distinct_texts(corpus.documents_of([name]), corpus.near_duplicates)
            for name in corpus.sources_with_role(self.name, "real")
        }
        self._articles: dict[tuple[str, str], list[Document]] = {}
        for name, documents in self.dataset.items():
            for document in documents:
                if document.title:
                    self._articles.setdefault((name, document.title), []).append(document)

    def accepts(self, item: Item) -> bool:
        """Questions with an answer and at least one paragraph."""
        return (
            item.kind == "qa" and bool(item.question) and bool(item.answers) and bool(item.doc_ids)
        )

    def variables(self, item: Item) -> dict:
        """The question."""
        return {"question": item.question}

    def distractor_pool(self, item: Item, budget: int) -> list[Document]:
        """The paragraphs of the item's own dataset."""
        return self.dataset[item.source]

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The question's paragraphs among the dataset's (:class:`GoldAmongDistractors`), with the gold spans recorded."""
        sample = super().build(ctx, row, candidate, rng)
        if sample is not None:
            pieces = sample.fitted.pieces
            sample.gold["spans"] = coverage_spans(
                sample.fitted.prompt,
                [piece.text for piece in pieces],
                [piece.role == "gold" for piece in pieces],
            )
        return sample

    def leading_distractors(self, item: Item, ctx: BuildContext, rng: random.Random) -> list[Piece]:
        """SQuAD: the other paragraphs of the item's article, in a random order, as many as fit in most of the room."""
        if not self.same_article_first:
            return []
        gold = self.gold_documents(item)
        own = {document.id for document in gold}
        article = self._articles.get((item.source, gold[0].title or ""), []) if gold else []
        neighbours = [document for document in article if document.id not in own]
        rng.shuffle(neighbours)
        room = NEIGHBOUR_SHARE * (ctx.budget - sum(document.tokens for document in gold))
        chosen, used = [], 0
        for document in neighbours:
            if used + document.tokens + 8 <= room:  # a few tokens of heading per paragraph
                chosen.append(distractor_piece(document))
                used += document.tokens + 8
        return chosen
