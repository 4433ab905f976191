"""TF-IDF cosine similarities without scikit-learn: its figures, worked out with numpy.

The lexical comparisons use scikit-learn's ``TfidfVectorizer`` with the settings of
``baselines/lexical.tfidf_vectorizer``: lower-cased words of two or more word characters
(:data:`TOKEN_PATTERN`), English stop words dropped before the runs of up to ``ngrams`` words are
formed, term frequency ``1 + ln(count)``, smoothed inverse document frequency
``ln((1 + documents) / (1 + documents holding the term)) + 1``, each vector scaled to unit length.
:class:`TfidfIndex` computes the same vectors the same way, with the same stop words, read from the
installed scikit-learn's own list without importing the package (its import costs about a second
of CPU). It adds the same products in another order, so a similarity may differ from
scikit-learn's in its last digits (a few parts in 1e16); a decision that compares similarities with
a threshold is the same in both wherever :func:`clear_of` holds, and is left to scikit-learn where
it does not.

Its own order of additions is fixed: each sum runs over a text's terms in the order they first
occur in it (a vector's length) or over the query's terms in that order (a dot product), one
addition at a time, so every figure is the one plain Python's loops give, to the last digit. The
terms of a text are found once per :class:`TermTable` (passage_retrieval meets a pool's documents
in prompt after prompt), numbered there, so an index is fitted from arrays of term numbers.
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import count, filterfalse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
"""A word: two or more word characters (scikit-learn's default pattern, the one we use)."""

CLOSE = 1e-9
"""How near (relative to a threshold) a similarity may come to it before the two arithmetics could
disagree about which side it lies on: they differ by far less (about 1e-15)."""

_ASCII_WORD_CHARACTERS = frozenset(
    character for character in map(chr, range(128)) if character.isalnum() or character == "_"
)
"""The ASCII characters :data:`TOKEN_PATTERN`'s ``\\w`` matches."""

_ASCII_OTHERS_TO_SPACE = bytes(
    byte if byte >= 128 or chr(byte) in _ASCII_WORD_CHARACTERS else ord(" ") for byte in range(256)
)
"""A ``bytes.translate`` table turning every ASCII byte that is no word character into a space,
leaving the rest (and every byte of a UTF-8 multi-byte character) as it is."""

_NON_ASCII = re.compile(r"[^\x00-\x7f]")

KEPT_CHARACTERS = 1 << 26
"""Most characters of texts a :class:`TermTable` keeps the terms of (their arrays take about as
many bytes again)."""


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop words, from the installed package's own list (one small module
    holding only that list, run here without importing scikit-learn); imported the ordinary way
    where that module is not where it used to be."""
    spec = importlib.util.find_spec("sklearn")  # finds the package without running it
    folders = spec.submodule_search_locations if spec is not None else None
    path = Path(folders[0]) / "feature_extraction" / "_stop_words.py" if folders else None
    if path is None or not path.is_file():
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS)
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return frozenset(namespace["ENGLISH_STOP_WORDS"])


@lru_cache(maxsize=1)
def _dropped_words() -> frozenset[str]:
    """What :func:`words` leaves out of a text without non-ASCII characters: the stop words and
    every one-character run (:data:`TOKEN_PATTERN` asks for two characters or more)."""
    return english_stop_words() | _ASCII_WORD_CHARACTERS


def words(text: str) -> list[str]:
    """``text``'s lower-cased words (:data:`TOKEN_PATTERN`'s matches in it), less the stop words,
    in order. Every character that is no word character becomes a space and the rest is split at
    spaces (a run of word characters is a match when it holds two or more): the same words as the
    pattern finds, in about half its time."""
    lowered = text.lower()
    dropped = _dropped_words()
    if not lowered.isascii():
        singles = set()
        for character in set(_NON_ASCII.findall(lowered)):
            if character.isalnum() or character == "_":  # what ``\w`` matches
                singles.add(character)
            else:
                lowered = lowered.replace(character, " ")
        dropped = dropped | singles
    runs = lowered.encode().translate(_ASCII_OTHERS_TO_SPACE).decode().split()
    return list(filterfalse(dropped.__contains__, runs))


@dataclass(frozen=True)
class TextTerms:
    """One text's distinct terms as :class:`TermTable` numbers them, ascending, each with its term
    frequency ``1 + ln(count)``; ``order`` puts them in the order they first occur in the text."""

    keys: np.ndarray
    frequencies: np.ndarray
    order: np.ndarray


class TermTable:
    """The terms of every text it has been asked about, each text's found once however often it
    comes back (the indexes built with one table share its numbers); it keeps them while it lives.

    A word is numbered from 1 when first met; a run of words (scikit-learn joins them with a space)
    is the number whose digits, in base ``2 ** (63 // ngrams)``, are its words' numbers, so no two
    terms share a number, whatever their lengths, and no run is ever spelt out. The texts' terms
    are kept up to :data:`KEPT_CHARACTERS` characters of texts (a prompt's cut filler is new in
    every prompt), then let go and found again as texts come back; the words' numbers stay."""

    def __init__(self, ngrams: int) -> None:
        self.ngrams = ngrams
        self._digit = 63 // ngrams  # bits of one word's number in a run's
        self._words: defaultdict[str, int] = defaultdict(count(1).__next__)
        self._texts: dict[str, TextTerms] = {}
        self._kept = 0  # characters of the texts in ``_texts``

    def of(self, text: str) -> TextTerms:
        """``text``'s terms (its :func:`words`, then every run of 2 to ``ngrams`` of them),
        numbered; worked out the first time only (while it is kept)."""
        found = self._texts.get(text)
        if found is None:
            if self._kept + len(text) > KEPT_CHARACTERS:
                self._texts.clear()
                self._kept = 0
            found = self._texts[text] = self._terms_of(text)
            self._kept += len(text)
        return found

    def _terms_of(self, text: str) -> TextTerms:
        """``text``'s terms, numbered (words not met before get new numbers)."""
        import numpy as np

        found = words(text)
        numbers = np.fromiter(map(self._words.__getitem__, found), np.int64, len(found))
        if len(self._words) >> self._digit:
            raise OverflowError(f"more distinct words than runs of {self.ngrams} can number")
        return _counted(np.concatenate([numbers, *self._runs(numbers)]))

    def _runs(self, numbers: np.ndarray) -> list[np.ndarray]:
        """The number of every run of 2 to ``ngrams`` of the words numbered ``numbers``, in order,
        the runs of two words first."""
        runs = []
        for size in range(2, self.ngrams + 1):
            found = max(0, len(numbers) - size + 1)
            run = numbers[:found]
            for offset in range(1, size):
                run = (run << self._digit) | numbers[offset : offset + found]
            runs.append(run)
        return runs


def _counted(keys: np.ndarray) -> TextTerms:
    """The distinct terms of a text whose terms are numbered ``keys``, in order."""
    import numpy as np

    by_key = keys.argsort()
    starts, distinct = _distinct(keys[by_key])
    counts = np.diff(np.append(starts, len(keys)))
    top = int(counts.max()) if len(counts) else 0
    by_count = np.array([0.0, *map(_FREQUENCY.__getitem__, range(1, top + 1))])
    first = np.zeros(len(keys), bool)  # each term's first occurrence
    first[np.minimum.reduceat(by_key, starts) if len(keys) else by_key] = True
    term_at = np.empty(len(keys), np.int64)
    term_at[by_key] = distinct
    return TextTerms(keys[by_key][starts], by_count[counts], term_at[first])


class TfidfIndex:
    """The TF-IDF vectors of ``texts``, with the inverse document frequencies fitted on them, to
    compare a query with each text (scikit-learn's ``fit_transform`` on ``texts``, then
    ``transform`` of the query, then cosine similarity); the texts' terms come from ``table``."""

    def __init__(self, texts: Sequence[str], table: TermTable) -> None:
        import numpy as np

        self._table = table
        found = [table.of(text) for text in texts]
        self._ends = np.cumsum([len(each.keys) for each in found], dtype=np.int64)
        keys = np.concatenate([np.empty(0, np.int64), *(each.keys for each in found)])
        self._frequencies = np.concatenate([np.empty(0), *(each.frequencies for each in found)])
        # the texts' entries, term by term (a stable sort merges the texts' ascending runs)
        self._by_key = np.argsort(keys, kind="stable")
        ascending = keys[self._by_key]
        self._starts, distinct = _distinct(ascending)  # where each term's entries begin
        self._terms = ascending[self._starts]  # the index's terms, ascending
        self._holding = np.diff(np.append(self._starts, len(keys)))  # documents holding each
        documents = len(texts) + 1
        by_holding = [math.log(documents / (holding + 1)) + 1.0 for holding in range(documents)]
        self._idf = np.array(by_holding)[self._holding]  # each term's
        entry_idf = np.empty(len(keys))
        entry_idf[self._by_key] = self._idf[distinct]
        self._norms = [
            _length(
                each.frequencies[each.order] * entry_idf[end - len(each.keys) : end][each.order]
            )
            for each, end in zip(found, self._ends.tolist())
        ]

    def _unit(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Where the terms of ``text`` that the index holds stand among the index's terms, in the
        order they first occur in ``text``, and its unit TF-IDF vector's weights on them (none
        when it holds no such term)."""
        found = self._table.of(text)
        keys, frequencies = found.keys[found.order], found.frequencies[found.order]
        at, known = _positions(self._terms, keys)
        at = at[known]
        weights = frequencies[known] * self._idf[at]
        length = _length(weights)
        return (at, weights / length) if length else (at[:0], weights[:0])

    def similarities(self, query: str) -> list[float]:
        """The cosine similarity of ``query`` to each of the index's texts, in order."""
        import numpy as np

        terms, weights = self._unit(query)
        holding = self._holding[terms]
        # every entry of each of the query's terms: its texts' frequencies, text by term
        within = np.arange(int(holding.sum())) - np.repeat(np.cumsum(holding) - holding, holding)
        entries = self._by_key[np.repeat(self._starts[terms], holding) + within]
        texts = np.searchsorted(self._ends, entries, side="right")
        frequencies = np.zeros((len(self._norms), len(terms)))
        frequencies[texts, np.repeat(np.arange(len(terms)), holding)] = self._frequencies[entries]
        products = weights * frequencies * self._idf[terms]
        dots = (
            np.cumsum(products, axis=1)[:, -1].tolist() if len(terms) else [0.0] * len(self._norms)
        )
        return [dot / norm if norm else 0.0 for dot, norm in zip(dots, self._norms)]

    def similarity(self, query: str, text: str) -> float:
        """The cosine similarity of ``query`` to ``text``, both weighted by the index's terms."""
        import numpy as np

        terms, weights = self._unit(query)
        text_terms, text_weights = self._unit(text)
        if not len(terms) or not len(text_terms):
            return 0.0
        order = np.argsort(text_terms)
        at, found = _positions(text_terms[order], terms)
        return float(np.cumsum(weights * np.where(found, text_weights[order][at], 0.0))[-1])


def _distinct(ascending: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each distinct value of ``ascending`` first stands in it, and the place of each
    entry's value among the distinct values."""
    import numpy as np

    starting = np.empty(len(ascending), bool)
    starting[:1] = True
    starting[1:] = ascending[1:] != ascending[:-1]
    return np.flatnonzero(starting), np.cumsum(starting) - 1


def _positions(ascending: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``wanted`` stands in ``ascending`` (distinct values, ascending; any place in
    it where the value is not there), and whether it is there."""
    import numpy as np

    if not len(ascending):
        return np.zeros(len(wanted), np.int64), np.zeros(len(wanted), bool)
    at = np.minimum(np.searchsorted(ascending, wanted), len(ascending) - 1)
    return at, ascending[at] == wanted


def _length(weights: np.ndarray) -> float:
    """The Euclidean length of a vector of ``weights``, its squares added one at a time in order."""
    import numpy as np

    return math.sqrt(float(np.cumsum(weights * weights)[-1])) if len(weights) else 0.0


def clear_of(threshold: float, scores: Iterable[float]) -> bool:
    """Whether every one of ``scores`` lies clearly on one side of ``threshold`` (further from it
    than :data:`CLOSE` of its size), so comparing it with ``threshold`` gives the same answer as
    scikit-learn's figures would; a threshold of 0 is clear only of scores above it."""
    margin = CLOSE * abs(threshold)
    return all(abs(score - threshold) > margin for score in scores)


class _Frequencies(dict[int, float]):
    """The sublinear term frequency ``1 + ln(count)`` of each count, worked out when first asked."""

    def __missing__(self, occurrences: int) -> float:
        frequency = self[occurrences] = 1.0 + math.log(occurrences)
        return frequency


_FREQUENCY = _Frequencies()
