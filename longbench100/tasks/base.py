"""What every task builder shares: the builder interface, the items it draws, passage numbering
and depth, and the gold-among-distractors construction."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, ClassVar, Sequence

from longbench100.fitting.fit import BuildContext, Fitted, fit_prompt, minimum_tokens
from longbench100.fitting.pieces import Piece, gold_piece
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.near_duplicates import NearDuplicates, identical_text
from longbench100.sources.records import Document, Item
from longbench100.text.tokenization import Tokenizer


@dataclass(frozen=True)
class Candidate:
    """A ground-truth item a row can ask about, with the fewest tokens any prompt about it needs, and for a task
    whose document must fill the prompt, the most (``None``: no limit)."""

    item: Item
    min_tokens: int
    max_tokens: int | None = None

    def fits(self, budget: int) -> bool:
        """Whether a prompt of ``budget`` tokens can ask about this item."""
        return self.min_tokens <= budget and (self.max_tokens is None or budget <= self.max_tokens)


@dataclass
class Sample:
    """What a builder returns for one row at one length; the runner adds ids and bookkeeping."""

    fitted: Fitted
    answers: list[str]
    question: str | None
    gold: dict
    closed_book_prompt: str | None = None


class TaskBuilder:
    """Base class: subclasses set ``name`` and implement :meth:`build` (and :meth:`candidates` when they use real items)."""

    name: ClassVar[str]
    required_roles: ClassVar[tuple[str, ...]] = (
        "noisy",
    )  # source roles the task cannot do without
    uses_negatives: ClassVar[bool] = (
        False  # whether ``--negatives`` shapes its output (recorded in the manifest only then)
    )
    chooses_own_items: ClassVar[bool] = (
        False  # rows pick their items themselves (no candidates): gold.sources[0] is each row's source
    )
    reuses_items: ClassVar[bool] = (
        True  # a row may ask an item another row asks at the same length (False: fewer rows there)
    )
    reads_drawn_counts_only: ClassVar[bool] = (
        False  # rows read the token counts of the documents they draw only, not of whole pools
    )
    drawn_roles: ClassVar[
        tuple[str, ...]
    ] = ()  # roles whose sources' rows clean each document when they draw it (not read whole)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a task's own builder, not a family's shared base
            _REGISTERED[cls.name] = cls

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        self.corpus = corpus
        self.templates = templates
        self.noisy_pool = self.padding_pool()

    def padding_pool(self) -> list[Document]:
        """The documents that pad this task's prompts: those of its ``noisy`` sources, each text
        once."""
        return distinct_texts(
            self.corpus.documents_of(self.corpus.sources_with_role(self.name, "noisy")),
            self.corpus.near_duplicates,
        )

    def candidates(self, ctx: BuildContext) -> list[Candidate] | None:
        """Ground-truth candidates, or ``None`` for synthetic tasks whose rows need no real item.

        Worked out once, with the run's first length as ``ctx``, for every length: they must not
        depend on ``ctx.label`` or ``ctx.budget`` (and are kept between runs of other lengths)."""
        return None

    def prepare(
        self, tokenizer: Tokenizer, prompt_tokens: int, drawn: Sequence[tuple[Item, int]]
    ) -> None:
        """Work every row shares, done once before the rows are built (in this process, so worker
        processes inherit it); ``prompt_tokens``: the most the run's prompts of this task hold
        together (rows times the budgets of its lengths); ``drawn``: the item each row still to
        build asks about, with the budget its prompt is built at (none for a synthetic task).
        Nothing by default."""

    def read_ahead(self, rows: Sequence[tuple[int, random.Random]]) -> None:
        """Read ahead, in this process and before any row is built, what the rows still to build
        will read first, where working it out for all of them in one pass is cheaper than one row
        at a time; ``rows``: each row's budget and random generator, as :meth:`build` gets them
        (this may draw from them). Nothing by default."""

    def finish(self, tokenizer: Tokenizer) -> None:
        """Work once the run's rows are built (in this process): nothing by default."""

    def rows_in_this_process(self) -> bool:
        """Whether this task's rows must be built in this process (after :meth:`prepare`): they
        work out and keep what they draw as they draw it. No by default."""
        return False

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """Build one sample, or ``None`` when it cannot fit the budget."""
        raise NotImplementedError

    def control_pool(self, tokenizer: Tokenizer) -> list[Document]:
        """The documents that fill the room of the gold in the gold-removed control twin
        (``generate/controls.py``): the task's padding documents, else those of its ground-truth
        sources (a one-document task's other documents); none for a task that makes its own text,
        whose twin is filled from its own context around the gold."""
        if self.noisy_pool:
            return self.noisy_pool
        real = self.corpus.documents_of(self.corpus.sources_with_role(self.name, "real"))
        return distinct_texts(real, self.corpus.near_duplicates)

    def render(self, pieces: list[Piece], **variables: object) -> str:
        """Number the passages in order and render this task's template around them."""
        blocks, gold_numbers = number_blocks(pieces)
        return self.templates.render(
            self.name, {"blocks": blocks, "gold_numbers": gold_numbers, **variables}
        )


