"""rerank: HELMET's passage re-ranking.

Two kinds of data. HELMET's own (source ``helmet_msmarco``): a TREC Deep Learning query with its
candidate passages, each judged 0-3; the prompt shows a grade-balanced share of them (one of each grade
in turn, highest grade first, each grade's candidates in a seeded order), as many as the budget holds,
then BM25's best other passages of the source as grade 0 if the candidates run out. Binary data (the
offline stand-in, rag-mini-bioasq): a question's relevant passages are grade 1 and BM25's best matches
for the question among the other passages of the corpus grade 0 (``--negatives random`` for random
ones), taken alternately while relevant ones last (the most balanced labels the data allows). The
passages are shown in a random order under random numeric ids. Each item gives three rows with
different orders and ids (row r: item r // 3, permutation r % 3); the passages chosen, their order and
ids depend on the row, never on the length, so row r at a longer length shows the same passages and
more. ``gold.relevance`` holds each shown passage's grade; NDCG@10 is graded.

As HELMET's re-ranking prompt, two worked examples come first: other questions of the source, each
with ``DEMO_PASSAGES`` of its passages chosen the same way (in a shuffled order under their own ids) and
the ideal ranking (highest grade first); fixed per question, counted in the budget, and sharing no
passage with the question's own passages or negatives. At lengths where they would take more than a
quarter of the budget (HELMET starts re-ranking at 8k), no worked example is shown.
"""

from __future__ import annotations

import random

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import coverage_spans
from longbench100.sources.records import Document, Item

from .base import Candidate, Sample
from .haystack import fit_units
from .negatives import PASSAGE_OVERHEAD, NegativesTask, mean_tokens, passage_piece

DEMO_PASSAGES = (
    10  # passages in each worked example (HELMET's re-ranking demonstrations list ten, k10)
)
DEMO_SHARE = 0.25  # the most of a budget the worked examples may take; below that (short lengths) none are shown
PERMUTATIONS = 3
ID_RANGE = range(100_000, 1_000_000)  # six-digit passage ids
MIN_PASSAGES = 2
MIN_RELEVANT = 2  # a third of the bioasq questions have a single relevant passage: nothing to rank among the relevant


def round_robin(groups: list[list[Piece]]) -> list[Piece]:
    """One piece of each group in turn (a group that runs out is passed over), so any prefix is as balanced as the groups allow."""
    merged: list[Piece] = []
    for index in range(max((len(group) for group in groups), default=0)):
        merged.extend(group[index] for group in groups if index < len(group))
    return merged


def graded_piece(document: Document, grade: int, bm25: float | None = None) -> Piece:
    """A passage with its relevance grade (role ``gold`` when the grade is above 0) and, for a non-relevant one,
    its BM25 score for the question."""
    piece = passage_piece("gold" if grade > 0 else "distractor", document)
    piece.fields["grade"] = grade
    if bm25 is not None:
        piece.fields["bm25"] = bm25
    return piece


