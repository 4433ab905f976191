"""passage_retrieval: given the reference summary of one passage, name the passage it summarises.

Distractors come from the gold document's own source when it has enough text to fill the budget (a
government report among news articles is found by its genre alone). Two rules keep one passage the
answer and its size no clue:

- no padding passage fits the summary nearly as well as the gold: a document of the gold's own
  source whose TF-IDF cosine similarity to the summary (words and two-word runs, fitted on that
  source) reaches :data:`AMBIGUITY_SHARE` of the gold's is never drawn (a query-focused QMSum
  summary of one meeting can fit another meeting of the same design project), and a prompt in which
  a passage still reaches that share (fitted on the prompt's passages) is drawn again;
- the gold takes at most half of the room for passages, so the padding beside it (whole documents,
  then one cut-off filler, which is never the gold) holds at least as many tokens, and every prompt
  holds at least two passages. A gold filling most of the prompt beside a short cut filler made the
  longest passage the answer in 70% of the 8k rows (chance 35%); the gold is now the longest about
  as often as any passage is (docs/suites.md).

Both decisions are kept in the cache (``tasks/ambiguity_cache.py``): a warm run fits no TF-IDF. The
pool decisions of the rows a run will build are worked out in :meth:`PassageRetrieval.prepare`,
before the worker processes fork, so no two workers fit the same pool's TF-IDF. Both are worked out
with scikit-learn's TF-IDF figures computed without it (``text/tfidf.py``), which decide as
scikit-learn's own do wherever no similarity lies within a hair of the line; the few that do are
left to scikit-learn, which is imported only then. The builder keeps one term table for both: a
text's terms are found once in the run, though its pool's documents come back as the passages of
prompt after prompt (the workers inherit those the parent found while fitting the pools).
"""

from __future__ import annotations

import random
from functools import cached_property, partial
from typing import TYPE_CHECKING, Callable, Sequence

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document, Item
from longbench100.text.tfidf import TermTable, TfidfIndex, clear_of
from longbench100.text.tokenization import Tokenizer

from .ambiguity_cache import cached_ambiguity, cached_exclusions, pool_key
from .base import Candidate, GoldAmongDistractors, Sample

if TYPE_CHECKING:
    import numpy as np

AMBIGUITY_SHARE = 0.8
"""A padding document whose similarity to the summary reaches this share of the gold's is left
out."""

NGRAMS = 2
"""The similarity compares words and two-word runs (TF-IDF), as ROUGE-1 and ROUGE-2 together
would."""

DRAWS = 8
"""Padding draws a sample may take before its row is given up at that length."""


RULE = (AMBIGUITY_SHARE, NGRAMS)
"""The rule's constants, part of every cached decision's key."""


class PoolMatcher:
    """scikit-learn's TF-IDF vectors of one padding pool (fitted on it once), to compare a summary
    with each document where the plain figures lie too close to the rule's line to decide."""

    def __init__(self, documents: list[Document]) -> None:
        from ..baselines.lexical import tfidf_vectorizer  # scikit-learn, only when comparing

        self.vectorizer = tfidf_vectorizer(NGRAMS)
        self.matrix = self.vectorizer.fit_transform([document.text for document in documents])

    def similarities(self, summary: str, texts: list[str]) -> np.ndarray:
        """Cosine similarity of ``summary`` to each of ``texts``, then to each pool document."""
        import numpy as np

        from ..baselines.lexical import cosine_similarities  # scikit-learn, only when comparing

        query = self.vectorizer.transform([summary])
        return np.concatenate(
            [
                cosine_similarities(query, self.vectorizer.transform(texts))[0],
                cosine_similarities(query, self.matrix)[0],
            ]
        )


