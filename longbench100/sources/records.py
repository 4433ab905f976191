"""The normalised records every source is read into: documents and the items (questions or summaries) about them."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol


@dataclass(frozen=True)
class Document:
    """One passage of real text that can be placed in a prompt.

    ``id`` is unique across all sources (``<source>/<local id>``); ``tokens`` is filled in from the
    token-count cache for the tokenizer in use (``-1`` until counted).
    """

    id: str
    source: str
    text: str
    title: str | None = None
    tokens: int = -1

    def with_tokens(self, tokens: int) -> "Document":
        """The same document with its token count filled in (as ``dataclasses.replace``, at a sixth of
        its cost: a source holds tens of thousands of documents, and a frozen dataclass's constructor
        sets each field through ``object.__setattr__``)."""
        document = object.__new__(Document)
        document.__dict__.update(
            id=self.id, source=self.source, text=self.text, title=self.title, tokens=tokens
        )
        return document


class CountedWhenRead(Document):
    """``document`` whose token count is worked out by ``count`` (of its text) when it is first
    read, not before: a run that places a few documents of large sources counts only those."""

    _count: Callable[[str], int]

    def __init__(self, document: Document, count: Callable[[str], int]) -> None:
        for name in ("id", "source", "text", "title"):
            object.__setattr__(self, name, getattr(document, name))
        object.__setattr__(self, "_count", count)

    @cached_property
    def tokens(self) -> int:
        """The document's token count, counted on first read."""
        return self._count(self.text)


CHARACTERS_PER_TOKEN = 4
"""About how many characters of English prose a token holds, for :func:`draws_little_of`."""
DRAWN_MULTIPLE = 2
"""Rows that draw fewer tokens than this many times their documents' tokens draw little of them:
each row draws its own random part, so together they leave about ``exp(-DRAWN_MULTIPLE)`` (a
seventh) of the documents or more undrawn."""


class Texted(Protocol):
    """Anything with a text (a document, or one before cleaning)."""

    @property
    def text(self) -> str: ...


def draws_little_of(tokens_drawn: int, documents: Iterable[Texted]) -> bool:
    """Whether a run whose rows draw at most ``tokens_drawn`` tokens of ``documents`` draws little
    of them (fewer than :data:`DRAWN_MULTIPLE` times their tokens, estimated from their characters
    without counting): work done ahead for every document is then partly wasted, where working
    out each document as a row first draws it does none for the documents no row draws. Only how
    much work is done ahead depends on it, never what a run writes."""
    characters = sum(len(document.text) for document in documents)
    return tokens_drawn * CHARACTERS_PER_TOKEN < DRAWN_MULTIPLE * characters


@dataclass(frozen=True)
class Item:
    """Ground truth about one or more documents: a question with answers, or a reference summary; or a
    labelled text of a classification set.

    ``doc_ids`` names the supporting documents in order (one for single-document items, several for
    multi-hop questions and multi-document summaries; none for classification items). A
    classification item keeps its text in ``question``, its class name in ``label`` (also its one
    answer) and the split it comes from (``train``, ``test``) in ``split``. A ranking item (re-ranking
    data that judges a list of candidates) names every candidate in ``doc_ids`` and its relevance grade
    (0 = not relevant) at the same position of ``grades``.
    """

    id: str
    source: str
    doc_ids: tuple[str, ...]
    question: str | None = None
    answers: tuple[str, ...] = ()
    summary: str | None = None
    label: str | None = None
    split: str | None = None
    grades: tuple[int, ...] = ()

    @property
    def kind(self) -> str:
        """``"classification"`` for a labelled text, ``"ranking"`` for graded candidates, ``"summary"`` when the
        item carries a reference summary, else ``"qa"``."""
        if self.label is not None:
            return "classification"
        if self.grades:
            return "ranking"
        return "summary" if self.summary is not None else "qa"

    @property
    def class_label(self) -> str:
        """The class name of a classification item; any other item has none (an error)."""
        if self.label is None:
            raise ValueError(f"item {self.id} is not a classification item: it has no class label")
        return self.label

    @property
    def reference_summary(self) -> str:
        """The reference summary of a summary item; any other item has none (an error)."""
        if self.summary is None:
            raise ValueError(f"item {self.id} is not a summary item: it has no reference summary")
        return self.summary


@dataclass
class SourceData:
    """Everything read from one registered source."""

    name: str
    documents: dict[str, Document] = field(default_factory=dict)
    items: list[Item] = field(default_factory=list)
    skipped_empty: int = 0
    filtered_items: int = 0  # items left out by the entry's ``where`` / ``min_documents`` rules
    duplicate_items: int = (
        0  # items identical to an earlier one (same document texts, question and reference)
    )
    unanswerable: dict[str, int] = field(
        default_factory=dict
    )  # items dropped per answerability rule
    cleaned: dict[str, int] = field(
        default_factory=dict
    )  # texts each cleaning step changed (a text met twice counts once)
    files: dict[str, str] = field(default_factory=dict)  # path in repo -> sha256 of the file read
