"""long_doc_qa (HELMET's long-document QA: NarrativeQA, InfiniteBench QA): a question about one long document
that is the whole context, cut to fit (:mod:`.long_document`); items whose answer the cut would remove
are not used at that length.

The prompt asks for what the gold is (:func:`answer_form`): a single phrase where the gold is one (HELMET's
wording), the document's own words where the gold is a longer passage copied from it (L-Eval's contract
clauses, whose questions ask to highlight them), a few sentences where it is a longer answer of its own.
"""

from longbench100.sources.answerability import answer_extractive, answer_grounded
from longbench100.sources.records import Item

from .base import SingleDocumentQuestions
from .long_document import LongDocumentTask

PHRASE_WORDS = 15  # the longest gold still asked for as "a single phrase"


def answer_form(answers: list[str], extractive: bool) -> str:
    """What the prompt asks for: ``phrase`` (every gold answer is short), ``quote`` (a longer answer copied from
    the document) or ``sentences`` (a longer answer in its own words)."""
    if max((len(answer.split()) for answer in answers), default=0) <= PHRASE_WORDS:
        return "phrase"
    return "quote" if extractive else "sentences"


class LongDocQa(SingleDocumentQuestions, LongDocumentTask):
    """Answer a question about the one long document in the prompt."""

    name = "long_doc_qa"
    closed_book = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._extractive: dict[
            str, bool
        ] = {}  # item id -> whether its answer occurs in its whole document

    def extractive(self, item: Item) -> bool:
        """Whether the item's answer occurs in its whole document (decided once per item)."""
        if item.id not in self._extractive:
            self._extractive[item.id] = answer_extractive(
                item.question or "", item.answers, [self.document(item).text]
            )
        return self._extractive[item.id]

    def variables(self, item: Item) -> dict:
        """The question, the closed-book switch off, and the form of answer the gold has."""
        return {
            **super().variables(item),
            "answer_form": answer_form(list(item.answers), self.extractive(item)),
        }

    def evidence_kept(self, item: Item, text: str) -> bool:
        """An extractive answer must occur in ``text``; another must have 70% of its content words there."""
        rule = answer_extractive if self.extractive(item) else answer_grounded
        return rule(item.question or "", item.answers, [text])
