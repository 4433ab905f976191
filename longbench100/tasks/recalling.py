"""recalling (ETHIC recalling): list every mention of one entity type anywhere in one long stretch of one document.

What is listed depends on the document's source (its registry entry's ``entities``, :mod:`..annotation.entities`):
the people named in novels and meeting transcripts, the legal references in contracts. The context is the
document's consecutive chunks (:mod:`.one_document`) as one continuous text. The gold is the union of the
annotator's per-chunk lists, checked (:mod:`..annotation.mention_check`): an item must occur in the row's text
as whole words, and a name must be one its document writes as a name (not "This" or "However", which opened a
sentence); compared case-insensitively; scored by F1 over the set (``name_set_f1``). IC by construction counts
the chunks where a gold item occurs.
"""

from __future__ import annotations

from typing import NamedTuple

from longbench100.catalog.entities import ENTITY_TYPES, EntityType
from longbench100.fitting.fit import Fitted
from longbench100.fitting.spans import coverage_spans
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document

from ..annotation.mention_check import MentionIndex, WordCases, chunk_of, item_key, tidy_items
from .base import Sample
from .one_document import Chunk, OneDocumentTask, Window

ANSWER_FIXED = 64  # room for a reply that lists more items than the annotator found
TOKENS_PER_NAME = 12  # a name or reference of a few tokens and "; ", with room to spare


class CheckedMentions(NamedTuple):
    """recalling's gold over some chunks (:meth:`Recalling.checked`)."""

    items: list[str]
    """The items kept, one spelling each, in order of first mention."""
    in_chunks: list[bool]
    """Whether each chunk holds an occurrence of a kept item."""
    tidied: int
    """How many distinct items the annotator listed, once tidied (kept or not)."""


class Recalling(OneDocumentTask):
    """List every mention of the document's entity type."""

    name = "recalling"
    annotation_kind = ENTITY_TYPES["people"].annotation_kind

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self._word_cases: dict[str, WordCases] = {}

    def word_cases(self, document: Document) -> WordCases:
        """How ``document`` writes each word (counted once per process)."""
        if document.id not in self._word_cases:
            self._word_cases[document.id] = WordCases(document.text)
        return self._word_cases[document.id]

    def checked(self, chunks: list[Chunk], document: Document) -> CheckedMentions:
        """The gold: each item the annotator listed for ``chunks``, tidied, that occurs in a chunk that listed it and,
        for names, that the document writes as a name (:mod:`..annotation.mention_check`); one spelling per item
        (by its words, case aside), in order of first mention; with the chunks where a kept item occurs."""
        annotations = self.need_annotations()
        kind = self.kind_for(document)
        index = MentionIndex(document.text[chunks[0].start : chunks[-1].end])
        starts = [chunk.start - chunks[0].start for chunk in chunks]
        names = self.entity(document).proper_names
        cases = self.word_cases(document) if names else None
        found: dict[tuple[str, ...], str] = {}
        tidied: set[tuple[str, ...]] = set()
        places: dict[
            str, set[int]
        ] = {}  # the chunks where each tidied spelling occurs, if it passes the check
        for number, chunk in enumerate(chunks):
            for item in (
                item
                for listed in annotations.mentions(kind, chunk.text)
                for item in tidy_items(listed, names)
            ):
                key = item_key(item)
                if not key or key in found:
                    continue
                tidied.add(key)
                if item not in places:
                    named = cases is None or cases.written_as_a_name(item)
                    places[item] = (
                        {chunk_of(start, starts) for start in index.occurrences(item, names)}
                        if named
                        else set()
                    )
                if number in places[item]:
                    found[key] = item
        occupied = set().union(*(places[item] for item in found.values()))
        return CheckedMentions(
            list(found.values()), [number in occupied for number in range(len(chunks))], len(tidied)
        )

    def entity(self, document: Document) -> EntityType:
        """What ``document``'s rows ask for: its source's entity type."""
        return ENTITY_TYPES[self.corpus.entries[document.source].entities]

    def kind_for(self, document: Document) -> str:
        """The annotation that lists the document's entity type per chunk."""
        return self.entity(document).annotation_kind

    def listed(self, chunks: list[Chunk], document: Document) -> list[str]:
        """What the annotator listed for ``chunks`` of the document's entity type, each once (case-insensitively), in
        order of first mention."""
        annotations = self.need_annotations()
        kind = self.kind_for(document)
        found: dict[str, str] = {}
        for chunk in chunks:
            for name in annotations.mentions(kind, chunk.text):
                found.setdefault(name.lower(), name)
        return list(found.values())

    def answer_tokens(self, chunks: list[Chunk], document: Document) -> int:
        """A few tokens per item listed (the checked gold, tidied, takes no more characters in all)."""
        return ANSWER_FIXED + TOKENS_PER_NAME * len(self.listed(chunks, document))

    def render_chunks(self, chunks: list[Chunk], document: Document, seed: int) -> str:
        """The chunks as one continuous text (the document's own text between the first and last chunk)."""
        context = document.text[chunks[0].start : chunks[-1].end].strip() if chunks else ""
        return self.templates.render(
            self.name, {"context": context, "entity": self.entity(document)}
        )

    def sample(
        self, prompt: str, tokens: int, window: Window, chunks: list[Chunk], seed: int
    ) -> Sample | None:
        """The items as the answer; the chunks that mention one as the gold spans. ``None`` when the chunks mention
        nothing of the type (a contract that cites nothing): a list to recall must not be empty."""
        document = window.document
        entity = self.entity(document)
        checked = self.checked(chunks, document)
        if not checked.items:
            return None
        gold = {
            **self.base_gold(window, chunks),
            "entities": entity.key,
            "mentions": checked.items,
            "dropped_mentions": checked.tidied - len(checked.items),
            "chunks": len(chunks),
            "answer_tokens": self.answer_tokens(chunks, document),
            "spans": coverage_spans(prompt, [chunk.text for chunk in chunks], checked.in_chunks),
        }
        question = f"List {entity.what} in the text."
        return Sample(
            Fitted(prompt, tokens, self.pieces(chunks, document), 0),
            ["; ".join(checked.items)],
            question,
            gold,
        )
