"""rerank: HELMET's passage re-ranking, on rag-mini-bioasq.

A question with its relevant passages (grade 1) and non-relevant ones from the same corpus (grade 0;
BM25's best matches for the question by default, ``--negatives random`` for random ones): as many
passages as the budget holds, relevant and non-relevant taken alternately while relevant ones last
(the most balanced labels the data allows), shown in a random order under random numeric ids. Each
item gives three rows with different orders and ids (row r: item r // 3, permutation r % 3); the
passages chosen, their order and ids depend on the row, never on the length, so row r at a longer
length shows the same passages and more.

As HELMET's re-ranking prompt, two worked examples come first: other questions of the source, each
with its relevant passages and its best BM25 negatives (``DEMO_PASSAGES`` in all, in a shuffled order
under their own ids) and the ideal ranking; fixed per question, counted in the budget, and sharing no
passage with the question's own passages or negatives. At lengths where they would take more than a
quarter of the budget (HELMET starts re-ranking at 8k), no worked example is shown.
"""

from __future__ import annotations

import random

from ..generate.fitting import BuildContext
from ..generate.pieces import Piece
from ..generate.rng import derive_rng
from ..generate.spans import coverage_spans
from ..records import Document, Item
from .base import Candidate, Sample
from .haystack import fit_units
from .negatives import PASSAGE_OVERHEAD, NegativesTask, mean_tokens, passage_body, passage_piece

DEMO_PASSAGES = 10  # passages in each worked example (HELMET's re-ranking demonstrations list ten, k10)
DEMO_SHARE = 0.25  # the most of a budget the worked examples may take; below that (short lengths) none are shown
PERMUTATIONS = 3
ID_RANGE = range(100_000, 1_000_000)  # six-digit passage ids
MIN_PASSAGES = 2
MIN_RELEVANT = 2  # a third of the bioasq questions have a single relevant passage: nothing to rank among the relevant


def alternate(relevant: list[Piece], others: list[Piece]) -> list[Piece]:
    """Relevant and non-relevant passages taken in turn, then the rest of the longer list."""
    merged: list[Piece] = []
    for index in range(max(len(relevant), len(others))):
        merged.extend(group[index] for group in (relevant, others) if index < len(group))
    return merged


class Rerank(NegativesTask):
    """Ground truth: rag-mini-bioasq questions with their relevant passage ids; negatives: the same corpus."""

    name = "rerank"
    def accepts(self, item: Item) -> bool:
        """Questions with at least ``MIN_RELEVANT`` relevant passages (distinct texts)."""
        return item.kind == "qa" and bool(item.question) and len(self.gold_documents(item)) >= MIN_RELEVANT

    def worked_example(self, item: Item, negatives: str, seed: int, taken: list[Document]) -> dict:
        """One demonstration as the template shows it: passages (id, title, text) in a shuffled order, the
        question, and the ideal ranking (relevant passages first); none of its negatives is in ``taken``
        (the asked question's relevant passages, an earlier example's passages)."""
        rng = derive_rng(seed, self.name, "demonstration", item.id)
        relevant = self.gold_documents(item)[:DEMO_PASSAGES // 2]
        excluded = self.gold_documents(item) + taken
        others = [negative.document for negative in self.pool.negatives(item.source, item.question, excluded, negatives, rng)]
        documents = relevant + others[:DEMO_PASSAGES - len(relevant)]
        ids = [str(number) for number in rng.sample(ID_RANGE, len(documents))]
        ranking = " > ".join(f"[{passage_id}]" for passage_id in ids)
        shown = list(zip(ids, documents))
        rng.shuffle(shown)
        passages = [{"id": passage_id, "title": document.title, "text": passage_body(document)} for passage_id, document in shown]
        return {"question": item.question, "passages": passages, "ranking": ranking, "documents": documents}

    def demo_tokens(self, ctx: BuildContext, item: Item, demos: list[dict]) -> int:
        """Tokens the worked examples add to the prompt."""
        bare = {"question": item.question, "passages": []}
        return ctx.count_prompt(self.templates.render(self.name, {**bare, "demos": demos})) - ctx.count_prompt(
            self.templates.render(self.name, {**bare, "demos": []}))

    def candidates(self, ctx: BuildContext) -> None:
        """``None``: rows choose their own items (row r asks about item r // 3), so the three permutations share one."""
        return None

    def item_for(self, seed: int, row: int) -> Item:
        """Row ``row``'s item: a seeded order of the items, each used for three consecutive rows."""
        order = list(range(len(self.items)))
        derive_rng(seed, self.name, "items").shuffle(order)
        return self.items[order[(row // PERMUTATIONS) % len(order)]]

    def build(self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random) -> Sample | None:
        """The most passages that fit, in the row's order under the row's ids; ``None`` when fewer than two fit."""
        if not self.items:
            return None
        item = self.item_for(ctx.seed, row)
        item_rng = derive_rng(ctx.seed, self.name, "item", item.id)
        relevant = self.gold_documents(item)
        item_rng.shuffle(relevant)
        demos: list[dict] = []
        for demo in self.demonstrations(item):
            demos.append(self.worked_example(demo, ctx.negatives, ctx.seed, relevant + [d for shown in demos for d in shown["documents"]]))
        if self.demo_tokens(ctx, item, demos) > ctx.budget * DEMO_SHARE:  # short lengths: the examples would crowd out the task
            demos = []
        shown = relevant + [document for demo in demos for document in demo["documents"]]
        negatives = self.pool.negatives(item.source, item.question, shown, ctx.negatives, item_rng)
        scores = {negative.document.id: negative.bm25 for negative in negatives}
        units = alternate([passage_piece("gold", document) for document in relevant],
                          [passage_piece("distractor", negative.document) for negative in negatives])
        row_rng = derive_rng(ctx.seed, self.name, "row", row)
        ids = [str(number) for number in row_rng.sample(ID_RANGE, len(units))]
        for piece, passage_id in zip(units, ids):
            piece.fields["id"] = passage_id
        order_keys = {passage_id: row_rng.random() for passage_id in ids}

        def arrange(count: int) -> list[Piece]:
            return sorted(units[:count], key=lambda piece: order_keys[piece.fields["id"]])

        def render(count: int) -> str:
            passages = [{"id": piece.fields["id"], "title": piece.doc.title, "text": piece.text} for piece in arrange(count)]
            return self.templates.render(self.name, {"question": item.question, "passages": passages, "demos": demos})

        fitted = fit_units(ctx, render, len(units), mean_tokens(units) + PASSAGE_OVERHEAD, arrange)
        if fitted is None or len(fitted[0].pieces) < MIN_PASSAGES:
            return None
        prompt, count = fitted
        pieces = prompt.pieces
        relevance = {piece.fields["id"]: int(piece.role == "gold") for piece in pieces}
        gold = {
            "sources": [item.source],
            "item_ids": [item.id],
            "doc_ids": [piece.doc.id for piece in pieces if piece.role == "gold"],
            "relevance": relevance,
            "permutation": row % PERMUTATIONS,
            "demonstration_ids": [demo.id for demo in self.demonstrations(item)] if demos else [],
            "negatives": ctx.negatives,
            "negative_scores": [{"id": piece.doc.id, "bm25": scores[piece.doc.id]} for piece in pieces if piece.role != "gold"],
            "spans": coverage_spans(prompt.prompt, [piece.text for piece in pieces], [True] * len(pieces)),
        }
        ideal = sorted(relevance, key=lambda passage_id: -relevance[passage_id])  # stable: ties keep prompt order
        return Sample(prompt, ideal, item.question, gold)
