"""Exact token counts of a counted text after a few of its stretches are replaced.

A control twin is a stored prompt whose token count is known, with a few stretches replaced (the
gold's room refilled, or everything around another row's context swapped in). Counting the twin
whole costs a pass over all of it; for the encodings of :mod:`.segment_count` only the text around
each replacement needs counting. A pre-token boundary of the known text (a
:data:`~.segment_count.CUT` place, or a place where :func:`~.spliced_count.opens_after_newline`
holds) depends only on the character before it and the two after it, so one whose three characters
no replacement touches is a boundary of the edited text too. Between such boundaries the count of
each text is the sum of its parts', so the edited count is the known count, less the count of each
touched stretch between its nearest untouched boundaries, plus the count of what replaces it there.

Tokenizers without that proof (``counting`` other than ``segments``) get ``None``: count whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from longbench100.text.segment_count import CUT, NEWLINE_BOUNDARY
from longbench100.text.tokenization import Tokenizer

BOUNDARY_WINDOW = 512  # characters searched back for a boundary first

Edit = tuple[int, int, str]
"""``(start, end, text)``: ``text`` takes the place of the known text's characters ``start:end``."""


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with each of ``edits`` (in order, not overlapping) made."""
    pieces, position = [], 0
    for start, end, new in edits:
        pieces += [text[position:start], new]
        position = end
    return "".join(pieces) + text[position:]


def count_edited(tokenizer: Tokenizer, text: str, tokens: int, edits: Sequence[Edit]) -> int | None:
    """The exact token count of ``apply_edits(text, edits)``, given ``tokens``, the exact count of
    ``text`` by ``tokenizer``; ``None`` when the tokenizer does not count by segments (its pieces
    may then depend on text far away)."""
    if tokenizer.counting != "segments":
        return None
    changes = [edit for edit in edits if text[edit[0] : edit[1]] != edit[2]]
    total = tokens
    for start, end, group in _touched_stretches(text, changes):
        local = [(a - start, b - start, new) for a, b, new in group]
        stretch = text[start:end]
        total += tokenizer.count(apply_edits(stretch, local)) - tokenizer.count(stretch)
    return total


def _boundary_before(text: str, limit: int) -> int:
    """The last boundary of ``text`` at or before ``limit`` (0 when there is none), searched in
    ever wider windows that end there."""
    width = BOUNDARY_WINDOW
    while True:
        start = max(0, limit - width)
        found = [
            *(match.start() + 1 for match in CUT.finditer(text, start, limit + 2)),
            *(match.end() for match in NEWLINE_BOUNDARY.finditer(text, start, limit + 1)),
        ]
        if found or start == 0:
            return max(found, default=0)
        width *= 4


def _boundary_after(text: str, limit: int) -> int:
    """The first boundary of ``text`` at or after ``limit`` (the text's end when there is none)."""
    cut = CUT.search(text, max(0, limit - 1))
    newline = NEWLINE_BOUNDARY.search(text, max(0, limit - 1))
    return min(
        cut.start() + 1 if cut else len(text),
        newline.end() if newline else len(text),
    )


def _touched_stretches(text: str, edits: Sequence[Edit]) -> list[tuple[int, int, list[Edit]]]:
    """The stretches between untouched boundaries (or the text's ends) that hold the edits, each
    with its edits: an edit's stretch runs from the last boundary at least two characters before it
    to the first at least one after it, and stretches that meet are joined."""
    stretches: list[tuple[int, int, list[Edit]]] = []
    for edit in edits:
        start, end, _ = edit
        left = _boundary_before(text, start - 2) if start >= 2 else 0
        right = _boundary_after(text, end + 1)
        if stretches and left < stretches[-1][1]:
            previous = stretches.pop()
            stretches.append((previous[0], max(right, previous[1]), [*previous[2], edit]))
        else:
            stretches.append((left, right, [edit]))
    return stretches
