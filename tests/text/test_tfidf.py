"""The TF-IDF figures are scikit-learn's: the same stop words and terms, similarities equal to its
own within a hair, and a comparison with a threshold counted as clear only where that hair cannot
change its answer. They are also, to the last digit, what plain Python loops over the terms give,
however a :class:`TermTable` shared by several indexes recalls its texts."""

from __future__ import annotations

import importlib.util
import math
import random
import re
from collections import Counter

import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from longbench100.baselines.lexical import cosine_similarities, tfidf_vectorizer
from longbench100.text import tfidf
from longbench100.text.tfidf import (
    CLOSE,
    TOKEN_PATTERN,
    TermTable,
    TfidfIndex,
    clear_of,
    english_stop_words,
    words,
)

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


def terms(text: str, ngrams: int) -> list[str]:
    """``text``'s words (:func:`words`), then every run of 2 to ``ngrams`` of them joined by a space:
    the terms a :class:`TermTable` numbers."""
    found = words(text)
    runs = list(found)
    for size in range(2, ngrams + 1):
        runs.extend(" ".join(found[start : start + size]) for start in range(len(found) - size + 1))
    return runs


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
        index = TfidfIndex(texts, TermTable(ngrams))
        query_vector = vectorizer.transform([query])
        expected = cosine_similarities(query_vector, matrix)[0]
        assert index.similarities(query) == pytest.approx(list(expected), rel=1e-12, abs=1e-15)
        pair = cosine_similarities(query_vector, vectorizer.transform([other]))[0][0]
        assert index.similarity(query, other) == pytest.approx(pair, rel=1e-12, abs=1e-15)
        compared += 1
    assert compared > 40


def test_a_query_without_a_known_term_is_like_nothing():
    index = TfidfIndex(["harbor council met", "river ship cargo"], TermTable(2))
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
        for ours, theirs in zip(
            TfidfIndex(texts, TermTable(2)).similarities(query), expected[:, 0]
        ):
            if theirs:
                worst = max(worst, abs(ours - theirs) / theirs)
    assert worst < tfidf.CLOSE / 1000


CHARACTERS = (
    "abcXYZ019_ "  # ASCII word characters and a space
    ".,;:'\"!?()-/\t\n\r\x0b\x0c\x1c\x1f"  # ASCII others, with the separators split() also knows
    "éÖßİǅΣ中ﬁ"  # letters, one lower-casing to two characters (İ), a title-case one, a ligature
    "\u0301\u0307²٣Ⅻ"  # combining marks (no word characters), digits and numerals that are
    "—“”’…\xa0\x85\u2028\u3000\U0001f600\ud800"  # punctuation, spaces, an emoji, a lone surrogate
)
"""What the words of a text are found among: every kind of character the pattern and str.split
could disagree about."""


