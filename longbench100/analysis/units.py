"""Context units: sentences, lines, paragraphs or numbered passages, as character spans of a context.

Sentences come from the generator's segmenter: ``longbench100.generate.sentences.split_sentences``
when that module exists, else the sentence-end rule the generator's padding uses today
(``generate.packing``); both are looked up lazily so this module never pins one.
"""

from __future__ import annotations

import re
from typing import Callable

from ..errors import UserError

UNIT_KINDS = ("auto", "sentence", "line", "paragraph", "passage")
Span = tuple[int, int]


def _generator_splitter() -> Callable[[str], list[str]] | None:
    """The generator's public sentence splitter, when the generator has one."""
    try:
        from ..generate.sentences import split_sentences  # noqa: PLC0415 - optional until the segmenter lands
    except ImportError:
        return None
    return split_sentences


def sentence_spans(text: str) -> list[Span]:
    """Sentence spans of ``text`` (whitespace between sentences belongs to no span)."""
    splitter = _generator_splitter()
    if splitter is None:
        from ..generate.packing import _SENTENCE_END  # noqa: PLC0415 - the generator's current rule

        ends = [match.end() for match in _SENTENCE_END.finditer(text)] + [len(text)]
        return _trimmed_spans(text, [0] + ends)
    spans, position = [], 0
    for sentence in splitter(text):
        start = text.find(sentence, position)
        if start < 0:
            raise UserError(f"sentence segmenter returned text that is not in the context: {sentence[:40]!r}")
        spans.append((start, start + len(sentence)))
        position = start + len(sentence)
    return spans


def _trimmed_spans(text: str, cuts: list[int]) -> list[Span]:
    """Spans between consecutive cut points, without surrounding whitespace; empty ones dropped."""
    spans = []
    for start, end in zip(cuts, cuts[1:]):
        piece = text[start:end]
        left = len(piece) - len(piece.lstrip())
        right = len(piece.rstrip())
        if right > left:
            spans.append((start + left, start + right))
    return spans


def _separated_spans(text: str, separator: str) -> list[Span]:
    """Spans of the pieces of ``text`` between ``separator`` occurrences."""
    cuts = [0] + [match.end() for match in re.finditer(re.escape(separator), text)] + [len(text)]
    return _trimmed_spans(text, cuts)


def unit_spans(context: str, blocks: list[Span], kind: str) -> list[Span]:
    """The units of ``context``: ``blocks`` themselves for ``passage``, else split inside each block."""
    if kind == "passage":
        return list(blocks)
    splitters = {
        "sentence": sentence_spans,
        "line": lambda text: _separated_spans(text, "\n"),
        "paragraph": lambda text: _separated_spans(text, "\n\n"),
    }
    if kind not in splitters:
        raise UserError(f"--units {kind}: choose from {', '.join(UNIT_KINDS)}")
    units = []
    for start, end in blocks:
        units += [(start + a, start + b) for a, b in splitters[kind](context[start:end])]
    return units


def covered_units(units: list[Span], gold: list[Span]) -> Span | None:
    """The unit range ``[first, last + 1)`` holding every unit that overlaps a gold span; None without gold."""
    hit = [index for index, (start, end) in enumerate(units) if any(start < b and a < end for a, b in gold)]
    return (hit[0], hit[-1] + 1) if hit else None
