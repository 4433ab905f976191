"""ETHIC-style section tasks built from whole documents (by construction, no annotator): the context is K
real, unrelated documents numbered as sections, each with its own reference summary, and the task
needs every section. They are not ETHIC's tasks (whose sections are parts of one long text, see
:mod:`.one_document`) and are not in the ``ethic`` suite; the ``ethic-documents`` suite holds them.

- ``document_summarizing``: write one summary per section ("Section 3: ..."), graded section by section.
- ``document_organizing``: the sections' reference summaries follow in shuffled order, labelled A, B, C, ...;
  give the labels in the order of the sections.

Rows are paired. Row r has a home source (round-robin over the task's real sources, registry order) and
its own seeded order of documents, the same at every length and for both tasks: the home source's
documents first, then the other sources' documents. A length takes documents along that order while
they fit, passing over one that is too large for the room left (first fit), so the documents before
the first one passed over open the prompt at every longer length. Other sources are used only once
every document of the home source is in the prompt: sections of one source (one domain) read like
the sections of one long text, as in ETHIC; only lengths beyond the home source's total mix domains.
A prompt needs at least ``MIN_SECTIONS``: where large documents leave room for fewer, documents above
an even share of the room are passed over (and other sources may complete the set).

Budget: the whole rendered prompt plus the answer room (``answer_tokens``: a fixed part and a
per-section allowance, recorded in ``gold["answer_tokens"]`` for ``predict``) stays within the length
less any ``--reserve-output``, counted exactly in the run's tokenizer.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Callable, ClassVar

from longbench100.fitting.fit import BuildContext, Fitted
from longbench100.fitting.pieces import gold_piece
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import coverage_spans
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document, Item

from .base import Candidate, Sample, TaskBuilder
from .summary_requests import specific_request

ORDER_KEY = "ethic-sections"  # both tasks draw row r's document order from the same stream
MIN_SECTIONS = 2  # fewer is no text of sections (and nothing to put in order)
SUMMARY_WORDS = 100  # the word limit document_summarizing asks for, per section
PLACEHOLDER = Document("placeholder", "", "x", tokens=1)


@dataclass(frozen=True)
class Section:
    """One real document and its reference summary (a generic summary item of that document alone)."""

    document: Document
    item: Item

    @property
    def reference(self) -> str:
        """The reference summary."""
        return self.item.summary or ""

    def provenance(self) -> dict:
        """Source, document id and summary item id, for the record's ``gold["section_sources"]``."""
        return {"source": self.document.source, "id": self.document.id, "item_id": self.item.id}


PLACEHOLDER_SECTION = Section(PLACEHOLDER, Item("placeholder", "", ("placeholder",), summary="x"))


def section_pools(corpus: Corpus, sources: list[str]) -> dict[str, list[Section]]:
    """Per source (in the order given), its documents that have a generic reference summary of their own.

    The first such summary of a document counts; a document whose text (or a near-copy) came earlier is
    left out, so no prompt holds a text twice.
    """
    key = corpus.near_duplicates.key
    seen: set[str] = set()
    pools: dict[str, list[Section]] = {}
    for name in sources:
        pool: list[Section] = []
        for item in corpus.sources[name].items:
            if (
                item.kind != "summary"
                or len(item.doc_ids) != 1
                or specific_request(item)
                or not (item.summary or "").strip()
            ):
                continue
            document = corpus.documents[item.doc_ids[0]]
            if key(document) not in seen:
                seen.add(key(document))
                pool.append(Section(document, item))
        pools[name] = pool
    return pools


def row_order(pools: dict[str, list[Section]], seed: int, row: int) -> tuple[list[Section], int]:
    """Row ``row``'s documents in its own seeded order (home source first) and how many are from the home source."""
    names = [name for name, pool in pools.items() if pool]
    if not names:
        return [], 0
    home = names[row % len(names)]
    rng = derive_rng(seed, ORDER_KEY, row)
    first = list(pools[home])
    rng.shuffle(first)
    rest = [section for name in names if name != home for section in pools[name]]
    rng.shuffle(rest)
    return first + rest, len(first)


