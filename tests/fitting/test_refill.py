"""Openings of a text whose count is known, worked out from its end, are the openings the cut makes
from its start."""

from __future__ import annotations

import random

import pytest

from longbench100.fitting.refill import counted_opening, opening_of
from longbench100.text.tokenization import load_tokenizer
from tests.text.test_segment_count import real_sentences
from tests.text.test_spliced_count import known_text


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_a_known_count_cuts_the_same_opening_from_the_end(encoding: str) -> None:
    tokenizer = load_tokenizer(encoding)
    rng = random.Random(f"refill-{encoding}")
    sentences = real_sentences()
    long_texts = 0
    for _ in range(40):
        text = "\n\n".join(known_text(rng, sentences) for _ in range(rng.randint(1, 12)))
        total = tokenizer.count(text)
        long_texts += len(text) > 20_000
        for tokens in {total - 1, total - 7, total - rng.randint(1, 60), total // 3, 5}:
            expected = opening_of(tokenizer, text, tokens)
            assert opening_of(tokenizer, text, tokens, total) == expected, tokens
            opening, counted = counted_opening(tokenizer, text, tokens, total)
            assert counted in (None, tokenizer.count_whole(opening))
    assert long_texts > 5  # some are segmented a window at a time
