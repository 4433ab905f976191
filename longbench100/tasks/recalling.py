"""recalling (ETHIC recalling): list every person named anywhere in one long stretch of one document.

The context is the document's consecutive chunks (:mod:`.one_document`) as one continuous text. The
gold is the union of the annotator's per-chunk lists of people named (each name found in its chunk,
so the gold can be checked against the prompt), compared case-insensitively; scored by F1 over the
set of names (``name_set_f1``). IC by construction counts the chunks that name somebody.
"""

from __future__ import annotations

from ..annotation.prompts import ENTITY_TYPE, MENTIONS
from ..generate.fitting import Fitted
from ..generate.spans import coverage_spans
from ..records import Document
from .base import Sample
from .one_document import Chunk, OneDocumentTask, Window

ANSWER_FIXED = 64  # room for a reply that lists more names than the annotator found
TOKENS_PER_NAME = 12  # a name of a few tokens and "; ", with room to spare


class Recalling(OneDocumentTask):
    """Name every person the text names."""

    name = "recalling"
    annotation_kind = MENTIONS

    def names(self, chunks: list[Chunk]) -> list[str]:
        """The people named in ``chunks``, each once (case-insensitively), in order of first mention."""
        annotations = self.need_annotations()
        found: dict[str, str] = {}
        for chunk in chunks:
            for name in annotations.mentions(chunk.text):
                found.setdefault(name.lower(), name)
        return list(found.values())

    def answer_tokens(self, chunks: list[Chunk]) -> int:
        """A few tokens per name to list."""
        return ANSWER_FIXED + TOKENS_PER_NAME * len(self.names(chunks))

    def render_chunks(self, chunks: list[Chunk], document: Document, seed: int) -> str:
        """The chunks as one continuous text (the document's own text between the first and last chunk)."""
        context = document.text[chunks[0].start:chunks[-1].end].strip() if chunks else ""
        return self.templates.render(self.name, {"context": context, "entity_type": ENTITY_TYPE})

    def sample(self, prompt: str, tokens: int, window: Window, chunks: list[Chunk], seed: int) -> Sample:
        """The names as the answer; the chunks that name somebody as the gold spans."""
        names = self.names(chunks)
        annotations = self.need_annotations()
        gold = {
            **self.base_gold(window, chunks),
            "mentions": names,
            "chunks": len(chunks),
            "answer_tokens": self.answer_tokens(chunks),
            "spans": coverage_spans(prompt, [chunk.text for chunk in chunks],
                                    [bool(annotations.mentions(chunk.text)) for chunk in chunks]),
        }
        question = "List every person named in the text."
        return Sample(Fitted(prompt, tokens, self.pieces(chunks, window.document), 0), ["; ".join(names)], question, gold)
