"""The units a prompt's context is made of: passages (whole or cut) and small inserted records."""

from __future__ import annotations

from dataclasses import dataclass, field

from longbench100.sources.records import Document


@dataclass
class Piece:
    """One block of the context, in prompt order once arranged.

    ``role`` is ``gold`` (ground truth, never cut), ``distractor`` (a whole padding document),
    ``filler`` (the opening part of one more padding document, cut at a sentence boundary) or
    ``record`` (a small inserted block such as a key-value record). ``tokens`` is the token count of
    ``text`` on its own.
    """

    role: str
    text: str
    tokens: int
    doc: Document | None = None
    fields: dict = field(default_factory=dict)

    @property
    def document(self) -> Document:
        """The document of a passage piece (gold, distractor or filler); a record piece has none."""
        if self.doc is None:
            raise ValueError(f"a {self.role} piece has no document")
        return self.doc

    @property
    def is_passage(self) -> bool:
        """Whether this piece is rendered as a numbered passage."""
        return self.role != "record"

    @property
    def truncated(self) -> bool:
        """Whether the piece holds only the opening part of its document."""
        return self.role == "filler"

    def provenance(self) -> dict:
        """``{"source", "id", "truncated"}`` for the sample's provenance lists."""
        return {
            "source": self.doc.source if self.doc else None,
            "id": self.doc.id if self.doc else None,
            "truncated": self.truncated,
        }


def gold_piece(document: Document) -> Piece:
    """A whole ground-truth passage."""
    return Piece("gold", document.text, document.tokens, document)


def distractor_piece(document: Document) -> Piece:
    """A whole padding passage."""
    return Piece("distractor", document.text, document.tokens, document)
