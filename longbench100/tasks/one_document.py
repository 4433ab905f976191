"""ETHIC's one-document tasks: the context is contiguous chunks of one long document, cut at chunk
boundaries to the budget, so the number of chunks K grows with the length.

A document is cut once into consecutive chunks of at most :data:`~longbench100.judge.annotation_rubric.CHUNK_TOKENS`
tokens (in the run's tokenizer) at sentence boundaries; an annotator model labels each chunk the tasks
use (:mod:`longbench100.annotation`): a short summary, or what it names of its source's entity type (people, legal references). The labels are asked
for before any row is built (:meth:`OneDocumentTask.annotation_requests` lists the chunks every row
could use), so building stays free of model calls and the annotator's cache makes other lengths and
seeds free.

Rows: the task's documents (every document of its ``real`` sources, each text once) in a seeded order,
those that reach the most lengths first (a 400k-token novel before a 20k-token report). Each row has its
own document and starting chunk, laid out over all the run's lengths at once (:mod:`.document_windows`):
slots for the longest length are carved first, from each document's second chunk on (the first holds a
book's title page and contents, which would give Section 1 away), so row r reads the same opening of the
same document at every length its slot fills, longer at each (paired rows), and no two rows' slots
overlap. A row whose slot cannot fill a length reads, there, the window that shares least with the other
rows' windows, and is recorded as unpaired at that length.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from longbench100.core.errors import UserError
from longbench100.fitting.fit import BuildContext, Fitted
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import coverage_spans
from longbench100.fitting.templates import PromptTemplates
from longbench100.judge.annotation_rubric import CHUNK_TOKENS, SUMMARY
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document
from longbench100.text.chunks import chunk_spans
from longbench100.text.tokenization import Tokenizer

from .base import Candidate, Sample, TaskBuilder, distinct_texts
from .document_windows import WindowLayout

if TYPE_CHECKING:
    from ..annotation.labels import Annotations

ORDER_KEY = "ethic-one-document"  # every one-document task draws the same document order, so they share annotations
FRONT_CHUNKS = 1  # a document's opening chunks left out: a book's title page and contents, which would place Section 1 at sight
SHORTEST_LENGTH = 8192  # the length whose doublings rank the documents by reach


@dataclass(frozen=True)
class Chunk:
    """One chunk of a document: its text (outer whitespace removed), token count, and place in the document."""

    text: str
    tokens: int
    start: int  # character offsets in the document's text
    end: int


@dataclass(frozen=True)
class Window:
    """The chunks one row may use at one length: a document, the first chunk's index, and the chunks."""

    document: Document
    first: int
    chunks: list[Chunk]


def document_chunks(document: Document, tokenizer: Tokenizer) -> list[Chunk]:
    """``document`` cut into consecutive chunks of at most ``CHUNK_TOKENS`` tokens at sentence boundaries."""
    spans = [
        (start, end)
        for start, end in chunk_spans(document.text, tokenizer, CHUNK_TOKENS)
        if document.text[start:end].strip()
    ]
    texts = [document.text[start:end].strip() for start, end in spans]
    return [
        Chunk(text, tokens, start, end)
        for text, tokens, (start, end) in zip(texts, tokenizer.count_batch(texts), spans)
    ]


def reach(tokens: int) -> int:
    """How many doublings of the shortest length a document of ``tokens`` tokens fills (-1 below it)."""
    return int(math.floor(math.log2(tokens / SHORTEST_LENGTH))) if tokens >= SHORTEST_LENGTH else -1


