"""single_doc_qa: a question about one passage, hidden among distractors; the instruction names that passage."""

from .base import GoldAmongDistractors, SingleDocumentQuestions


class SingleDocQa(SingleDocumentQuestions, GoldAmongDistractors):
    """Ground truth: single-document QA items (sources 1-8); distractors: documents of sources 1-8."""

    name = "single_doc_qa"
    closed_book = True
