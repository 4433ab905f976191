"""The bag-of-tokens F1 that the QA metrics and the answerability rules use."""

from __future__ import annotations

from collections import Counter

from longbench100.text.answers import bag_f1, normalize_answer, token_f1


def test_token_f1_counts_shared_tokens_with_their_multiplicity() -> None:
    assert token_f1([], ["a"]) == 0.0
    assert token_f1(["x", "y"], ["z"]) == 0.0
    assert token_f1(["cat", "cat", "dog"], ["cat", "dog", "dog", "eel"]) == 2 * (2 / 3) * (
        2 / 4
    ) / (2 / 3 + 2 / 4)


def test_bag_f1_of_counted_bags_is_token_f1_of_the_lists() -> None:
    answers = ["the Elm Ltd company", "Elm Ltd", "a party and the parties", "", "ltd ltd ltd elm"]
    for first in answers:
        for second in answers:
            one, two = normalize_answer(first).split(), normalize_answer(second).split()
            assert bag_f1(Counter(one), Counter(two)) == token_f1(one, two)