class OneDocumentTask(TaskBuilder):
    """What the one-document tasks share: the document pool, each row's window, the annotations and the fit."""

    required_roles = ("real",)
    chooses_own_items = True
    annotation_kind: ClassVar[
        str
    ]  # the annotation each chunk needs (a key of annotation.prompts.PROMPT_VERSIONS)
    min_chunks: ClassVar[int] = 2

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self.documents = distinct_texts(
            corpus.documents_of(corpus.sources_with_role(self.name, "real")), corpus.near_duplicates
        )
        self._chunks: dict[str, list[Chunk]] = {}
        self.annotations: Annotations | None = None
        self._layout: tuple[tuple, list[Document], WindowLayout] | None = None

    def chunks(self, document: Document, tokenizer: Tokenizer) -> list[Chunk]:
        """The document's chunks (cut once per process)."""
        if document.id not in self._chunks:
            self._chunks[document.id] = document_chunks(document, tokenizer)
        return self._chunks[document.id]

    def ordered_documents(self, seed: int) -> list[Document]:
        """The pool in the run's seeded order, documents that reach more lengths first."""
        documents = sorted(self.documents, key=lambda document: document.id)
        derive_rng(seed, ORDER_KEY).shuffle(documents)
        return sorted(documents, key=lambda document: -reach(document.tokens))

    def layout(
        self, tokenizer: Tokenizer, seed: int, rows: int, budgets: list[int]
    ) -> WindowLayout:
        """Where every row reads at each of ``budgets`` (:mod:`.document_windows`; laid out once per run)."""
        key = (seed, rows, tuple(sorted(set(budgets))))
        if self._layout is None or self._layout[0] != key:
            documents = self.ordered_documents(seed)
            layout = WindowLayout(
                lambda index: [chunk.tokens for chunk in self.chunks(documents[index], tokenizer)],
                [document.tokens for document in documents],
                [document.source for document in documents],
                budgets,
                rows,
                FRONT_CHUNKS,
            )
            self._layout = (key, documents, layout)
        return self._layout[2]

    def window(self, tokenizer: Tokenizer, row: int, budget: int) -> Window | None:
        """Row ``row``'s document and the chunks from its first one while their tokens fit ``budget`` (``None``: no
        document is that long), as the run's :meth:`layout` places it."""
        if self._layout is None:
            raise RuntimeError("the one-document layout is made before any window is asked for")
        _, documents, layout = self._layout
        placement = layout.placement(budget, row)
        if placement is None:
            return None
        document = documents[placement.document]
        taken, total = [], 0
        for chunk in self.chunks(document, tokenizer)[placement.first :]:
            if total + chunk.tokens > budget:
                break
            taken.append(chunk)
            total += chunk.tokens
        return Window(document, placement.first, taken)

    def row_pairing(self, budget: int, row: int) -> tuple[bool, bool]:
        """Whether ``row`` reads its own document from its own start at ``budget`` (paired), and whether its window
        shares text with another row's there."""
        placement = self._layout[2].placement(budget, row) if self._layout else None
        return (placement.paired, placement.shared) if placement else (False, False)

    def kind_for(self, document: Document) -> str:
        """The annotation ``document``'s chunks need (the task's; recalling's depends on the document's source)."""
        return self.annotation_kind

    def annotation_requests(
        self, tokenizer: Tokenizer, seed: int, rows: int, budgets: list[int]
    ) -> list[tuple[str, str]]:
        """(kind, chunk text) for every chunk a row may use at any of ``budgets``: what must be annotated before building."""
        requests: dict[tuple[str, str], None] = {}
        self.layout(tokenizer, seed, rows, budgets)
        for budget in budgets:
            for row in range(rows):
                window = self.window(tokenizer, row, budget)
                if window is None:
                    continue
                for chunk in window.chunks:
                    requests.setdefault((self.kind_for(window.document), chunk.text))
        return list(requests)

    def need_annotations(self) -> Annotations:
        """The annotations given to this builder; building without them is a one-line error naming the option."""
        if self.annotations is None:
            raise UserError(
                f"{self.name} needs chunk annotations by a model: give --annotator-model "
                "(and --annotator-base-url for a local server; docs/suites.md, ETHIC)"
            )
        return self.annotations

    def answer_tokens(self, chunks: list[Chunk], document: Document) -> int:
        """Tokens kept free for the answer of a prompt over ``chunks`` of ``document``."""
        raise NotImplementedError

    def render_chunks(self, chunks: list[Chunk], document: Document, seed: int) -> str:
        """The prompt over ``chunks`` (any shuffled material drawn from ``seed``)."""
        raise NotImplementedError

    def sample(
        self, prompt: str, tokens: int, window: Window, chunks: list[Chunk], seed: int
    ) -> Sample | None:
        """The sample of a prompt that fits (``None``: the row has nothing to ask, a shortfall)."""
        raise NotImplementedError

    def per_chunk_extra(self, chunk: Chunk, ctx: BuildContext) -> int:
        """Tokens a chunk adds to the prompt besides its text and its heading (organizing: its summary)."""
        return 0

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The most chunks of the row's window that fit the budget with their answer room, counted exactly."""
        window = self.window(ctx.tokenizer, row, ctx.budget)
        if window is None:
            return None
        seed = rng.getrandbits(64)
        chunks = list(window.chunks)
        empty = ctx.count_prompt(self.render_chunks([], window.document, seed))
        room = ctx.budget - empty
        used, count = 0, 0
        for chunk in (
            chunks
        ):  # estimate: each chunk's text, a few tokens of heading, its extra and answer room
            cost = chunk.tokens + 8 + self.per_chunk_extra(chunk, ctx)
            if used + cost + self.answer_tokens(chunks[: count + 1], window.document) > room:
                break
            used += cost
            count += 1
        chunks = chunks[:count]
        while len(chunks) >= self.min_chunks:
            prompt = self.render_chunks(chunks, window.document, seed)
            tokens = ctx.count_prompt(prompt)
            if tokens + self.answer_tokens(chunks, window.document) <= ctx.budget:
                return self.sample(prompt, tokens, window, chunks, seed)
            chunks.pop()
        return None

    @staticmethod
    def pieces(chunks: list[Chunk], document: Document) -> list[Piece]:
        """The chunks as gold passage pieces of ``document``."""
        return [Piece("gold", chunk.text, chunk.tokens, document) for chunk in chunks]

    @staticmethod
    def base_gold(window: Window, chunks: list[Chunk]) -> dict:
        """The provenance every one-document sample records."""
        return {
            "sources": [window.document.source],
            "item_ids": [],
            "doc_ids": [window.document.id],
            "first_chunk": window.first,
            "chunk_chars": [[chunk.start, chunk.end] for chunk in chunks],
            "depth": None,
        }


