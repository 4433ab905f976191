"""What every component needs to know about each task: type, metric family, closed-book use.

The construction logic of each task lives in its own builder module; this table is the shared,
read-only description that the predictor, the scorer and the report rely on.
"""

from dataclasses import dataclass

from longbench100.core.errors import UserError


@dataclass(frozen=True)
class TaskInfo:
    """Static facts about one task."""

    name: str
    task_type: str  # "key_retrieval" | "information_retrieval" | "comprehension" | "summarization" | "synthetic_recall"
    metric: (
        str  # "accuracy" | "qa_judge" | "summary_judge" | "string_match_all" | "substring_match"
    )
    closed_book: bool  # QA tasks also get a closed-book prompt for the QA filter
    max_new_tokens: int  # a sensible default answer length for prediction
    reserve_output: int = (
        0  # tokens of each length kept free for the answer unless --reserve-output is given
    )
    also: tuple[
        str, ...
    ] = ()  # secondary metrics graded next to ``metric`` and reported beside it, never in LongScore

    @property
    def judged_by_section(self) -> bool:
        """Whether a judge grades the answer section by section against the record's section texts."""
        return self.metric == "section_judge"


NIAH_TASKS = (
    "niah_single_1",
    "niah_single_2",
    "niah_single_3",
    "niah_multikey_1",
    "niah_multikey_2",
    "niah_multikey_3",
    "niah_multivalue",
    "niah_multiquery",
)
"""RULER's needle-in-a-haystack tasks, in RULER's order (docs/suites.md)."""

TASKS: dict[str, TaskInfo] = {
    info.name: info
    for info in (
        TaskInfo("kv_retrieval", "key_retrieval", "accuracy", False, 64),
        TaskInfo("counting_stars", "key_retrieval", "accuracy", False, 32),
        TaskInfo("passage_retrieval", "information_retrieval", "accuracy", False, 32),
        TaskInfo("passage_count", "information_retrieval", "accuracy", False, 32),
        TaskInfo("single_doc_qa", "comprehension", "qa_judge", True, 128),
        TaskInfo("multi_doc_qa", "comprehension", "qa_judge", True, 128),
        TaskInfo("single_doc_sum", "summarization", "summary_judge", False, 512),
        TaskInfo("multi_doc_sum", "summarization", "summary_judge", False, 512),
        # RULER / HELMET synthetic recall (docs/suites.md); RULER keeps 128 tokens free for a niah answer
        *(
            TaskInfo(name, "synthetic_recall", "string_match_all", False, 128, 128)
            for name in NIAH_TASKS
        ),
        TaskInfo("json_kv", "synthetic_recall", "substring_match", False, 128, 128),
        # RULER's other synthetic tasks; each keeps its answer length free (RULER: vt 30, cwe 120, fwe 50 tokens)
        TaskInfo("variable_tracking", "synthetic_recall", "string_match_all", False, 30, 30),
        TaskInfo("common_words", "synthetic_recall", "string_match_all", False, 120, 120),
        TaskInfo("frequent_words", "synthetic_recall", "string_match_all", False, 50, 50),
        # RULER's QA tasks (tasks/ruler_qa.py): string_match_part, 32 tokens of answer kept free as RULER
        *(
            TaskInfo(name, "retrieval_augmented", "string_match_part", False, 32, 32)
            for name in ("qa_1", "qa_2")
        ),
        # HELMET retrieval tasks: RAG with hard negatives, passage re-ranking; each keeps its answer room free
        TaskInfo(
            "rag_hard", "retrieval_augmented", "substring_match", False, 32, 32, also=("qa_f1",)
        ),
        TaskInfo("rerank", "reranking", "ndcg_at_10", False, 200, 200),
        # HELMET in-context learning with label mapping (tasks/icl.py); HELMET generates 20 tokens, kept free
        *(
            TaskInfo(name, "in_context_learning", "label_match", False, 20, 20)
            for name in ("icl_trec_coarse", "icl_trec_fine", "icl_banking77", "icl_clinc150")
        ),
        # HELMET long-document QA and summaries: one document fills the context, cut to fit (tasks/long_document.py);
        # HELMET generates up to 100 (QA) and 1,200 (InfiniteBench summaries) tokens; the room is kept free
        TaskInfo("long_doc_qa", "comprehension", "qa_judge", True, 128, 128),
        TaskInfo("long_doc_sum", "summarization", "summary_judge", False, 1024, 1024),
        # ETHIC attribution (issue 12; docs/suites.md): list the passages a target draws on, F1 over passage numbers
        TaskInfo("attributing", "information_retrieval", "id_f1", False, 128, 128),
        # ETHIC one-document tasks (tasks/one_document.py); each record keeps its own answer room (gold.answer_tokens)
        TaskInfo(
            "section_summarizing",
            "summarization",
            "section_judge",
            False,
            4096,
            also=("rep_2", "repeated_bigram_share"),
        ),
        TaskInfo("organizing", "comprehension", "order_lcs", False, 1024, also=("order_exact",)),
        TaskInfo(
            "recalling",
            "synthetic_recall",
            "name_set_f1",
            False,
            1024,
            also=("rep_2", "repeated_bigram_share"),
        ),
        # the same section tasks over unrelated whole documents, by construction (tasks/sections.py; not ETHIC's)
        TaskInfo(
            "document_summarizing",
            "summarization",
            "section_rouge",
            False,
            4096,
            also=("rep_2", "repeated_bigram_share"),
        ),
        TaskInfo(
            "document_organizing", "comprehension", "order_lcs", False, 1024, also=("order_exact",)
        ),
        # kv_retrieval's multi-hop variant (three lookups along a chain among decoy chains): no suite
        TaskInfo("kv_retrieval_chain", "key_retrieval", "accuracy", False, 64),
    )
}


def reserved_output(task: str, option: int) -> int:
    """Tokens of each length kept free for ``task``'s answer: ``--reserve-output`` when given (> 0), else the task's own."""
    return option or TASKS[task].reserve_output


def answer_room(task: str, record_answer_tokens: int | None, override: int | None = None) -> int:
    """Tokens a model may generate for one record: ``override`` (``--max-new-tokens``) when given, else
    the record's own ``gold.answer_tokens``, else the task's default."""
    return override or record_answer_tokens or TASKS[task].max_new_tokens


def parse_task_list(text: str) -> list[str]:
    """Parse ``all`` or a comma-separated list of task names, in the canonical task order."""
    if text.strip() == "all":
        return list(TASKS)
    names = [name.strip() for name in text.split(",") if name.strip()]
    if "all" in names:
        raise UserError(
            f"--tasks {text}: 'all' stands alone (it means every task); name tasks without it"
        )
    unknown = [name for name in names if name not in TASKS]
    if unknown or not names:
        raise UserError(
            f"unknown task {', '.join(unknown) or repr(text)}: choose from all, {', '.join(TASKS)}"
        )
    return [name for name in TASKS if name in names]
