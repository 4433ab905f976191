"""qa_2 (RULER qa_2): a HotpotQA question with its ten paragraphs among paragraphs of HotpotQA (:mod:`.ruler_qa`)."""

from .ruler_qa import RulerQa


class Qa2(RulerQa):
    """HotpotQA: the question's ten paragraphs (two supporting, eight distracting), then random HotpotQA paragraphs."""

    name = "qa_2"
