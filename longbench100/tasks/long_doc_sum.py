"""long_doc_sum (HELMET's long-document summaries: InfiniteBench Sum, Multi-LexSum): summarise one long
document that is the whole context, cut to fit (:mod:`.long_document`). As in HELMET, the reference
summarises the whole document even where the prompt holds only its opening."""

from longbench100.sources.records import Item

from .long_document import LongDocumentTask
from .summary_requests import specific_request


class LongDocSum(LongDocumentTask):
    """Summarise the one long document in the prompt."""

    name = "long_doc_sum"

    def accepts(self, item: Item) -> bool:
        """Generic summaries of exactly one document (not query-focused ones)."""
        return (
            item.kind == "summary"
            and len(item.doc_ids) == 1
            and not specific_request(item)
            and bool((item.summary or "").strip())
        )

    def question(self, item: Item) -> str | None:
        """The instruction recorded with the sample."""
        return "Summarise the document."
