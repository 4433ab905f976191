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
Known = tuple[int | None, int | None]
"""The token counts of an edit's replaced text and of its new text, each ``None`` where unknown."""


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with each of ``edits`` (in order, not overlapping) made."""
    pieces, position = [], 0
    for start, end, new in edits:
        pieces += [text[position:start], new]
        position = end
    return "".join(pieces) + text[position:]


def count_edited(
    tokenizer: Tokenizer,
    text: str,
    tokens: int,
    edits: Sequence[Edit],
    known: Sequence[Known] | None = None,
) -> int | None:
    """The exact token count of ``apply_edits(text, edits)``, given ``tokens``, the exact count of
    ``text`` by ``tokenizer``; ``None`` when the tokenizer does not count by segments (its pieces
    may then depend on text far away). ``known`` gives, edit by edit, the counts of the text it
    replaces and of its new text where they are known: a long one is then counted only near its
    ends (:func:`_count_around`)."""
    if tokenizer.counting != "segments":
        return None
    counted = zip(edits, known or [(None, None)] * len(edits), strict=True)
    changes = [(edit, counts) for edit, counts in counted if text[edit[0] : edit[1]] != edit[2]]
    total = tokens
    for start, end, group in _touched_stretches(text, changes):
        local = [(a - start, b - start, new) for (a, b, new), _ in group]
        stretch = text[start:end]
        old_known, new_known, shift = [], [], 0
        for (a, b, new), (_, (old_tokens, new_tokens)) in zip(local, group, strict=True):
            if old_tokens is not None:
                old_known.append((a, b, old_tokens))
            if new_tokens is not None:
                new_known.append((a + shift, a + shift + len(new), new_tokens))
            shift += len(new) - (b - a)
        total += _count_around(tokenizer, apply_edits(stretch, local), new_known)
        total -= _count_around(tokenizer, stretch, old_known)
    return total


def _count_around(tokenizer: Tokenizer, text: str, known: Sequence[tuple[int, int, int]]) -> int:
    """The exact token count of ``text``, whose stretches ``start:end`` of ``known`` (in order, not
    overlapping) hold the given counts: each is counted only up to its first boundary and from its
    last (boundaries strictly inside it are boundaries of ``text`` too), the rest whole."""
    total, position = 0, 0
    for start, end, tokens in known:
        first = _first_boundary(text, start + 1, end - 2)
        if first is None:
            continue
        last = max(first, _boundary_before(text, end - 2))
        inner = tokens - tokenizer.count(text[start:first]) - tokenizer.count(text[last:end])
        total += tokenizer.count(text[position:first]) + inner
        position = last
    return total + tokenizer.count(text[position:])


def _first_boundary(text: str, low: int, high: int) -> int | None:
    """The first boundary of ``text`` from ``low`` to ``high`` whose three characters lie from
    ``low - 1`` to ``high + 1``, or ``None``."""
    cut = CUT.search(text, low - 1, high + 2)
    newline = NEWLINE_BOUNDARY.search(text, low - 1, high + 1)
    found = [*([cut.start() + 1] if cut else []), *([newline.end()] if newline else [])]
    return min(found, default=None)


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


def _touched_stretches(
    text: str, edits: Sequence[tuple[Edit, Known]]
) -> list[tuple[int, int, list[tuple[Edit, Known]]]]:
    """The stretches between untouched boundaries (or the text's ends) that hold the edits, each
    with its edits (and their known counts): an edit's stretch runs from the last boundary at least
    two characters before it to the first at least one after it, and stretches that meet are
    joined."""
    stretches: list[tuple[int, int, list[tuple[Edit, Known]]]] = []
    for item in edits:
        start, end, _ = item[0]
        left = _boundary_before(text, start - 2) if start >= 2 else 0
        right = _boundary_after(text, end + 1)
        if stretches and left < stretches[-1][1]:
            previous = stretches.pop()
            stretches.append((previous[0], max(right, previous[1]), [*previous[2], item]))
        else:
            stretches.append((left, right, [item]))
    return stretches
