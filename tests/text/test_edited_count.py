"""Counting an edited text from its known count and the stretches around its edits equals counting
it whole.

Known texts are random joins of real sentences; edits replace random spans (mid-word, on a cut
place, one character either side of one, at either end of the text, next to one another) by inserts
or by other texts' stretches, or delete them. Every count is compared with a whole count of the
edited text, for each encoding that counts by segments.
"""

from __future__ import annotations

import random

import pytest

from longbench100.text.edited_count import apply_edits, count_edited
from longbench100.text.tokenization import Tokenizer, load_tokenizer
from tests.conftest import SEGMENTED_TOKENIZERS, load_segmented
from tests.text.test_segment_count import real_sentences
from tests.text.test_spliced_count import INSERTS, known_text, random_span


def _random_edits(rng: random.Random, text: str, cuts: list[int], other: str):
    """Up to five edits of ``text``, in order and not overlapping, some of them touching."""
    points = sorted(
        point for _ in range(rng.randint(1, 5)) for point in random_span(rng, text, cuts)
    )
    if rng.random() < 0.2:
        points[0] = 0
    if rng.random() < 0.2:
        points[-1] = len(text)
    edits = []
    for start, end in zip(points[::2], points[1::2]):
        choice = rng.random()
        if choice < 0.4:
            new = rng.choice(INSERTS)
        elif choice < 0.8:
            a, b = random_span(rng, other, [])
            new = other[a:b]
        else:
            new = ""
        edits.append((start, end, new))
    return edits


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_edited_counts_equal_whole_counts(encoding: str) -> None:
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"edited-{encoding}")
    texts = [known_text(rng, sentences) for _ in range(12)]
    local = 0
    for _ in range(800):
        text, other = rng.sample(texts, 2)
        edits = _random_edits(rng, text, tokenizer.index(text).cuts, other)
        edited = apply_edits(text, edits)
        count = count_edited(tokenizer, text, tokenizer.count_whole(text), edits)
        assert count == tokenizer.count_whole(edited), (edits, text[:200])
        touched = max(edit[1] for edit in edits) - min(edit[0] for edit in edits)
        local += touched < len(text) // 2
    assert local > 100  # many edits touched less than half of the text


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_edited_counts_from_known_counts_of_old_and_new_texts_equal_whole_counts(
    encoding: str,
) -> None:
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"edited-known-{encoding}")
    texts = [known_text(rng, sentences) for _ in range(12)]
    for _ in range(600):
        text, other = rng.sample(texts, 2)
        edits = _random_edits(rng, text, tokenizer.index(text).cuts, other)
        if rng.random() < 0.5:  # whole passages of another text, as a refill puts them
            a, b = random_span(rng, other, tokenizer.index(other).cuts)
            edits = [(start, end, other[a:b]) for start, end, _ in edits]
        known = [
            (
                tokenizer.count_whole(text[start:end]) if rng.random() < 0.8 else None,
                tokenizer.count_whole(new) if rng.random() < 0.8 else None,
            )
            for start, end, new in edits
        ]
        count = count_edited(tokenizer, text, tokenizer.count_whole(text), edits, known)
        assert count == tokenizer.count_whole(apply_edits(text, edits)), (edits, known)


def test_apply_edits_replaces_each_span_in_order() -> None:
    assert apply_edits("abcdefgh", [(0, 1, "X"), (3, 5, ""), (7, 8, "YZ")]) == "XbcfgYZ"
    assert apply_edits("abc", []) == "abc"


def test_a_whole_counting_tokenizer_is_left_to_count_whole() -> None:
    base = load_tokenizer("cl100k_base")
    whole = Tokenizer("cl100k_base", "test:whole", "tiktoken", base._load, segmented=False)
    assert whole.counting == "whole"
    assert count_edited(whole, "One. Two. Three.", 6, [(5, 8, "2")]) is None
