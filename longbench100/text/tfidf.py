"""TF-IDF cosine similarities in plain Python: scikit-learn's figures without importing it.

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
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import filterfalse
from operator import mul
from pathlib import Path
from typing import Any

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
"""A word: two or more word characters (scikit-learn's default pattern, the one we use)."""
_WORD = re.compile(TOKEN_PATTERN)

CLOSE = 1e-9
"""How near (relative to a threshold) a similarity may come to it before the two arithmetics could
disagree about which side it lies on: they differ by far less (about 1e-15)."""


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


def terms(text: str, ngrams: int) -> list[str]:
    """The terms of ``text``: its lower-cased words less the stop words, then every run of 2 to
    ``ngrams`` of those words joined by one space (as scikit-learn's word analyser forms them)."""
    words = list(filterfalse(english_stop_words().__contains__, _WORD.findall(text.lower())))
    found = list(words)
    for size in range(2, ngrams + 1):
        found.extend(map(" ".join, zip(*(words[start:] for start in range(size)))))
    return found


class TfidfIndex:
    """The TF-IDF vectors of ``texts``, with the inverse document frequencies fitted on them, to
    compare a query with each text (scikit-learn's ``fit_transform`` on ``texts``, then
    ``transform`` of the query, then cosine similarity)."""

    def __init__(self, texts: Sequence[str], ngrams: int = 1) -> None:
        self.ngrams = ngrams
        self._counts = [Counter(terms(text, ngrams)) for text in texts]
        holding: Counter[str] = Counter()
        for counts in self._counts:
            holding.update(counts.keys())
        documents = len(texts) + 1
        by_holding = {
            found: math.log(documents / (found + 1)) + 1.0 for found in set(holding.values())
        }  # most terms share a count of documents: each one's logarithm is taken once
        self._idf = dict(zip(holding, map(by_holding.__getitem__, holding.values())))
        self._norms = [self._length_of(counts) for counts in self._counts]

    def _length_of(self, counts: Counter[str]) -> float:
        """The length of the TF-IDF vector of one of the index's texts, whose terms are
        ``counts`` (worked out without a loop in Python: a pool holds half a million terms)."""
        frequencies = map(_FREQUENCY.__getitem__, counts.values())
        return _length(list(map(mul, frequencies, map(self._idf.__getitem__, counts))))

    def _weights(self, counts: Counter[str]) -> dict[str, float]:
        """The unscaled TF-IDF weight of each of ``counts``' terms that the index knows."""
        idf = self._idf
        return {
            term: _FREQUENCY[count] * idf[term] for term, count in counts.items() if term in idf
        }

    def vector(self, text: str) -> dict[str, float]:
        """``text``'s unit TF-IDF vector over the index's terms (empty when it holds none)."""
        weights = self._weights(Counter(terms(text, self.ngrams)))
        length = _length(list(weights.values()))
        return {term: weight / length for term, weight in weights.items()} if length else {}

    def similarities(self, query: str) -> list[float]:
        """The cosine similarity of ``query`` to each of the index's texts, in order."""
        vector = self.vector(query)
        idf = self._idf
        scores = []
        for counts, norm in zip(self._counts, self._norms):
            dot = sum(
                weight * _FREQUENCY[counts[term]] * idf[term]
                for term, weight in vector.items()
                if term in counts
            )
            scores.append(dot / norm if norm else 0.0)
        return scores

    def similarity(self, query: str, text: str) -> float:
        """The cosine similarity of ``query`` to ``text``, both weighted by the index's terms."""
        first, second = self.vector(query), self.vector(text)
        return sum(weight * second[term] for term, weight in first.items() if term in second)


def clear_of(threshold: float, scores: Iterable[float]) -> bool:
    """Whether every one of ``scores`` lies clearly on one side of ``threshold`` (further from it
    than :data:`CLOSE` of its size), so comparing it with ``threshold`` gives the same answer as
    scikit-learn's figures would; a threshold of 0 is clear only of scores above it."""
    margin = CLOSE * abs(threshold)
    return all(abs(score - threshold) > margin for score in scores)


def _length(weights: list[float]) -> float:
    """The Euclidean length of a vector of ``weights``."""
    return math.sqrt(sum(map(mul, weights, weights)))


class _Frequencies(dict[int, float]):
    """The sublinear term frequency ``1 + ln(count)`` of each count, worked out when first asked."""

    def __missing__(self, count: int) -> float:
        frequency = self[count] = 1.0 + math.log(count)
        return frequency


_FREQUENCY = _Frequencies()
