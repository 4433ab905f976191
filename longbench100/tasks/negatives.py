"""Negative passages for the HELMET retrieval tasks (rag_hard, rerank): documents of the gold's own
source, ranked by BM25 on the question (hard negatives) or in a seeded random order (easy ones).

Both kinds exclude the gold documents, their near-duplicates, near-copies of a negative already
taken (so no text appears twice in a prompt) and, for questions, any document that contains a gold
answer. Every negative carries its BM25 score for the
question either way, so the two kinds can be compared (docs/benchmarks.md).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from longbench100.core.errors import UserError
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document, Item
from longbench100.text.answers import normalize_answer

from .base import GoldAmongDistractors

if TYPE_CHECKING:
    from longbench100.sources.bm25 import SourceIndex

NEGATIVE_KINDS = ("bm25", "random")
DEMONSTRATIONS = (
    2  # HELMET's RAG and re-ranking prompts show two worked examples (shots: 2 in its configs)
)
PASSAGE_OVERHEAD = (
    12  # tokens of a passage heading and separators: the fitting search's first guess only
)


@dataclass(frozen=True)
class Negative:
    """A placeable non-gold document and its BM25 score for the question."""

    document: Document
    bm25: float


class NegativePool:
    """The BM25 index of each source a task draws from (built or read from the cache once, at construction)."""

    def __init__(self, corpus: Corpus, sources: list[str]) -> None:
        from longbench100.sources.bm25 import (
            source_index,  # bm25s and SciPy load only for the tasks that rank passages
        )

        self.corpus = corpus
        self.indexes: dict[str, SourceIndex] = {
            name: source_index(corpus.entries[name], corpus.sources[name]) for name in sources
        }

    def negatives(
        self,
        source: str,
        query: str,
        gold: list[Document],
        kind: str,
        rng: random.Random,
        answers: tuple[str, ...] = (),
    ) -> list[Negative]:
        """Every usable negative of ``source`` in the order they are to be placed.

        ``kind`` ``bm25``: best BM25 match for ``query`` first; ``random``: shuffled by ``rng``. A
        document that contains one of ``answers`` (both normalised as the QA metrics normalise) is
        never a negative: it may well answer the question.
        """
        if kind not in NEGATIVE_KINDS:
            raise UserError(f"--negatives {kind!r}: choose from {', '.join(NEGATIVE_KINDS)}")
        ranked = self.indexes[source].ranked(query)
        if kind == "random":
            rng.shuffle(ranked)
        key = self.corpus.near_duplicates.key
        taken = {key(document) for document in gold}
        wanted = [f" {normalize_answer(answer)} " for answer in answers if normalize_answer(answer)]
        chosen: list[Negative] = []
        for doc_id, score in ranked:
            document = self.corpus.documents[doc_id]
            if (
                key(document) in taken
                or not document.text.strip()
                or contains_answer(document.text, wanted)
            ):
                continue
            taken.add(key(document))
            chosen.append(Negative(document, score))
        return chosen


def contains_answer(text: str, normalised_answers: list[str]) -> bool:
    """Whether the normalised ``text`` holds one of ``normalised_answers`` (each padded with spaces: whole words)."""
    if not normalised_answers:
        return False
    padded = f" {normalize_answer(text)} "
    return any(answer in padded for answer in normalised_answers)


def passage_body(document: Document) -> str:
    """The document's text without its title line (titled passages carry the title as their first line)."""
    if document.title and document.text.startswith(document.title):
        body = document.text[len(document.title) :].strip()
        return body or document.text
    return document.text


def passage_piece(role: str, document: Document) -> Piece:
    """A whole passage shown as its body (the template shows the title separately)."""
    return Piece(role, passage_body(document), document.tokens, document)


def mean_tokens(pieces: list[Piece], sample: int = 200) -> float:
    """The mean token count of the first ``sample`` pieces (a guess for the fitting search)."""
    head = pieces[:sample]
    return sum(piece.tokens for piece in head) / max(1, len(head))


class NegativesTask(GoldAmongDistractors):
    """A task whose gold passages sit among negatives from their own source (``--negatives``): its real
    sources are also where the negatives come from, through one :class:`NegativePool`."""

    required_roles = ("real",)
    uses_negatives = True

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self.pool = NegativePool(corpus, corpus.sources_with_role(self.name, "real"))
        self._demonstrations: dict[
            str, list[Item]
        ] = {}  # item id -> its worked examples, drawn once

    def demonstrations(self, item: Item) -> list[Item]:
        """HELMET's two worked examples: other questions of the item's source, drawn from a seed that the item
        alone fixes (the same at every length), none sharing a passage with the item. Drawn once per item."""
        if item.id not in self._demonstrations:
            own = self._passage_keys[item.id]
            others = [
                other
                for other in self.items
                if other.source == item.source
                and other.id != item.id
                and not own & self._passage_keys[other.id]
            ]
            rng = derive_rng(0, self.name, "demonstrations", item.id)
            self._demonstrations[item.id] = rng.sample(others, min(DEMONSTRATIONS, len(others)))
        return self._demonstrations[item.id]

    @cached_property
    def _passage_keys(self) -> dict[str, frozenset[str]]:
        """Each item's gold passages as near-duplicate keys (what "sharing a passage" compares)."""
        key = self.corpus.near_duplicates.key
        return {
            item.id: frozenset(key(document) for document in self.gold_documents(item))
            for item in self.items
        }