class PassageRetrieval(GoldAmongDistractors):
    """Ground truth: summary items of one document (sources 9-15); distractors: documents of sources
    9-15."""

    name = "passage_retrieval"

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self._terms = TermTable(NGRAMS)  # the terms of every text compared, each found once
        self._indexes: dict[str, TfidfIndex] = {}  # by source, fitted when first needed
        self._matchers: dict[str, PoolMatcher] = {}  # by source, for the close calls only
        self._excluded: dict[str, frozenset[str]] = {}  # by item id, once worked out or read

    @cached_property
    def pool_keys(self) -> dict[str, str]:
        """Each padding pool's content digest, the key of its cached decisions."""
        return {name: pool_key(self.corpus, name, pool) for name, pool in self.source_pools.items()}

    def prepare(
        self, tokenizer: Tokenizer, prompt_tokens: int, drawn: Sequence[tuple[Item, int]]
    ) -> None:
        """The padding pools the ``drawn`` items take, each worked out (or read from the cache)
        here, before the worker processes fork, so each pool's TF-IDF is fitted at most once in the
        run and the workers inherit every decision; the pools' TF-IDF is then let go."""
        for item, budget in drawn:
            self.distractor_pool(item, budget)
        self._indexes.clear()
        self._matchers.clear()

    def accepts(self, item: Item) -> bool:
        """Reference summaries of exactly one document."""
        return item.kind == "summary" and len(item.doc_ids) == 1

    def variables(self, item: Item) -> dict:
        """The summary to match."""
        return {"summary": item.summary}

    def candidates(self, ctx: BuildContext) -> list[Candidate]:
        """As the base builder's, each needing as much room again as its gold passage takes, for the
        padding."""
        candidates = super().candidates(ctx)
        assert candidates is not None, "the base builder lists a candidate for every accepted item"
        return [
            Candidate(
                candidate.item,
                candidate.min_tokens
                + sum(doc.tokens for doc in self.gold_documents(candidate.item)),
            )
            for candidate in candidates
        ]

    def distractor_pool(self, item: Item, budget: int) -> list[Document]:
        """The gold's own source's documents when they hold twice the budget, less every one the
        summary fits nearly as well as its gold; else the task's whole noisy pool (a source too small
        to pad a long prompt alone: its documents then come along with the others')."""
        own = self.source_pools.get(item.source, [])
        if sum(document.tokens for document in own) < 2 * budget:
            return self.noisy_pool
        if item.id not in self._excluded:
            gold_text = self.gold_documents(item)[0].text
            self._excluded[item.id] = cached_exclusions(
                self.pool_keys[item.source],
                item,
                gold_text,
                RULE,
                lambda: self._exclusions(item, own, gold_text),
            )
        excluded = self._excluded[item.id]
        return [document for document in own if document.id not in excluded]

    def _exclusions(self, item: Item, own: list[Document], gold_text: str) -> list[str]:
        """The ids of the documents of ``own`` (``item``'s source's pool) that ``item``'s summary
        fits at least :data:`AMBIGUITY_SHARE` as well as ``gold_text`` (TF-IDF fitted on the
        pool)."""
        summary = item.summary
        assert summary is not None, "passage_retrieval's items are summaries"
        if item.source not in self._indexes:
            self._indexes[item.source] = TfidfIndex(
                [document.text for document in own], self._terms
            )
        index = self._indexes[item.source]

        def by_sklearn() -> tuple[float, list[float]]:
            if item.source not in self._matchers:
                self._matchers[item.source] = PoolMatcher(own)
            gold, *padding = self._matchers[item.source].similarities(summary, [gold_text])
            return gold, padding

        reached = _reaching_share(
            index.similarity(summary, gold_text), index.similarities(summary), by_sklearn
        )
        return [document.id for document, reach in zip(own, reached) if reach]

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """As the base builder, with the gold passage number as the answer, drawn again (up to
        :data:`DRAWS` times) while the prompt holds fewer than two passages or a padding passage the
        summary fits nearly as well as the gold (TF-IDF fitted on the prompt's own passages, as the
        lexical baseline fits it); ``None`` if none passes."""
        assert candidate is not None, "the planner hands every item-based task a candidate"
        summary = candidate.item.summary
        assert summary is not None, "passage_retrieval's items are summaries"
        for _ in range(DRAWS):
            sample = super().build(ctx, row, candidate, rng)
            if sample is None:
                return None
            texts = [piece.text for piece in sample.fitted.pieces if piece.is_passage]
            gold = sample.gold["passages"][0] - 1
            if len(texts) >= 2 and not cached_ambiguity(
                summary, texts, gold, RULE, partial(ambiguous, summary, texts, gold, self._terms)
            ):
                sample.answers = [str(sample.gold["passages"][0])]
                sample.question = summary
                return sample
        return None


def ambiguous(summary: str, texts: list[str], gold: int, table: TermTable) -> bool:
    """Whether a passage besides ``texts[gold]`` fits ``summary`` at least :data:`AMBIGUITY_SHARE`
    as well as the gold does (TF-IDF cosine of words and two-word runs, fitted on ``texts``, whose
    terms ``table``, made for :data:`NGRAMS`, finds or recalls)."""

    def gold_and_others(scores: Sequence[float]) -> tuple[float, list[float]]:
        return scores[gold], [score for index, score in enumerate(scores) if index != gold]

    def by_sklearn() -> tuple[float, list[float]]:
        from ..baselines.lexical import query_similarities  # scikit-learn, for close calls only

        return gold_and_others(list(query_similarities(summary, texts, NGRAMS)))

    scores = TfidfIndex(texts, table).similarities(summary)
    return any(_reaching_share(*gold_and_others(scores), by_sklearn))


def _reaching_share(
    gold: float, scores: list[float], by_sklearn: Callable[[], tuple[float, list[float]]]
) -> list[bool]:
    """Which of ``scores`` (similarities to the summary) reach :data:`AMBIGUITY_SHARE` of the
    gold's, ``gold``. These come from the plain figures of ``text/tfidf.py``; where one lies too
    close to the line for them to tell (:func:`~longbench100.text.tfidf.clear_of`),
    ``by_sklearn()``'s (the gold's similarity and the others', by scikit-learn) decide."""
    if not clear_of(AMBIGUITY_SHARE * gold, scores):
        gold, scores = by_sklearn()
    return [not score < AMBIGUITY_SHARE * gold for score in scores]
