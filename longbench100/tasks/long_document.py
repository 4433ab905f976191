"""HELMET's long-document tasks: one long document is the whole context, cut to fit, with no padding and no
pointer to a passage.

As HELMET's ``truncate_llama2``: a document longer than the room is cut at a token boundary (in the
run's tokenizer) and followed by " ... [the rest of the text is omitted]"; a document that does not
fill the length is not used at that length (HELMET keeps only documents longer than the length). So
an item fits the lengths from the one whose cut still keeps its evidence (:meth:`LongDocumentTask.evidence_kept`;
QA items are dropped where the answer would be cut away) up to the one its whole document fills.
Unlike HELMET, the cut is fitted so that prompt plus answer room meet the length exactly, and the answer
room follows the gold: the task's room, or more where the gold itself is longer (``gold.answer_tokens``).
An item is never asked twice at one length (the same cut would repeat its prompt): where fewer items fit
than rows are asked, the length gets fewer rows, a shortfall said on screen, in the manifest and by
``inspect``.
"""

from __future__ import annotations

import random
from typing import ClassVar

from longbench100.catalog.task_info import TASKS
from longbench100.fitting.fit import BuildContext, Fitted
from longbench100.fitting.pieces import gold_piece
from longbench100.fitting.spans import coverage_spans
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document, Item
from longbench100.text.tokenization import Tokenizer

from .base import Candidate, Sample, TaskBuilder, accepted_items

OMITTED = " ... [the rest of the text is omitted]"  # HELMET's mark where a document was cut
EVIDENCE_MARGIN = 16  # tokens past the evidence a cut must keep (the cut's count moves by a few tokens at its junction)
ANSWER_MARGIN = 32  # tokens of answer room beyond the longest gold answer, where that is longer than the task's room


class LongDocumentTask(TaskBuilder):
    """What the long-document tasks share: items with one document, the evidence rule, the HELMET cut."""

    required_roles = ("real",)
    closed_book: ClassVar[bool] = False
    reuses_items = False

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        self.items = accepted_items(corpus, self.name, self.accepts)
        self.room = TASKS[self.name].reserve_output

    def accepts(self, item: Item) -> bool:
        """Whether ``item`` can serve as this task's ground truth."""
        raise NotImplementedError

    def variables(self, item: Item) -> dict:
        """Template variables besides the context."""
        return {}

    def evidence_kept(self, item: Item, text: str) -> bool:
        """Whether ``text`` (the start of the item's document) still holds what the answer needs (all of it by default)."""
        return True

    def render_context(self, item: Item, context: str, **extra: object) -> str:
        """The prompt over ``context``."""
        return self.templates.render(
            self.name, {"context": context, **self.variables(item), **extra}
        )

    def answer_room(self, item: Item, tokenizer: Tokenizer) -> int:
        """Tokens kept for the answer: the task's room, or the longest gold answer and a margin where that is more."""
        golds = list(item.answers) if item.kind == "qa" else [item.summary or ""]
        longest = max((tokenizer.count(gold) for gold in golds), default=0)
        return (
            max(self.room, longest + ANSWER_MARGIN)
            if longest > self.room - ANSWER_MARGIN
            else self.room
        )

    def document(self, item: Item) -> Document:
        """The item's one document."""
        return self.corpus.documents[item.doc_ids[0]]

    def shortest_kept(self, item: Item) -> int:
        """The length in characters of the shortest opening of the document that keeps the evidence."""
        text = self.document(item).text
        low, high = 0, len(text)
        while low < high:  # the rule is monotone in the opening's length
            middle = (low + high) // 2
            if self.evidence_kept(item, text[:middle]):
                high = middle
            else:
                low = middle + 1
        return low

    def candidates(self, ctx: BuildContext) -> list[Candidate]:
        """Every accepted item whose evidence exists: it fits from the length whose cut keeps it to the length its whole
        document fills (lengths here include the answer room, which :meth:`build`'s budget has taken off)."""
        found = []
        for item in self.items:
            document = self.document(item)
            if not self.evidence_kept(item, document.text):
                continue
            room = self.answer_room(item, ctx.tokenizer)
            overhead = ctx.count_prompt(self.render_context(item, OMITTED)) + room
            whole = (
                ctx.count_prompt(
                    self.render_context(item, document.text), [(document.text, len(document.text))]
                )
                + room
            )
            shortest = self.shortest_kept(item)
            kept = ctx.tokenizer.count_known(document.text[:shortest], [(document.text, shortest)])
            found.append(Candidate(item, overhead + kept + EVIDENCE_MARGIN, whole))
        return found

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The document cut at the token where the prompt meets the budget (the length less the answer room) exactly."""
        assert candidate is not None, "the planner hands every item-based task a candidate"
        item, document = candidate.item, self.document(candidate.item)
        room = self.answer_room(item, ctx.tokenizer)
        budget = ctx.budget - (
            room - self.room
        )  # the budget has the task's room taken off; a longer gold takes more
        ids = ctx.tokenizer.encode(document.text)
        keep = budget - ctx.count_prompt(self.render_context(item, OMITTED))
        best = None
        for _ in range(
            8
        ):  # a cut's count differs from its estimate by a few tokens at the junctions
            context = (
                document.text
                if keep >= len(ids)
                else _opening(ctx, document.text, ids, keep) + OMITTED
            )
            prompt = self.render_context(item, context)
            tokens = ctx.count_prompt(prompt, [(document.text, len(context.removesuffix(OMITTED)))])
            excess = tokens - budget
            if excess <= 0 and (best is None or tokens > best[1]):
                best = (prompt, tokens, context.removesuffix(OMITTED))
            if excess == 0 or (excess < 0 and keep >= len(ids)):
                break
            keep -= excess  # fewer tokens when over, more when short
        if best is None or not self.evidence_kept(item, best[2]):
            return None
        prompt, tokens, kept = best
        gold = {
            "sources": [item.source],
            "item_ids": [item.id],
            "doc_ids": [document.id],
            "depth": None,
            "answer_tokens": room,
            "kept_chars": len(kept),
            "document_chars": len(document.text),
            "spans": coverage_spans(prompt, [kept], [True]),
        }
        closed = self.render_context(item, "", closed_book=True) if self.closed_book else None
        piece = gold_piece(document)
        return Sample(
            Fitted(prompt, tokens, [piece], 0),
            list(item.answers) if item.kind == "qa" else [item.summary or ""],
            self.question(item),
            gold,
            closed,
        )

    def question(self, item: Item) -> str | None:
        """The question or instruction recorded with the sample."""
        return item.question


def _opening(ctx: BuildContext, text: str, ids: list[int], keep: int) -> str:
    """The document's text up to the end of its ``keep``-th token (fewer where a token ends inside a character)."""
    keep = max(0, min(keep, len(ids)))
    while keep > 0:
        opening = ctx.tokenizer.decode(ids[:keep])
        if text.startswith(opening):
            return opening
        keep -= 1
    return ""