def test_the_words_are_the_patterns_matches_less_the_stop_words():
    rng = random.Random(4)
    stop_words = english_stop_words()
    pieces = [*CHARACTERS, *rng.sample(sorted(stop_words), 20), "Harbor", "council", "naïve"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        matches = re.findall(TOKEN_PATTERN, text.lower())
        assert words(text) == [word for word in matches if word not in stop_words], repr(text)


def test_no_word_character_is_a_separator():
    # words() turns every other character into a space and splits at whitespace: a word character
    # that str.split took for whitespace would cut a word the pattern keeps whole
    for point in range(0x110000):
        character = chr(point)
        if character.isalnum() or character == "_":
            assert not character.isspace(), hex(point)


def _plain_length(weights: list[float]) -> float:
    """The length of a vector, its squares added one at a time."""
    total = 0.0
    for weight in weights:
        total += weight * weight
    return math.sqrt(total)


class PlainIndex:
    """TF-IDF in plain Python loops over terms spelt out as strings (the pattern's words, runs
    joined by a space), each sum taken one addition at a time in the order the terms first occur:
    the figures :class:`TfidfIndex` must give to the last digit."""

    def __init__(self, texts: list[str], ngrams: int) -> None:
        self.ngrams = ngrams
        self.counts = [Counter(self.terms(text)) for text in texts]
        holding = Counter(term for counts in self.counts for term in counts)
        documents = len(texts) + 1
        self.idf = {term: math.log(documents / (n + 1)) + 1.0 for term, n in holding.items()}
        self.weights = [
            [(1.0 + math.log(n)) * self.idf[term] for term, n in counts.items()]
            for counts in self.counts
        ]
        self.norms = list(map(_plain_length, self.weights))

    def terms(self, text: str) -> list[str]:
        """``text``'s terms, found by the pattern itself."""
        stop_words = english_stop_words()
        found = [word for word in re.findall(TOKEN_PATTERN, text.lower()) if word not in stop_words]
        runs = list(found)
        for size in range(2, self.ngrams + 1):
            runs += [" ".join(found[at : at + size]) for at in range(len(found) - size + 1)]
        return runs

    def vector(self, text: str) -> dict[str, float]:
        """``text``'s unit vector over the index's terms."""
        weights = {
            term: (1.0 + math.log(n)) * self.idf[term]
            for term, n in Counter(self.terms(text)).items()
            if term in self.idf
        }
        length = _plain_length(list(weights.values()))
        return {term: weight / length for term, weight in weights.items()} if length else {}

    def similarities(self, query: str) -> list[float]:
        """``query``'s cosine similarity to each text."""
        vector = self.vector(query)
        scores = []
        for counts, norm in zip(self.counts, self.norms):
            dot = 0.0
            for term, weight in vector.items():
                if term in counts:
                    dot += weight * (1.0 + math.log(counts[term])) * self.idf[term]
            scores.append(dot / norm if norm else 0.0)
        return scores

    def similarity(self, query: str, text: str) -> float:
        """``query``'s cosine similarity to ``text``."""
        first, second = self.vector(query), self.vector(text)
        dot = 0.0
        for term, weight in first.items():
            if term in second:
                dot += weight * second[term]
        return dot


@pytest.mark.parametrize("ngrams", [1, 2, 3])
def test_the_index_gives_the_plain_loops_figures_to_the_last_digit(ngrams: int):
    rng = random.Random(20 + ngrams)
    table = TermTable(ngrams)  # shared, as a run's builder shares it: texts come back
    recurring = [_text(rng) for _ in range(30)] + ["", "the of and", "harbor " * 40]
    differing = 0
    for _ in range(80):
        texts = [
            rng.choice(recurring) if rng.random() < 0.7 else _text(rng)
            for _ in range(rng.randint(0, 15))
        ]
        index, plain = TfidfIndex(texts, table), PlainIndex(texts, ngrams)
        for query in [_text(rng), rng.choice(recurring), *texts[:1]]:
            assert index.similarities(query) == plain.similarities(query)
            for text in texts[:3]:
                assert index.similarity(query, text) == plain.similarity(query, text)
        for weights in plain.weights:
            differing += _plain_length(weights[::-1]) != _plain_length(weights)
    assert differing  # the order of the additions shows in the last digits: it is checked


def test_a_table_finds_each_texts_terms_once(monkeypatch: pytest.MonkeyPatch):
    read = []

    def recorded(text: str) -> list[str]:
        read.append(text)
        return words(text)

    monkeypatch.setattr(tfidf, "words", recorded)
    table = TermTable(2)
    texts = ["harbor council met at dawn", "river ship cargo", "harbor council met at dawn"]
    first = TfidfIndex(texts, table).similarities("council met")
    second = TfidfIndex(texts[1:], table).similarities("council met")
    assert sorted(read) == sorted({*texts, "council met"})  # each distinct text once
    assert first[0] == first[2] and second[1] > 0.0


def test_a_full_table_lets_texts_go_and_gives_the_same_figures(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tfidf, "KEPT_CHARACTERS", 200)  # a few texts at a time
    rng = random.Random("kept")
    bounded, roomy = TermTable(2), TermTable(2)
    with monkeypatch.context() as unbounded:
        unbounded.setattr(tfidf, "KEPT_CHARACTERS", 1 << 40)
        texts_seen = [[_text(rng) for _ in range(rng.randint(1, 6))] for _ in range(40)]
        expected = [TfidfIndex(texts, roomy).similarities(texts[0]) for texts in texts_seen]
    found = [TfidfIndex(texts, bounded).similarities(texts[0]) for texts in texts_seen]
    assert found == expected
    kept = sum(map(len, bounded._texts))  # at most the limit, or one text longer than it
    assert kept <= max(200, *map(len, bounded._texts)) and kept < sum(map(len, roomy._texts))


def test_a_table_refuses_more_words_than_its_runs_can_number():
    table = TermTable(63)  # one bit for each word of a run: a single word fits
    table.of("harbor harbor")
    with pytest.raises(OverflowError):
        table.of("harbor council")
