"""The metric table: every metric a task or a suite can name, with its kind and how it is graded.

A metric's kind says which machinery grades it (``grading.grade_jobs``):

- ``classic``: a function of the reply and its data record (gold answers, relevance grades, section
  references, passage ids), no judge;
- ``rouge``: ROUGE-L against the gold answers, graded for all replies in one batch, in the run's
  ``--rouge-variant``;
- ``judge``: the LLM judge grades the whole reply under the metric's rubric
  (:data:`longbench100.judge.prompts.RUBRICS`);
- ``judge_by_section``: the judge grades the reply's summary of each section of the record on its
  own (:func:`longbench100.judge.prompts.section_prompt`) and the sample scores their mean.

A judge family that a task names (``qa_judge``, ``summary_judge``, ``section_judge``) also has its
``fallback``: the classic metric that grades it when no judge is used. An ``exact_answer`` metric
checks the reply for the planted gold answers themselves (right-or-wrong recall, not judged prose):
the report draws its tasks as needle-in-a-haystack heatmaps. Every score is 0-1.
"""

from collections.abc import Callable
from dataclasses import dataclass

from longbench100.catalog.judge_styles import QA_HELMET, SUMMARY_HELMET
from longbench100.folders.data_records import DataRecord
from longbench100.judge.prompts import SECTION_JUDGE
from longbench100.scoring.metrics.classic import qa_f1
from longbench100.scoring.metrics.degeneration import rep_2, repeated_bigram_share
from longbench100.scoring.metrics.label_match import label_match
from longbench100.scoring.metrics.name_sets import name_set_f1
from longbench100.scoring.metrics.parsers import (
    accuracy,
    string_match_all,
    string_match_part,
    substring_match,
)
from longbench100.scoring.metrics.passage_ids import id_f1
from longbench100.scoring.metrics.ranking import ndcg_at_10, ndcg_at_10_lenient
from longbench100.scoring.metrics.sections import order_exact, order_lcs, section_rouge

CLASSIC = "classic"
ROUGE = "rouge"
JUDGE = "judge"
JUDGE_BY_SECTION = "judge_by_section"

RecordMetric = Callable[[str, DataRecord], float]
"""A classic metric: the 0-1 score of a reply against its data record."""


@dataclass(frozen=True)
class Metric:
    """One row of the table: the metric's kind, its function (``classic`` metrics), for a judge
    family the classic metric that grades it without a judge, and whether it checks exact
    answers."""

    kind: str
    grade: RecordMetric | None = None
    fallback: str | None = None
    exact_answer: bool = False

    @property
    def judged(self) -> bool:
        """Whether grading this metric needs the LLM judge."""
        return self.kind in (JUDGE, JUDGE_BY_SECTION)

    def score(self, reply: str, record: DataRecord) -> float:
        """A classic metric's score of ``reply`` against ``record``."""
        if self.grade is None:
            raise ValueError(f"a {self.kind} metric is not graded one reply at a time")
        return self.grade(reply, record)


def _against_answers(metric: Callable[[str, list[str]], float]) -> RecordMetric:
    """A metric of the reply and the gold answers, as a :data:`RecordMetric`."""
    return lambda reply, record: metric(reply, list(record.answers))


def _choice_accuracy(reply: str, record: DataRecord) -> float:
    """Exact-answer accuracy, reading the reply against the record's options when it has some."""
    options = list(record.options) if record.options else None
    return accuracy(record.task, reply, list(record.answers), options)


METRICS: dict[str, Metric] = {
    "accuracy": Metric(CLASSIC, _choice_accuracy, exact_answer=True),
    "string_match_all": Metric(CLASSIC, _against_answers(string_match_all), exact_answer=True),
    "string_match_part": Metric(CLASSIC, _against_answers(string_match_part)),
    "substring_match": Metric(CLASSIC, _against_answers(substring_match)),
    "qa_f1": Metric(CLASSIC, _against_answers(qa_f1)),
    "rouge_l": Metric(ROUGE),
    "label_match": Metric(CLASSIC, label_match),
    "ndcg_at_10": Metric(CLASSIC, ndcg_at_10),
    "ndcg_at_10_lenient": Metric(CLASSIC, ndcg_at_10_lenient),
    "id_f1": Metric(CLASSIC, id_f1),
    "section_rouge": Metric(CLASSIC, section_rouge),
    "order_lcs": Metric(CLASSIC, order_lcs),
    "order_exact": Metric(CLASSIC, order_exact),
    "name_set_f1": Metric(CLASSIC, name_set_f1),
    "rep_2": Metric(CLASSIC, rep_2),
    "repeated_bigram_share": Metric(CLASSIC, repeated_bigram_share),
    "qa_judge": Metric(JUDGE, fallback="qa_f1"),
    "summary_judge": Metric(JUDGE, fallback="rouge_l"),
    QA_HELMET: Metric(JUDGE),
    SUMMARY_HELMET: Metric(JUDGE),
    SECTION_JUDGE: Metric(JUDGE_BY_SECTION, fallback="section_rouge"),
}
"""Every metric by name."""


def metric_info(name: str) -> Metric:
    """The table's row of the metric ``name``; an unknown name is a ``ValueError`` (a mistake in the
    code's tables, never in a user's input: suites and options are checked before)."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}")
    return METRICS[name]
