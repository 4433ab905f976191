"""Choosing padding: whole documents by first fit over a shuffled pool, then one cut-off filler.

The filler is the opening part of one more pool document, cut at a sentence end (see
:mod:`.sentences`) so that the padding closes the remaining gap as tightly as the text allows. A
filler is at least one whole sentence of ``MIN_FILLER_CHARS`` characters or more, or there is none.
"""

from __future__ import annotations

import itertools
import random
from typing import Callable, Iterable, Sequence

from longbench100.fitting.kept_filler_cuts import known_cut
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import random_order
from longbench100.sources.near_duplicates import near_copy_of_any
from longbench100.sources.records import Document
from longbench100.text.sentences import MIN_FILLER_CHARS, sentence_ends_from_last
from longbench100.text.tokenization import Tokenizer

FILLER_CANDIDATES = 4

Packer = Callable[
    [Sequence[Document], random.Random, int, int, Callable[[Document], bool]],
    list[tuple[Document, int]],
]
"""Chooses a prompt's whole padding documents: ``(pool, rng, room, per_passage, excluded)`` to
``(document, copies)`` pairs (:func:`first_fit` is the default)."""


def first_fit(
    pool: Sequence[Document],
    rng: random.Random,
    room: int,
    per_passage: int,
    excluded: Callable[[Document], bool],
) -> list[tuple[Document, int]]:
    """Pick whole documents in a random order, each once and only if it still fits in ``room``
    tokens.

    Each pick costs its tokens plus ``per_passage`` (the passage heading and separators). Returns
    ``(document, 1)`` pairs (a :data:`Packer`).
    """
    if not pool:
        return []
    smallest = min(document.tokens for document in pool) + per_passage
    chosen: list[tuple[Document, int]] = []
    for index in random_order(rng, len(pool)):
        if room < smallest:
            break
        document = pool[index]
        cost = document.tokens + per_passage
        if cost > room or excluded(document):
            continue
        chosen.append((document, 1))
        room -= cost
    return chosen


def cut_prefix(tokenizer: Tokenizer, text: str, max_tokens: int) -> tuple[str, int] | None:
    """The longest opening of ``text`` that ends at a sentence end and has at most ``max_tokens`` tokens.

    The whole text counts as an opening too when it fits; an opening shorter than ``MIN_FILLER_CHARS``
    characters is never returned.
    """
    if max_tokens <= 0:
        return None
    width = min(len(text), max_tokens * 8)
    opening = tokenizer.opening_length(text, width, max_tokens)  # the first max_tokens tokens
    return longest_opening_at_an_end(
        text,
        width,
        opening,
        max_tokens,
        lambda prefix: tokenizer.count_known(prefix, [(text, len(prefix))]),
    )


def document_cut(
    tokenizer: Tokenizer, document: Document, max_tokens: int
) -> tuple[str, int] | None:
    """:func:`cut_prefix` of ``document``'s text, known where the run (or the run before it, see
    :mod:`.kept_filler_cuts`) cut it within ``max_tokens`` already."""
    return known_cut(
        tokenizer,
        document,
        max_tokens,
        lambda: cut_prefix(tokenizer, document.text, max_tokens),
    )


def longest_opening_at_an_end(
    text: str, width: int, opening: int | None, max_tokens: int, count: Callable[[str], int]
) -> tuple[str, int] | None:
    """:func:`cut_prefix`'s choice, given where the first ``max_tokens`` tokens of ``text[:width]``
    end (``opening``; ``None`` when it holds no more) and ``count``, which counts an opening of
    ``text``: the last sentence end before that whose opening fits."""
    fits = opening is None
    ends = sentence_ends_from_last(text, width if opening is None else opening)
    if width == len(text) and fits:  # the whole text first, then its sentence ends before its end
        ends = itertools.chain([len(text)], (end for end in ends if end != len(text)))
    for end in ends:
        prefix = text[:end].rstrip()
        if len(prefix) < MIN_FILLER_CHARS:
            return None
        tokens = count(prefix)
        if tokens <= max_tokens:
            return prefix, tokens
    return None


def choose_filler(
    tokenizer: Tokenizer,
    pool: Sequence[Document],
    rng: random.Random,
    max_tokens: int,
    excluded: Callable[[Document], bool],
    good_enough: int,
    placed: Sequence[Piece] = (),
) -> Piece | None:
    """The best cut-off opening among a few random unused pool documents, or ``None`` when none fits.

    The choice is the longest cut, the first of equals, that repeats no passage already ``placed``
    (:func:`repeats_placed_passage`), among the cuts of the first ``FILLER_CANDIDATES`` documents tried;
    unless such a cut wasting at most ``good_enough`` tokens of ``max_tokens`` comes first, which is taken
    as it comes. A cut is checked for repeats only when it could be the choice: a good-enough one as it
    comes, the others at the end, longest first, up to the first that repeats nothing.
    """
    cuts: list[tuple[tuple[str, int], Document]] = []
    tried = 0
    for index in random_order(rng, len(pool)):
        document = pool[index]
        if excluded(document):
            continue
        cut = document_cut(tokenizer, document, max_tokens)
        tried += 1
        if cut is not None:
            if max_tokens - cut[1] > good_enough:
                cuts.append((cut, document))
            elif _may_place(
                cut, document, placed
            ):  # longer than every placeable cut before it: the best
                return _padding_piece(cut, document)
        if tried >= FILLER_CANDIDATES:
            break
    for cut, document in sorted(
        cuts, key=lambda found: -found[0][1]
    ):  # (a stable sort: equals stay in order)
        if _may_place(cut, document, placed):
            return _padding_piece(cut, document)
    return None


def _may_place(cut: tuple[str, int], document: Document, placed: Sequence[Piece]) -> bool:
    """Whether a cut of ``document`` (its text and tokens) may pad a prompt beside ``placed``: it is the whole
    document, or it repeats no placed passage."""
    return cut[0] == document.text or not repeats_placed_passage(cut[0], document, placed)


def _padding_piece(cut: tuple[str, int], document: Document) -> Piece:
    """The padding piece a cut makes: a filler, or a distractor when the cut is the whole document."""
    return Piece("filler" if cut[0] != document.text else "distractor", cut[0], cut[1], document)


def repeats_placed_passage(opening: str, document: Document, placed: Iterable[Piece]) -> bool:
    """Whether ``opening``, cut from ``document``, near-copies a placed passage from the same source
    (:func:`near_copy_of_any`): shared text is a source's own (its legal legend, the pages of one website)."""
    return near_copy_of_any(
        opening,
        (
            piece.text
            for piece in placed
            if piece.doc is not None
            and piece.doc.source == document.source
            and piece.doc is not document
        ),
    )