_REGISTERED: dict[str, type[TaskBuilder]] = {}
"""Every task builder class defined so far, by task name (filled as task modules are imported)."""


def registered_builder(task: str) -> type[TaskBuilder]:
    """The builder class of ``task``, whose module has been imported."""
    return _REGISTERED[task]


def uniform_fill(task: str, text: str, tokenizer: Tokenizer) -> list[Document]:
    """A word task's control pool: ``text``, a list in the task's own format where no word is more
    frequent than another, as one counted document."""
    return [Document(f"{task}/uniform", task, text, tokens=tokenizer.count(text))]


def accepted_items(corpus: Corpus, task: str, accepts: Callable[[Item], bool]) -> list[Item]:
    """The items of ``task``'s ``real`` sources that ``accepts`` keeps, in the corpus' order."""
    return [
        item for item in corpus.items_of(corpus.sources_with_role(task, "real")) if accepts(item)
    ]


def distinct_texts(
    documents: list[Document], near_duplicates: NearDuplicates | None = None
) -> list[Document]:
    """The documents with repeated texts dropped (the first of each is kept), so no prompt holds a text twice.

    With ``near_duplicates`` a near-copy of a kept document counts as a repeat too; without, only an
    identical text does.
    """
    key = near_duplicates.key if near_duplicates else identical_text
    seen: set[str] = set()
    kept = []
    for document in documents:
        if key(document) not in seen:
            seen.add(key(document))
            kept.append(document)
    return kept


def number_blocks(pieces: list[Piece]) -> tuple[list[dict], list[int]]:
    """Template blocks (passages numbered from 1 in prompt order) and the numbers of the gold passages."""
    blocks: list[dict] = []
    gold_numbers: list[int] = []
    number = 0
    for piece in pieces:
        if piece.is_passage:
            number += 1
            blocks.append(
                {
                    "kind": "passage",
                    "number": number,
                    "text": piece.text,
                    "title": piece.doc.title if piece.doc else None,
                }
            )
            if piece.role == "gold":
                gold_numbers.append(number)
        else:
            blocks.append({"kind": "record", "text": piece.text, **piece.fields})
    return blocks, gold_numbers


def depth_of(pieces: list[Piece], index: int, per_passage: int) -> float:
    """Relative position (0-1) of the start of ``pieces[index]`` within the context."""
    sizes = [piece.tokens + per_passage for piece in pieces]
    total = sum(sizes)
    return round(sum(sizes[:index]) / total, 4) if total else 0.0


