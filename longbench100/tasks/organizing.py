"""organizing (ETHIC organizing): put the shuffled summaries of one document's sections back in order.

The sections are the document's consecutive chunks (:mod:`.one_document`); after them come the
annotator's summaries of those chunks, shuffled and labelled A, B, C, ... The answer is the labels in
the order of the sections, scored by LCS over the number of sections (ETHIC's rule).
"""

from __future__ import annotations

import random

from ..generate.fitting import BuildContext
from .one_document import Chunk, ChunkSections
from .sections import section_labels


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
            self._summary_tokens[chunk.text] = ctx.tokenizer.count(self.need_annotations().summary(chunk.text))
        return self._summary_tokens[chunk.text] + 4

    @staticmethod
    def arrangement(count: int, seed: int) -> list[int]:
        """The sections' indices in the order their summaries are shown: a shuffle drawn from ``seed``."""
        shown = list(range(count))
        random.Random(seed).shuffle(shown)
        return shown

    def shown_summaries(self, chunks: list[Chunk], seed: int) -> list[tuple[str, int]]:
        """(label, section index) of each summary as shown."""
        return list(zip(section_labels(len(chunks)), self.arrangement(len(chunks), seed)))

    def variables(self, chunks: list[Chunk], seed: int) -> dict:
        """The summaries as shown: labelled A, B, ... in the shuffled order."""
        annotations = self.need_annotations() if chunks else None
        return {"summaries": [{"label": label, "text": annotations.summary(chunks[index].text)}
                              for label, index in self.shown_summaries(chunks, seed)]}

    def context_texts(self, chunks: list[Chunk], seed: int) -> list[str]:
        """The sections, then the summaries as shown."""
        annotations = self.need_annotations()
        return super().context_texts(chunks, seed) + [annotations.summary(chunks[index].text) for _, index in self.shown_summaries(chunks, seed)]

    def outcome(self, chunks: list[Chunk], seed: int) -> tuple[list[str], str, dict]:
        """The labels in section order, joined as the prompt asks; gold ``order`` holds them as a list."""
        label_of = {index: label for label, index in self.shown_summaries(chunks, seed)}
        order = [label_of[index] for index in range(len(chunks))]
        question = f"Give the labels of the {len(chunks)} summaries in the order of the sections they summarise."
        return [" > ".join(order)], question, {"order": order}