class Rerank(NegativesTask):
    """Ground truth: HELMET's graded queries, or binary questions with their relevant passages; negatives: the same source."""

    name = "rerank"
    chooses_own_items = True

    def accepts(self, item: Item) -> bool:
        """Graded items with a relevant candidate and ``MIN_PASSAGES`` candidates; binary questions with at least
        ``MIN_RELEVANT`` relevant passages (distinct texts)."""
        if item.kind == "ranking":
            graded = self.judged(item)
            return (
                bool(item.question)
                and len(graded) >= MIN_PASSAGES
                and any(grade for _, grade in graded)
            )
        return (
            item.kind == "qa"
            and bool(item.question)
            and len(self.gold_documents(item)) >= MIN_RELEVANT
        )

    def judged(self, item: Item) -> list[tuple[Document, int]]:
        """A graded item's candidates with their grades, each text once (a near-copy keeps the higher grade)."""
        key = self.corpus.near_duplicates.key
        best: dict[str, tuple[Document, int]] = {}
        for doc_id, grade in zip(item.doc_ids, item.grades):
            document = self.corpus.documents[doc_id]
            kept = best.get(key(document))
            if kept is None or grade > kept[1]:
                best[key(document)] = (document if kept is None else kept[0], grade)
        return list(best.values())

    def balanced(
        self,
        item: Item,
        rng: random.Random,
        excluded: list[Document],
        negatives: str,
        limit: int | None = None,
    ) -> list[Piece]:
        """The item's passages in the order they are shown as the budget grows: one of each grade in turn (highest
        first; each grade in ``rng``'s order), the grade-0 ones followed by the source's other passages (BM25's best
        for the question, or random ones) that are not in ``excluded``; at most ``limit``."""
        shown_elsewhere = self._keys(excluded)
        if item.kind == "ranking":
            by_grade: dict[int, list[Document]] = {}
            for document, grade in self.judged(item):
                if self.corpus.near_duplicates.key(document) not in shown_elsewhere:
                    by_grade.setdefault(grade, []).append(document)
            for documents in by_grade.values():
                rng.shuffle(documents)
        else:
            relevant = self._unshown(self.gold_documents(item), shown_elsewhere)
            rng.shuffle(relevant)
            by_grade = {1: relevant, 0: []}
        relevant = [document for grade in by_grade if grade for document in by_grade[grade]]
        ranked = self.pool.negatives(
            item.source, item.question or "", relevant + excluded, negatives, rng
        )  # judged zeros among them
        scores = {negative.document.id: negative.bm25 for negative in ranked}
        judged_zeros = [
            document for document in by_grade.get(0, []) if document.id in scores
        ]  # not near-copies of what is shown
        judged_ids = {document.id for document in judged_zeros}
        zeros = judged_zeros + [
            negative.document for negative in ranked if negative.document.id not in judged_ids
        ]
        groups = [
            [graded_piece(document, grade) for document in by_grade[grade]]
            for grade in sorted(by_grade, reverse=True)
            if grade
        ]
        groups.append(
            [graded_piece(document, 0, scores[document.id]) for document in zeros[:limit]]
        )
        pieces = round_robin(groups)
        return pieces[:limit] if limit is not None else pieces

    def _keys(self, documents: list[Document]) -> set[str]:
        """The near-duplicate keys of ``documents`` (what "the same passage" compares)."""
        return {self.corpus.near_duplicates.key(document) for document in documents}

    def _unshown(self, documents: list[Document], shown: set[str]) -> list[Document]:
        """``documents`` without those whose near-duplicate key is in ``shown``, in order."""
        return [
            document
            for document in documents
            if self.corpus.near_duplicates.key(document) not in shown
        ]

    def worked_example(self, item: Item, negatives: str, seed: int, taken: list[Document]) -> dict:
        """One demonstration as the template shows it: ``DEMO_PASSAGES`` passages (id, title, text) in a shuffled
        order, the question, and the ideal ranking (highest grade first); none of its passages is in ``taken``
        (the asked question's own passages, an earlier example's passages)."""
        rng = derive_rng(seed, self.name, "demonstration", item.id)
        if item.kind == "ranking":
            pieces = self.balanced(item, rng, taken, negatives, DEMO_PASSAGES)
        else:  # binary: up to half relevant, then BM25's best negatives
            relevant = self._unshown(self.gold_documents(item), self._keys(taken))[
                : DEMO_PASSAGES // 2
            ]
            others = self.pool.negatives(
                item.source, item.question or "", self.gold_documents(item) + taken, negatives, rng
            )
            pieces = [graded_piece(document, 1) for document in relevant]
            pieces += [
                graded_piece(negative.document, 0, negative.bm25)
                for negative in others[: DEMO_PASSAGES - len(relevant)]
            ]
        ids = [str(number) for number in rng.sample(ID_RANGE, len(pieces))]
        best_first = sorted(
            zip(ids, pieces), key=lambda pair: -pair[1].fields["grade"]
        )  # stable: ties keep the listed order
        ranking = " > ".join(f"[{passage_id}]" for passage_id, _ in best_first)
        shown = list(zip(ids, pieces))
        rng.shuffle(shown)
        passages = [
            {"id": passage_id, "title": piece.document.title, "text": piece.text}
            for passage_id, piece in shown
        ]
        return {
            "question": item.question,
            "passages": passages,
            "ranking": ranking,
            "documents": [piece.document for piece in pieces],
        }

    def demo_tokens(self, ctx: BuildContext, item: Item, demos: list[dict]) -> int:
        """Tokens the worked examples add to the prompt."""
        bare: dict[str, object] = {"question": item.question, "passages": []}
        return ctx.count_prompt(
            self.templates.render(self.name, {**bare, "demos": demos})
        ) - ctx.count_prompt(self.templates.render(self.name, {**bare, "demos": []}))

    def candidates(self, ctx: BuildContext) -> list[Candidate] | None:
        """``None``: rows choose their own items (row r asks about item r // 3), so the three permutations share one."""
        return None

    def item_for(self, seed: int, row: int) -> Item:
        """Row ``row``'s item: a seeded order of the items, each used for three consecutive rows."""
        order = list(range(len(self.items)))
        derive_rng(seed, self.name, "items").shuffle(order)
        return self.items[order[(row // PERMUTATIONS) % len(order)]]

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The most passages that fit, in the row's order under the row's ids; ``None`` when fewer than two fit."""
        if not self.items:
            return None
        item = self.item_for(ctx.seed, row)
        item_rng = derive_rng(ctx.seed, self.name, "item", item.id)
        own = (
            [document for document, _ in self.judged(item)]
            if item.kind == "ranking"
            else self.gold_documents(item)
        )
        demos: list[dict] = []
        for demo in self.demonstrations(item):
            demos.append(
                self.worked_example(
                    demo,
                    ctx.negatives,
                    ctx.seed,
                    own + [d for shown in demos for d in shown["documents"]],
                )
            )
        # the examples' passages are never the question's, whether or not the length shows the examples: the
        # question's passages (and their ids and order) then depend on the row alone, so rows pair across lengths
        units = self.balanced(
            item,
            item_rng,
            [document for demo in demos for document in demo["documents"]],
            ctx.negatives,
        )
        if (
            self.demo_tokens(ctx, item, demos) > ctx.budget * DEMO_SHARE
        ):  # short lengths: the examples would crowd out the task
            demos = []
        row_rng = derive_rng(ctx.seed, self.name, "row", row)
        ids = [str(number) for number in row_rng.sample(ID_RANGE, len(units))]
        for piece, passage_id in zip(units, ids):
            piece.fields["id"] = passage_id
        order_keys = {passage_id: row_rng.random() for passage_id in ids}

        def arrange(count: int) -> list[Piece]:
            return sorted(units[:count], key=lambda piece: order_keys[piece.fields["id"]])

        def render(count: int) -> str:
            passages = [
                {"id": piece.fields["id"], "title": piece.document.title, "text": piece.text}
                for piece in arrange(count)
            ]
            return self.templates.render(
                self.name, {"question": item.question, "passages": passages, "demos": demos}
            )

        fitted = fit_units(ctx, render, len(units), mean_tokens(units) + PASSAGE_OVERHEAD, arrange)
        if fitted is None or len(fitted[0].pieces) < MIN_PASSAGES:
            return None
        prompt, count = fitted
        pieces = prompt.pieces
        relevance = {piece.fields["id"]: piece.fields["grade"] for piece in pieces}
        gold = {
            "sources": [item.source],
            "item_ids": [item.id],
            "doc_ids": [piece.document.id for piece in pieces if piece.role == "gold"],
            "relevance": relevance,
            "permutation": row % PERMUTATIONS,
            "demonstration_ids": [demo.id for demo in self.demonstrations(item)] if demos else [],
            "negatives": ctx.negatives,
            "negative_scores": [
                {"id": piece.document.id, "bm25": piece.fields["bm25"]}
                for piece in pieces
                if piece.role != "gold"
            ],
            "spans": coverage_spans(
                prompt.prompt, [piece.text for piece in pieces], [True] * len(pieces)
            ),
        }
        ideal = sorted(
            relevance, key=lambda passage_id: -relevance[passage_id]
        )  # stable: ties keep prompt order
        return Sample(prompt, ideal, item.question, gold)
