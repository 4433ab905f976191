"""rag_hard: HELMET's retrieval-augmented QA with hard negatives.

A question's gold passages sit among negatives from the same source's corpus: by default the
passages BM25 ranks best for the question (``--negatives bm25``), as many as the budget holds;
``--negatives random`` draws them at random from the same corpus (the easy variant). The chosen
negatives are shown in a seeded random order (each negative's place key is drawn once per item, so
negatives shown at two lengths keep their order), never in score order, which would point at the
gold. The gold passages stay together as one block whose start sits at row r's depth (drawn
within slice r mod 11 of [0, 1], ``row_depth``), so row r asks the same question at the same depth
at every length. As in HELMET, two worked examples (other questions of the source with their
supporting documents and answers) come before the documents and count in the budget; their
paragraphs are never negatives.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

from longbench100.fitting.fit import BuildContext, minimum_tokens
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import coverage_spans
from longbench100.sources.records import Item
from longbench100.text.answers import normalize_answer

from .base import Candidate, Sample, number_blocks
from .haystack import fit_units, nearest_boundary, row_depth
from .negatives import PASSAGE_OVERHEAD, NegativesTask, mean_tokens, passage_body, passage_piece

MAX_ANSWER_WORDS = (
    5  # substring match suits short answers; rag-mini-bioasq's "answer" is mostly a whole sentence
)
YES_NO = {"yes", "no"}  # a bare yes/no is guessed half the time under substring match


def short_answer(answer: str) -> bool:
    """Whether ``answer`` is short enough for substring exact match: one line, a few words, not a bare yes/no."""
    words = normalize_answer(answer).split()
    return (
        "\n" not in answer.strip()
        and 0 < len(words) <= MAX_ANSWER_WORDS
        and " ".join(words) not in YES_NO
    )


def shown_order(negatives: list[Piece], rng: random.Random) -> Callable[[int], list[Piece]]:
    """The first ``count`` negatives (the best ``count`` by score) in a seeded random order: each
    negative draws its place key once, so a negative keeps its order against the others at every
    count, and the order says nothing about the scores."""
    keys = [rng.random() for _ in negatives]
    return lambda count: [negatives[index] for index in sorted(range(count), key=keys.__getitem__)]


def with_gold_at(negatives: list[Piece], gold: list[Piece], depth: float) -> list[Piece]:
    """``negatives`` in order with the ``gold`` block inserted at the passage boundary nearest to ``depth`` of their tokens."""
    ends = list(itertools.accumulate(piece.tokens for piece in negatives))
    at = nearest_boundary(ends, depth * (ends[-1] if ends else 0))
    return negatives[:at] + gold + negatives[at:]


def measured_depth(spans: dict) -> float:
    """Where the first gold passage starts, as a share (0-1) of the context's characters."""
    start, end = spans["context"]
    return round((spans["gold"][0][0] - start) / max(1, end - start), 4)


class RagHard(NegativesTask):
    """Ground truth: short-answer questions of hotpotqa, musique and rag-mini-bioasq; negatives: the same source."""

    name = "rag_hard"

    def accepts(self, item: Item) -> bool:
        """Questions with a short answer and at least one gold passage."""
        return (
            item.kind == "qa"
            and bool(item.question)
            and bool(item.doc_ids)
            and bool(item.answers)
            and short_answer(item.answers[0])
        )

    def variables(self, item: Item) -> dict:
        """The question and the worked demonstrations shown before the documents."""
        return {
            "question": item.question,
            "demos": [self._demo(other) for other in self.demonstrations(item)],
        }

    def _demo(self, item: Item) -> dict:
        """One worked example as the template shows it: its supporting documents, question and answer."""
        documents = [
            {"title": document.title, "text": passage_body(document)}
            for document in self.gold_documents(item)
        ]
        return {"documents": documents, "question": item.question, "answer": item.answers[0]}

    def gold_pieces(self, item: Item) -> list[Piece]:
        """The item's gold passages, in the source's order."""
        return [passage_piece("gold", document) for document in self.gold_documents(item)]

    def candidates(self, ctx: BuildContext) -> list[Candidate]:
        """Every accepted item, with the tokens of its prompt without negatives."""
        return [
            Candidate(item, minimum_tokens(ctx, self._render_for(item), self.gold_pieces(item)))
            for item in self.items
        ]

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The gold block at the row's depth among the most negatives (best first) that fit the
        budget, shown in a seeded random order."""
        assert candidate is not None, "the planner hands every item-based task a candidate"
        item = candidate.item
        assert item.question is not None, "accepts() keeps only items with a question"
        gold_pieces = self.gold_pieces(item)
        shown = [piece.document for piece in gold_pieces] + [
            document for demo in self.demonstrations(item) for document in self.gold_documents(demo)
        ]
        negatives = self.pool.negatives(
            item.source,
            item.question,
            shown,
            ctx.negatives,
            derive_rng(ctx.seed, self.name, "negatives", item.id),
            tuple(self.answers(item)),
        )
        units = [passage_piece("distractor", negative.document) for negative in negatives]
        in_shown_order = shown_order(units, derive_rng(ctx.seed, self.name, "order", item.id))
        target = row_depth(ctx.seed, self.name, row)
        render = self._render_for(item)

        def arrange(count: int) -> list[Piece]:
            return with_gold_at(in_shown_order(count), gold_pieces, target)

        fitted = fit_units(
            ctx,
            lambda count: render(arrange(count)),
            len(units),
            mean_tokens(units) + PASSAGE_OVERHEAD,
            arrange,
        )
        if fitted is None:
            return None
        prompt, count = fitted
        pieces = prompt.pieces
        spans = coverage_spans(
            prompt.prompt,
            [piece.text for piece in pieces],
            [piece.role == "gold" for piece in pieces],
        )
        _, gold_numbers = number_blocks(pieces)
        gold = {
            "sources": [item.source],
            "item_ids": [item.id],
            "demonstration_ids": [demo.id for demo in self.demonstrations(item)],
            "doc_ids": [piece.document.id for piece in gold_pieces],
            "passages": gold_numbers,
            "negatives": ctx.negatives,
            "negative_scores": [
                {"id": negative.document.id, "bm25": negative.bm25}
                for negative in negatives[:count]
            ],
            "target_depth": target,
            "depth": measured_depth(spans),
            "spans": spans,
        }
        return Sample(prompt, self.answers(item), item.question, gold)
