"""Context units: sentences, lines, paragraphs or numbered passages, as character spans of a context.

Sentences come from the generator's own segmenter, ``longbench100.text.sentences.sentence_ends``,
so a sentence unit here is exactly what the generator treats as one.
"""

from __future__ import annotations

import re

from longbench100.core.errors import UserError

UNIT_KINDS = ("auto", "sentence", "line", "paragraph", "passage")
Span = tuple[int, int]


def sentence_spans(text: str) -> list[Span]:
    """Sentence spans of ``text``: cut at every sentence end the generator recognises (whitespace trimmed)."""
    from longbench100.text.sentences import sentence_ends  # here: `dolce --help` needs no segmenter

    return _trimmed_spans(text, [0] + sentence_ends(text) + [len(text)])


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
    hit = [
        index
        for index, (start, end) in enumerate(units)
        if any(start < b and a < end for a, b in gold)
    ]
    return (hit[0], hit[-1] + 1) if hit else None
