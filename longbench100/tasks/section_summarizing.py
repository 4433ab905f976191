"""section_summarizing (ETHIC summarizing): summarise each section of one long document.

The sections are the document's consecutive chunks (:mod:`.one_document`). Graded reference-free by a
judge against each section's own text when one is given (``section_judge``: consistency, relevance and
faithfulness, 1-5, as ETHIC), else by ROUGE-L against the annotator's summary of that chunk
(``section_rouge``). Each section's answer room is what the instruction allows: five sentences.
"""

from __future__ import annotations

from longbench100.judge.annotation_rubric import SUMMARY_SENTENCES

from .one_document import Chunk, ChunkSections
from .sections import summary_outcome

SENTENCE_TOKENS = 40  # room for one sentence of a section summary


class SectionSummarizing(ChunkSections):
    """Summarise every section of one document, one line per section."""

    name = "section_summarizing"
    answer_fixed = 16
    answer_per_section = (
        8 + SUMMARY_SENTENCES * SENTENCE_TOKENS
    )  # "Section 12: " and five sentences

    def variables(self, chunks: list[Chunk], seed: int) -> dict:
        """The sentence limit per summary."""
        return {"sentences": SUMMARY_SENTENCES}

    def outcome(self, chunks: list[Chunk], seed: int) -> tuple[list[str], str, dict]:
        """The annotator's summaries in the asked format (the classic metric's references), the instruction."""
        references = [self.need_annotations().summary(chunk.text) for chunk in chunks]
        answers, question, _ = summary_outcome(references)
        return answers, question, {"references": references}
