"""The plain TF-IDF figures are scikit-learn's: the same stop words and terms, similarities equal
to its own within a hair, and a comparison with a threshold counted as clear only where that hair
cannot change its answer."""

from __future__ import annotations

import importlib.util
import random

import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from longbench100.baselines.lexical import cosine_similarities, tfidf_vectorizer
from longbench100.text import tfidf
from longbench100.text.tfidf import CLOSE, TfidfIndex, clear_of, english_stop_words, terms

WORDS = (
    "harbor council met dawn tide river ship cargo mayor vote budget storm bridge ferry "
    "north south lighthouse keeper nets fish market price rose fell report said year the of "
    "and to in it was for on are with as his they be at one have this from or had by"
).split()
"""Content words and stop words, so that stop words fall between the words of a run."""


def _text(rng: random.Random) -> str:
    """A text of random words, with punctuation, digits, casing and a few non-ASCII words."""
    words = [
        rng.choice(WORDS).upper() if rng.random() < 0.1 else rng.choice(WORDS)
        for _ in range(rng.randint(0, 120))
    ]
    extras = ["naïve", "café", "x", "a1", "42", "don't", "—", "e.g.", "Zoë's"]
    for _ in range(rng.randint(0, 6)):
        words.insert(rng.randint(0, len(words)), rng.choice(extras))
    return " ".join(words) + rng.choice(["", ".", "!\n", ", then."])


def test_the_stop_words_are_scikit_learns():
    assert english_stop_words() == ENGLISH_STOP_WORDS


def test_the_stop_words_are_imported_where_their_module_is_not_found(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert english_stop_words.__wrapped__() == ENGLISH_STOP_WORDS


@pytest.mark.parametrize("ngrams", [1, 2, 3])
def test_the_terms_are_scikit_learns(ngrams: int):
    rng = random.Random(ngrams)
    analyse = tfidf_vectorizer(ngrams).build_analyzer()
    for _ in range(200):
        text = _text(rng)
        assert terms(text, ngrams) == analyse(text)


@pytest.mark.parametrize("ngrams", [1, 2])
def test_similarities_equal_scikit_learns(ngrams: int):
    rng = random.Random(10 + ngrams)
    compared = 0
    for _ in range(60):
        texts = [_text(rng) for _ in range(rng.randint(1, 12))]
        query, other = _text(rng), _text(rng)
        vectorizer = tfidf_vectorizer(ngrams)
        try:
            matrix = vectorizer.fit_transform(texts)
        except ValueError:  # no word but stop words: scikit-learn fits nothing, nor do we
            assert all(not terms(text, ngrams) for text in texts)
            continue
        index = TfidfIndex(texts, ngrams)
        query_vector = vectorizer.transform([query])
        expected = cosine_similarities(query_vector, matrix)[0]
        assert index.similarities(query) == pytest.approx(list(expected), rel=1e-12, abs=1e-15)
        pair = cosine_similarities(query_vector, vectorizer.transform([other]))[0][0]
        assert index.similarity(query, other) == pytest.approx(pair, rel=1e-12, abs=1e-15)
        compared += 1
    assert compared > 40


def test_a_query_without_a_known_term_is_like_nothing():
    index = TfidfIndex(["harbor council met", "river ship cargo"], 2)
    assert index.similarities("the of and") == [0.0, 0.0]
    assert index.similarities("lighthouse keeper") == [0.0, 0.0]
    assert index.similarity("harbor", "lighthouse") == 0.0
    assert index.similarities("harbor council")[0] > 0.0


def test_a_threshold_is_clear_only_of_scores_beyond_the_hair():
    assert clear_of(0.5, [0.1, 0.5 + 1e-6, 0.9])
    assert not clear_of(0.5, [0.1, 0.5 * (1 + CLOSE / 2)])
    assert not clear_of(0.5, [0.5])
    assert clear_of(0.0, [0.1, 0.2])
    assert not clear_of(0.0, [0.1, 0.0])  # nothing is clear of a zero line but what lies above it
    assert clear_of(0.3, [])


def test_the_hair_is_wider_than_the_two_arithmetics_differ():
    rng = random.Random(3)
    worst = 0.0
    for _ in range(40):
        texts = [_text(rng) for _ in range(8)]
        query = " ".join(rng.choice(WORDS) for _ in range(20))
        vectorizer = tfidf_vectorizer(2)
        expected = cosine_similarities(
            vectorizer.fit_transform(texts), vectorizer.transform([query])
        )
        for ours, theirs in zip(TfidfIndex(texts, 2).similarities(query), expected[:, 0]):
            if theirs:
                worst = max(worst, abs(ours - theirs) / theirs)
    assert worst < tfidf.CLOSE / 1000
