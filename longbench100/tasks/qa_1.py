"""qa_1 (RULER qa_1): a SQuAD question among paragraphs of SQuAD, its article's other paragraphs first (:mod:`.ruler_qa`)."""

from .ruler_qa import RulerQa


class Qa1(RulerQa):
    """SQuAD: the question's paragraph, its article's other paragraphs, then random SQuAD paragraphs."""

    name = "qa_1"
    same_article_first = True
