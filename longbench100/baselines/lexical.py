"""Lexical similarity for the baselines: TF-IDF vectors from scikit-learn, fitted on one prompt's passages.

scikit-learn's ``TfidfVectorizer`` (English stop words, sublinear term frequency) is what the
shortcut attacks in the validity issue used; bm25s, which the builders use for hard negatives, ranks
one query against an index but gives no passage-to-passage similarities, which the outlier
baseline needs. Fitting on the prompt's own passages keeps each sample independent of the others.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from longbench100.text.tfidf import TOKEN_PATTERN

if (
    TYPE_CHECKING
):  # numpy and scikit-learn (a second) load where they are used, not with this module
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

_WORD = re.compile(r"[a-z0-9]+")


def tfidf_vectorizer(ngrams: int = 1) -> TfidfVectorizer:
    """The TF-IDF settings every lexical comparison uses: English stop words, sublinear term
    frequency; words, and runs of up to ``ngrams`` words (``text/tfidf.py`` computes the same
    figures without scikit-learn)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        stop_words="english",
        sublinear_tf=True,
        token_pattern=TOKEN_PATTERN,
        ngram_range=(1, ngrams),
    )


def query_similarities(query: str, texts: list[str], ngrams: int = 1) -> np.ndarray:
    """Cosine similarity of ``query`` to each of ``texts`` (TF-IDF of runs of up to ``ngrams``
    words, fitted on ``texts``); zeros when nothing is shared."""
    import numpy as np

    if not texts:
        return np.zeros(0)
    try:
        vectorizer = tfidf_vectorizer(ngrams)
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # only stop words, or empty texts
        return np.zeros(len(texts))
    return cosine_similarities(vectorizer.transform([query]), matrix)[0]


def most_similar(query: str, texts: list[str]) -> int:
    """The index of the one of ``texts`` (not empty) most similar to ``query`` (the first of
    equals), by :func:`query_similarities`."""
    import numpy as np

    return int(np.argmax(query_similarities(query, texts)))


def cosine_similarities(rows: Any, others: Any = None) -> np.ndarray:
    """scikit-learn's cosine similarity of each of ``rows`` (TF-IDF vectors) to each of ``others``
    (to each other without them)."""
    from sklearn.metrics.pairwise import cosine_similarity

    return cosine_similarity(rows, others)


def bm25_scores(query: str, texts: list[str]) -> np.ndarray:
    """The BM25 score (k1 1.2, b 0.75, English stop words dropped) of each of ``texts`` for
    ``query``, over an index of ``texts`` alone; zeros when no query word is indexed."""
    import bm25s
    import numpy as np

    if not texts:
        return np.zeros(0)
    stopwords = "en"
    corpus = bm25s.tokenize(texts, stopwords=stopwords, show_progress=False)
    words_of_query = bm25s.tokenize(
        query, stopwords=stopwords, return_ids=False, show_progress=False
    )[0]
    if not words_of_query or not corpus.vocab:
        return np.zeros(len(texts))
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(corpus, show_progress=False)
    known = [word for word in words_of_query if word in corpus.vocab]
    return retriever.get_scores(known) if known else np.zeros(len(texts))


def outlier_index(texts: list[str]) -> int | None:
    """The index of the text least similar, on average, to the others (TF-IDF cosine); ``None`` for fewer than 3 texts."""
    if len(texts) < 3:
        return None
    try:
        matrix = tfidf_vectorizer().fit_transform(texts)
    except ValueError:
        return None
    import numpy as np

    similarity = cosine_similarities(matrix)
    np.fill_diagonal(similarity, 0.0)
    return int(np.argmin(similarity.sum(axis=1)))


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``."""
    return _WORD.findall(text.lower())


def overlap(a: str, b: str) -> int:
    """How many distinct words ``a`` and ``b`` share."""
    return len(set(words(a)) & set(words(b)))
