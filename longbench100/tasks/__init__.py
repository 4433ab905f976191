"""The task builders, one module each (the niah and icl families share one each).

``BUILDERS`` maps task names to their classes and imports a task's module only when the task is
first looked up, so a run of one task never loads what the others use (scikit-learn for
passage_retrieval, for instance). :data:`TASK_MODULES` says which module defines each task; a test
checks it against the classes the modules define.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from longbench100.catalog.task_info import NIAH_TASKS

from .base import TaskBuilder, registered_builder

_FAMILIES = {
    "niah": NIAH_TASKS,
    "icl": ("icl_trec_coarse", "icl_trec_fine", "icl_banking77", "icl_clinc150"),
    "sections": ("document_summarizing", "document_organizing"),
}
_ORDER = (
    "kv_retrieval",
    "counting_stars",
    "passage_retrieval",
    "passage_count",
    "single_doc_qa",
    "multi_doc_qa",
    "single_doc_sum",
    "multi_doc_sum",
    "niah",
    "json_kv",
    "variable_tracking",
    "common_words",
    "frequent_words",
    "qa_1",
    "qa_2",
    "kv_retrieval_chain",
    "rag_hard",
    "rerank",
    "icl",
    "long_doc_qa",
    "long_doc_sum",
    "attributing",
    "section_summarizing",
    "organizing",
    "recalling",
    "sections",
)
TASK_MODULES: dict[str, str] = {
    task: module for module in _ORDER for task in _FAMILIES.get(module, (module,))
}
"""Every task's name -> the module of this package that defines its builder, in the order tasks are
listed."""


class _LazyBuilders(Mapping[str, type[TaskBuilder]]):
    """Task name -> builder class, importing the task's module on first look-up."""

    def __getitem__(self, task: str) -> type[TaskBuilder]:
        importlib.import_module(f"{__name__}.{TASK_MODULES[task]}")
        return registered_builder(task)

    def __iter__(self) -> Iterator[str]:
        return iter(TASK_MODULES)

    def __len__(self) -> int:
        return len(TASK_MODULES)


BUILDERS: Mapping[str, type[TaskBuilder]] = _LazyBuilders()
"""Task name -> builder class (the task's module is imported when the task is first looked up)."""