class GoldAmongDistractors(TaskBuilder):
    """Tasks that hide an item's supporting documents among distractors from the task's noisy sources."""

    closed_book: ClassVar[bool] = False
    required_roles: ClassVar[tuple[str, ...]] = ("real", "noisy")

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self.items = accepted_items(corpus, self.name, self.accepts)

    def accepts(self, item: Item) -> bool:
        """Whether ``item`` can serve as this task's ground truth."""
        return True

    def variables(self, item: Item) -> dict:
        """Template variables besides the blocks and gold passage numbers."""
        return {}

    def answers(self, item: Item) -> list[str]:
        """Acceptable answers, canonical first."""
        return list(item.answers)

    def question(self, item: Item, gold_numbers: list[int]) -> str | None:
        """The bare question or instruction recorded with the sample (for judges and readers)."""
        return item.question

    def gold_documents(self, item: Item) -> list[Document]:
        """The item's supporting documents, each text once (some sources give one passage several ids, or near-copies)."""
        return distinct_texts(
            [self.corpus.documents[doc_id] for doc_id in item.doc_ids], self.corpus.near_duplicates
        )

    def distractor_pool(self, item: Item, budget: int) -> list[Document]:
        """The documents that pad a prompt about ``item`` at ``budget`` tokens: the task's noisy pool."""
        return self.noisy_pool

    @cached_property
    def source_pools(self) -> dict[str, list[Document]]:
        """Each of the task's padding sources' own documents, each text once (for same-source padding)."""
        return {
            name: distinct_texts(self.corpus.documents_of([name]), self.corpus.near_duplicates)
            for name in self.corpus.sources_with_role(self.name, "noisy")
        }

    def leading_distractors(self, item: Item, ctx: BuildContext, rng: random.Random) -> list[Piece]:
        """Padding placed before any drawn from the pool, always in the prompt (none by default)."""
        return []

    def _render_for(self, item: Item):
        variables = self.variables(item)
        return lambda pieces: self.render(pieces, **variables)

    def candidates(self, ctx: BuildContext) -> list[Candidate] | None:
        """Every accepted item, with the tokens of its prompt without padding (``None`` in a
        subclass whose rows choose their own items)."""
        return [
            Candidate(
                item,
                minimum_tokens(
                    ctx,
                    self._render_for(item),
                    [gold_piece(doc) for doc in self.gold_documents(item)],
                ),
            )
            for item in self.items
        ]

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """Place the item's documents at random positions among whole distractors and a cut-off filler."""
        assert candidate is not None, "the planner hands every item-based task a candidate"
        item = candidate.item
        render = self._render_for(item)
        leading = self.leading_distractors(item, ctx, rng)
        placed = {piece.document.id for piece in leading}
        pool = self.distractor_pool(item, ctx.budget)
        fitted = fit_prompt(
            ctx,
            rng,
            render,
            [gold_piece(doc) for doc in self.gold_documents(item)],
            [document for document in pool if document.id not in placed] if placed else pool,
            records=leading,
            text_key=self.corpus.near_duplicates.key,
        )
        if fitted is None:
            return None
        _, gold_numbers = number_blocks(fitted.pieces)
        first_gold = next(
            index for index, piece in enumerate(fitted.pieces) if piece.role == "gold"
        )
        gold = {
            "sources": [item.source],
            "item_ids": [item.id],
            "doc_ids": [
                piece.doc.id for piece in fitted.pieces if piece.role == "gold" and piece.doc
            ],  # in prompt order, like passages
            "passages": gold_numbers,
            "depth": depth_of(fitted.pieces, first_gold, fitted.per_passage),
        }
        closed = (
            self.templates.render(
                self.name,
                {**self.variables(item), "blocks": [], "gold_numbers": [], "closed_book": True},
            )
            if self.closed_book
            else None
        )
        return Sample(fitted, self.answers(item), self.question(item, gold_numbers), gold, closed)


class SingleDocumentQuestions:
    """For QA tasks about one document: which items they take and the template variables of a question."""

    def accepts(self, item: Item) -> bool:
        """Questions with answers about exactly one document."""
        return item.kind == "qa" and len(item.doc_ids) == 1

    def variables(self, item: Item) -> dict:
        """The question; the closed-book switch is off for the main prompt."""
        return {"question": item.question, "closed_book": False}
