"""Metrics that grade one answer against its whole data record (gold object included), by name.

A task whose metric needs more than the answer list (relevance grades, section references, passage
ids) registers a function here; ``grading.grade_jobs`` calls it for every job with that metric. Each
function returns a 0-1 score.
"""

from collections.abc import Callable

from longbench100.folders.data_records import DataRecord
from longbench100.scoring.metrics.degeneration import rep_2, repeated_bigram_share
from longbench100.scoring.metrics.label_match import label_match
from longbench100.scoring.metrics.ranking import ndcg_at_10, ndcg_at_10_lenient
from longbench100.scoring.metrics.name_sets import name_set_f1
from longbench100.scoring.metrics.passage_ids import id_f1
from longbench100.scoring.metrics.sections import order_exact, order_lcs, section_rouge

RecordMetric = Callable[[str, DataRecord], float]

RECORD_METRICS: dict[str, RecordMetric] = {
    "label_match": label_match,
    "ndcg_at_10": ndcg_at_10,
    "ndcg_at_10_lenient": ndcg_at_10_lenient,
    "id_f1": id_f1,
    "section_rouge": section_rouge,
    "order_lcs": order_lcs,
    "order_exact": order_exact,
    "name_set_f1": name_set_f1,
    "rep_2": rep_2,
    "repeated_bigram_share": repeated_bigram_share,
}