class ChunkSections(OneDocumentTask):
    """The section tasks over one document: each chunk is a numbered section, and every section is needed."""

    annotation_kind = SUMMARY
    answer_fixed: ClassVar[int]  # answer tokens kept free whatever the number of sections
    answer_per_section: ClassVar[int]  # and for each section

    def answer_tokens(self, chunks: list[Chunk], document: Document) -> int:
        """The fixed room plus the room of each section."""
        return self.answer_fixed + self.answer_per_section * len(chunks)

    def variables(self, chunks: list[Chunk], seed: int) -> dict:
        """Template variables besides the numbered sections."""
        return {}

    def render_chunks(self, chunks: list[Chunk], document: Document, seed: int) -> str:
        """The chunks as numbered sections, in the task's template."""
        return self.render(self.pieces(chunks, document), **self.variables(chunks, seed))

    def outcome(self, chunks: list[Chunk], seed: int) -> tuple[list[str], str, dict]:
        """The answers, the recorded instruction and the task's own gold fields."""
        raise NotImplementedError

    def context_texts(self, chunks: list[Chunk], seed: int) -> list[str]:
        """The context's pieces in prompt order (for ``gold["spans"]``): the sections."""
        return [chunk.text for chunk in chunks]

    def sample(
        self, prompt: str, tokens: int, window: Window, chunks: list[Chunk], seed: int
    ) -> Sample:
        """The sample, with the section provenance both tasks record."""
        answers, question, own = self.outcome(chunks, seed)
        texts = self.context_texts(chunks, seed)
        gold = {
            **self.base_gold(window, chunks),
            "passages": list(range(1, len(chunks) + 1)),
            "sections": len(chunks),
            "answer_tokens": self.answer_tokens(chunks, window.document),
            **own,
            "spans": coverage_spans(prompt, texts, [True] * len(texts)),
        }
        return Sample(
            Fitted(prompt, tokens, self.pieces(chunks, window.document), 0), answers, question, gold
        )
