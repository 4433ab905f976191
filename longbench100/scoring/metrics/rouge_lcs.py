"""LongBench's ROUGE-L (the ``rouge`` package's summary-level ROUGE-L F), exactly, without its Python DP.

The ``rouge`` package (``Rouge().get_scores(pred, ref, avg=True)["rouge-l"]["f"]``, what LongBench
calls) splits both texts into sentences at ``.``, squeezes whitespace, and for every reference
sentence and every prediction sentence rebuilds one longest common subsequence of words from a
dictionary-backed DP table and a recursive walk. The score counts the distinct words of the union of
those rebuilt subsequences. Which words a rebuilt subsequence holds depends on the walk's tie rule, so
this module keeps the same walk and only computes the table differently: bit-parallel LCS rows
(Hyyro's algorithm on Python integers, one word per bit), from which any cell is a masked popcount.

Exact semantics kept: sentences are the non-empty pieces of ``text.split(".")`` with whitespace runs
squeezed (a piece of blanks becomes an empty sentence whose one "word" is the empty string); words
are ``sentence.split(" ")``; word counts are distinct words; an empty side raises in the library and
scores 0. The library walks recursively, so a sentence pair whose walk is deeper than
:data:`SAFE_WALK` steps may hit Python's recursion limit there (LongBench then scores 0): such pairs
are handed to the library itself so that the result is the library's, whatever it is.
"""

from __future__ import annotations

SAFE_WALK = 400
"""Longest walk (steps of the rebuilt LCS) computed here; a longer one is left to the library."""


class NeedsLibrary(Exception):
    """A sentence pair's walk is too deep to be sure the library would not fail on it."""


def sentences(text: str) -> list[str]:
    """The ``rouge`` package's sentences: non-empty pieces between dots, whitespace runs squeezed."""
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def _positions(words: list[str]) -> dict[str, int]:
    """For each word, a bit mask of the positions where it occurs."""
    masks: dict[str, int] = {}
    for index, word in enumerate(words):
        masks[word] = masks.get(word, 0) | (1 << index)
    return masks


def rebuilt_lcs_words(
    reference: list[str], prediction: list[str], prediction_masks: dict[str, int]
) -> set[str]:
    """The words of the LCS of ``reference`` and ``prediction`` that the ``rouge`` package rebuilds.

    Row i of the DP table is kept as a bit vector V_i: cell (i, j) = j - popcount(V_i & (2^j - 1)).
    The walk from (n, m): a match steps diagonally and keeps the word; else it steps up when the cell
    above is strictly larger than the cell to the left, otherwise left (the library's order).
    """
    width = len(prediction)
    full = (1 << width) - 1
    rows = [full]
    vector = full
    for word in reference:
        matches = vector & prediction_masks.get(word, 0)
        vector = ((vector + matches) | (vector - matches)) & full
        rows.append(vector)
    if width - (rows[-1]).bit_count() == 0:
        return set()

    def cell(i: int, j: int) -> int:
        return j - (rows[i] & ((1 << j) - 1)).bit_count()

    kept: set[str] = set()
    i, j, steps = len(reference), width, 0
    while i > 0 and j > 0:
        steps += 1
        if steps > SAFE_WALK:
            raise NeedsLibrary
        if reference[i - 1] == prediction[j - 1]:
            kept.add(reference[i - 1])
            i, j = i - 1, j - 1
        elif cell(i - 1, j) > cell(i, j - 1):
            i -= 1
        else:
            j -= 1
    return kept


def longbench_rouge_l_f(prediction: str, reference: str) -> float:
    """The ``rouge`` package's summary-level ROUGE-L F of one pair; raises :class:`NeedsLibrary` for a pair
    it cannot be sure to score as the library does, and ``ValueError`` where the library raises."""
    predicted, referenced = sentences(prediction), sentences(reference)
    if not predicted or not referenced:
        raise ValueError("Collections must contain at least 1 sentence.")
    predicted_words = [sentence.split(" ") for sentence in predicted]
    reference_words = [sentence.split(" ") for sentence in referenced]
    masks = [_positions(words) for words in predicted_words]
    union: set[str] = set()
    for words in reference_words:
        for candidate, candidate_masks in zip(predicted_words, masks):
            union |= rebuilt_lcs_words(words, candidate, candidate_masks)
    m = len({word for words in reference_words for word in words})
    n = len({word for words in predicted_words for word in words})
    recall, precision = len(union) / m, len(union) / n
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))
