"""long_doc_qa (HELMET's long-document QA: NarrativeQA, InfiniteBench QA): a question about one long document
that is the whole context, cut to fit (:mod:`.long_document`); items whose answer the cut would remove
are not used at that length."""

from longbench100.sources.answerability import answer_extractive, answer_grounded
from longbench100.sources.records import Item
from .base import SingleDocumentQuestions
from .long_document import LongDocumentTask


class LongDocQa(SingleDocumentQuestions, LongDocumentTask):
    """Answer a question about the one long document in the prompt."""

    name = "long_doc_qa"
    closed_book = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._extractive: dict[str, bool] = {}  # item id -> whether its answer occurs in its whole document

    def evidence_kept(self, item: Item, text: str) -> bool:
        """An extractive answer must occur in ``text``; another must have 70% of its content words there."""
        if item.id not in self._extractive:  # decided once per item, not at every step of the cut's search
            self._extractive[item.id] = answer_extractive(item.question or "", item.answers, [self.document(item).text])
        rule = answer_extractive if self._extractive[item.id] else answer_grounded
        return rule(item.question or "", item.answers, [text])