def first_fit(
    order: list[Section],
    home_count: int,
    room: int,
    cost: Callable[[Section], int],
    *,
    largest: int,
    minimum: int,
) -> list[Section]:
    """Sections taken along ``order`` while their ``cost`` fits the ``room`` left (and is at most ``largest``).

    Documents of other sources follow the home source's only once every home document is taken, or
    while fewer than ``minimum`` are.
    """
    chosen: list[Section] = []
    for index, section in enumerate(order):
        if index == home_count and minimum <= len(chosen) < home_count:
            break
        if cost(section) <= min(room, largest):
            chosen.append(section)
            room -= cost(section)
    return chosen


def section_labels(count: int) -> list[str]:
    """``count`` labels in spreadsheet style: A, B, ..., Z, AA, AB, ..."""
    letters = string.ascii_uppercase
    labels = []
    for number in range(1, count + 1):
        label = ""
        while number:
            number, rest = divmod(number - 1, 26)
            label = letters[rest] + label
        labels.append(label)
    return labels


def shuffled_order(count: int, seed: int) -> list[int]:
    """The sections' indices in the order their summaries are shown: a shuffle drawn from ``seed``."""
    shown = list(range(count))
    random.Random(seed).shuffle(shown)
    return shown


def labelled_summaries(summaries: list[str], arrangement: list[int]) -> list[dict]:
    """The summaries (in section order) as a prompt shows them: labelled A, B, ... in the order ``arrangement`` gives."""
    return [
        {"label": label, "text": summaries[index]}
        for label, index in zip(section_labels(len(summaries)), arrangement)
    ]


def summary_outcome(references: list[str]) -> tuple[list[str], str, dict]:
    """A summarizing task's ideal reply (every section's reference in the asked line format), its recorded
    instruction, and no gold fields of its own."""
    ideal = "\n".join(
        f"Section {number}: {reference}" for number, reference in enumerate(references, 1)
    )
    return [ideal], f"Summarise each of the {len(references)} sections, one line per section.", {}


def order_outcome(arrangement: list[int]) -> tuple[list[str], str, dict]:
    """An organizing task's answer (the labels in section order, joined by " > "), recorded question and gold ``order``."""
    label_of = {index: label for label, index in zip(section_labels(len(arrangement)), arrangement)}
    order = [label_of[index] for index in range(len(arrangement))]
    question = f"Give the labels of the {len(arrangement)} summaries in the order of the sections they summarise."
    return [" > ".join(order)], question, {"order": order}


class SectionTask(TaskBuilder):
    """What both tasks share: the section pools, each row's document order, and the exact fit with answer room."""

    required_roles = ("real",)
    answer_fixed: ClassVar[int]  # answer tokens kept free whatever the number of sections
    answer_per_section: ClassVar[int]  # and for each section

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self.pools = section_pools(corpus, corpus.sources_with_role(self.name, "real"))

    def answer_tokens(self, sections: int) -> int:
        """The answer room of a prompt with ``sections`` sections."""
        return self.answer_fixed + self.answer_per_section * sections

    def section_tokens(self, ctx: BuildContext, section: Section) -> int:
        """Tokens the section's own texts add to the prompt (its document; subclasses add more)."""
        return section.document.tokens

    def variables(self, sections: list[Section], arrangement: list[int]) -> dict:
        """Template variables besides the numbered blocks."""
        return {}

    def arrangement(self, count: int, seed: int) -> list[int]:
        """The order in which any per-section material after the sections is shown (none by default)."""
        return []

    def context_texts(self, sections: list[Section], arrangement: list[int]) -> list[str]:
        """The context's pieces in prompt order (for ``gold["spans"]``): the documents."""
        return [section.document.text for section in sections]

    def outcome(
        self, sections: list[Section], arrangement: list[int]
    ) -> tuple[list[str], str, dict]:
        """The answers, the recorded question and the task's own gold fields."""
        raise NotImplementedError

    def render_sections(self, sections: list[Section], seed: int) -> str:
        """The prompt holding ``sections`` in order (material shown in an arrangement drawn from ``seed``)."""
        arrangement = self.arrangement(len(sections), seed)
        return self.render(
            [gold_piece(section.document) for section in sections],
            **self.variables(sections, arrangement),
        )

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The sections that fit this length along the row's order, counted exactly; ``None`` when fewer than two fit."""
        order, home_count = row_order(self.pools, ctx.seed, row)
        seed = rng.getrandbits(64)
        empty = ctx.count_prompt(self.render_sections([], seed))
        one = ctx.count_prompt(self.render_sections([PLACEHOLDER_SECTION], seed))
        two = ctx.count_prompt(self.render_sections([PLACEHOLDER_SECTION] * 2, seed))
        per_section = (
            max(0, two - one - self.section_tokens(ctx, PLACEHOLDER_SECTION))
            + self.answer_per_section
        )
        room = ctx.budget - empty - self.answer_fixed

        def cost(section: Section) -> int:
            return self.section_tokens(ctx, section) + per_section

        sections = first_fit(order, home_count, room, cost, largest=room, minimum=MIN_SECTIONS)
        if (
            len(sections) < MIN_SECTIONS
        ):  # large documents crowd the others out: take none above an even share
            sections = first_fit(
                order, home_count, room, cost, largest=room // MIN_SECTIONS, minimum=MIN_SECTIONS
            )
        while len(sections) >= MIN_SECTIONS:
            prompt = self.render_sections(sections, seed)
            tokens = ctx.count_prompt(prompt)
            if tokens + self.answer_tokens(len(sections)) <= ctx.budget:
                return self._sample(ctx, prompt, tokens, sections, seed)
            sections.pop()
        return None

    def _sample(
        self, ctx: BuildContext, prompt: str, tokens: int, sections: list[Section], seed: int
    ) -> Sample:
        """The sample of a prompt that fits, with the gold fields both tasks record."""
        arrangement = self.arrangement(len(sections), seed)
        answers, question, own = self.outcome(sections, arrangement)
        texts = self.context_texts(sections, arrangement)
        gold = {
            "sources": list(dict.fromkeys(section.document.source for section in sections)),
            "item_ids": [section.item.id for section in sections],
            "passages": list(range(1, len(sections) + 1)),
            "depth": None,
            "sections": len(sections),
            "references": [section.reference for section in sections],
            "section_sources": [section.provenance() for section in sections],
            "answer_tokens": self.answer_tokens(len(sections)),
            **own,
            "spans": coverage_spans(prompt, texts, [True] * len(texts)),
        }
        pieces = [gold_piece(section.document) for section in sections]
        return Sample(Fitted(prompt, tokens, pieces, 0), answers, question, gold)


