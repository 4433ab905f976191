"""The labels an annotator gave a run's chunks, as the one-document builders read them (no client code here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from longbench100.judge.annotation_rubric import SUMMARY


@dataclass
class Annotations:
    """The labels of the annotated chunks, by kind and chunk text, and what getting them cost."""

    labels: dict[tuple[str, str], dict] = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    unlabelled: frozenset[tuple[str, str]] = (
        frozenset()
    )  # asked, but no usable label came (``allow_unlabelled``)

    def summary(self, chunk: str) -> str:
        """The chunk's summary (:class:`UnlabelledChunk` for one left without a label; a ``KeyError`` names a chunk
        that was never asked for: a planning bug)."""
        return self._label(SUMMARY, chunk)["summary"]

    def mentions(self, kind: str, chunk: str) -> list[str]:
        """What the chunk names in annotation ``kind`` (one entity type), as the annotator wrote it (each found in the chunk)."""
        return self._label(kind, chunk)["mentions"]

    def _label(self, kind: str, chunk: str) -> dict:
        """The label of ``(kind, chunk)``, or :class:`UnlabelledChunk` when the annotator gave it none."""
        if (kind, chunk) in self.unlabelled:
            raise UnlabelledChunk(kind)
        return self.labels[kind, chunk]


class UnlabelledChunk(Exception):
    """A row needs the label of a chunk that the annotator gave none (run with ``--allow-unlabelled``): the row is
    left out, and counted."""
