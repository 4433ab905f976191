"""The task builders, one module each (the niah and icl families share one each); ``BUILDERS`` maps task names to their classes."""

from .attributing import Attributing
from .base import TaskBuilder
from .common_words import CommonWords
from .counting_stars import CountingStars
from .frequent_words import FrequentWords
from .icl import ICL_TASKS
from .json_kv import JsonKv
from .kv_retrieval import KvRetrieval
from .kv_retrieval_chain import KvRetrievalChain
from .long_doc_qa import LongDocQa
from .long_doc_sum import LongDocSum
from .multi_doc_qa import MultiDocQa
from .multi_doc_sum import MultiDocSum
from .niah import NIAH_TASKS
from .organizing import Organizing
from .passage_count import PassageCount
from .passage_retrieval import PassageRetrieval
from .qa_1 import Qa1
from .qa_2 import Qa2
from .rag_hard import RagHard
from .recalling import Recalling
from .rerank import Rerank
from .section_summarizing import SectionSummarizing
from .sections import DocumentOrganizing, DocumentSummarizing
from .single_doc_qa import SingleDocQa
from .single_doc_sum import SingleDocSum
from .variable_tracking import VariableTracking

_BUILDER_CLASSES: tuple[type[TaskBuilder], ...] = (
    KvRetrieval,
    CountingStars,
    PassageRetrieval,
    PassageCount,
    SingleDocQa,
    MultiDocQa,
    SingleDocSum,
    MultiDocSum,
    *NIAH_TASKS,
    JsonKv,
    VariableTracking,
    CommonWords,
    FrequentWords,
    Qa1,
    Qa2,
    KvRetrievalChain,
    RagHard,
    Rerank,
    *ICL_TASKS,
    LongDocQa,
    LongDocSum,
    Attributing,
    SectionSummarizing,
    Organizing,
    Recalling,
    DocumentSummarizing,
    DocumentOrganizing,
)
BUILDERS: dict[str, type[TaskBuilder]] = {builder.name: builder for builder in _BUILDER_CLASSES}