class DocumentSummarizing(SectionTask):
    """Summarise every section; the references are the documents' own summaries."""

    name = "document_summarizing"
    answer_fixed = 16
    answer_per_section = (
        160  # "Section 12: " and up to SUMMARY_WORDS words (about 130 tokens in English)
    )

    def variables(self, sections: list[Section], arrangement: list[int]) -> dict:
        """The word limit per summary."""
        return {"words": SUMMARY_WORDS}

    def outcome(
        self, sections: list[Section], arrangement: list[int]
    ) -> tuple[list[str], str, dict]:
        """The ideal reply (every reference in the asked format), the instruction, nothing more."""
        return summary_outcome([section.reference for section in sections])


class DocumentOrganizing(SectionTask):
    """Put the shuffled section summaries back in the order of the sections."""

    name = "document_organizing"
    answer_fixed = 32
    answer_per_section = 6  # a label (one or two letters) and " > "

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self._summary_tokens: dict[str, int] = {}

    def section_tokens(self, ctx: BuildContext, section: Section) -> int:
        """The document and its summary, which the prompt shows too (summary counts kept per item)."""
        if section.item.id not in self._summary_tokens:
            self._summary_tokens[section.item.id] = ctx.tokenizer.count(section.reference)
        return section.document.tokens + self._summary_tokens[section.item.id]

    def arrangement(self, count: int, seed: int) -> list[int]:
        """The sections' indices in the order their summaries are shown: a shuffle drawn from ``seed``."""
        return shuffled_order(count, seed)

    def variables(self, sections: list[Section], arrangement: list[int]) -> dict:
        """The summaries as shown: labelled A, B, ... in the shuffled order."""
        return {
            "summaries": labelled_summaries(
                [section.reference for section in sections], arrangement
            )
        }

    def context_texts(self, sections: list[Section], arrangement: list[int]) -> list[str]:
        """The documents, then the summaries as shown."""
        return super().context_texts(sections, arrangement) + [
            sections[index].reference for index in arrangement
        ]

    def outcome(
        self, sections: list[Section], arrangement: list[int]
    ) -> tuple[list[str], str, dict]:
        """The labels in section order, joined as the prompt asks; gold ``order`` holds them as a list."""
        return order_outcome(arrangement)
