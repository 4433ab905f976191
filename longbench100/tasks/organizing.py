"""organizing (ETHIC organizing): put the shuffled summaries of one document's sections back in order.

The sections are the document's consecutive chunks (:mod:`.one_document`); after them come the
annotator's summaries of those chunks, shuffled and labelled A, B, C, ... The answer is the labels in
the order of the sections, scored by LCS over the number of sections (ETHIC's rule).
"""

from __future__ import annotations

from longbench100.fitting.fit import BuildContext

from .one_document import Chunk, ChunkSections
from .sections import labelled_summaries, order_outcome, shuffled_order


class Organizing(ChunkSections):
    """Order the shuffled section summaries of one document."""

    name = "organizing"
    answer_fixed = 32
    answer_per_section = 6  # a label (one to two letters) and " > "

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._summary_tokens: dict[str, int] = {}

    def per_chunk_extra(self, chunk: Chunk, ctx: BuildContext) -> int:
        """The chunk's summary, which the prompt shows too, and its label."""
        if chunk.text not in self._summary_tokens:
            self._summary_tokens[chunk.text] = ctx.tokenizer.count(
                self.need_annotations().summary(chunk.text)
            )
        return self._summary_tokens[chunk.text] + 4

    def summaries(self, chunks: list[Chunk]) -> list[str]:
        """The annotator's summary of each chunk, in section order."""
        return [self.need_annotations().summary(chunk.text) for chunk in chunks] if chunks else []

    def variables(self, chunks: list[Chunk], seed: int) -> dict:
        """The summaries as shown: labelled A, B, ... in the shuffled order."""
        return {
            "summaries": labelled_summaries(
                self.summaries(chunks), shuffled_order(len(chunks), seed)
            )
        }

    def context_texts(self, chunks: list[Chunk], seed: int) -> list[str]:
        """The sections, then the summaries as shown."""
        summaries = self.summaries(chunks)
        return super().context_texts(chunks, seed) + [
            summaries[index] for index in shuffled_order(len(chunks), seed)
        ]

    def outcome(self, chunks: list[Chunk], seed: int) -> tuple[list[str], str, dict]:
        """The labels in section order, joined as the prompt asks; gold ``order`` holds them as a list."""
        return order_outcome(shuffled_order(len(chunks), seed))
