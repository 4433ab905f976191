"""The prompt offsets builders record for coverage by construction."""

import pytest

from longbench100.fitting.spans import coverage_spans, text_spans


def test_spans_are_found_in_order_even_when_a_text_repeats():
    prompt = "Intro.\n\nPassage 1:\nalpha\n\nPassage 2:\nbeta\n\nPassage 3:\nalpha\n\nQuestion?"
    spans = text_spans(prompt, ["alpha", "beta", "alpha"])
    assert [prompt[a:b] for a, b in spans] == ["alpha", "beta", "alpha"]
    assert spans[2][0] > spans[1][1]


def test_coverage_spans_mark_the_context_and_the_gold_pieces():
    prompt = "Head\n\nA one\n\nB two\n\nC three\n\nTail"
    record = coverage_spans(prompt, ["A one", "B two", "C three"], [False, True, False])
    assert prompt[slice(*record["context"])] == "A one\n\nB two\n\nC three"
    assert [prompt[a:b] for a, b in record["gold"]] == ["B two"]


def test_a_missing_text_is_an_error():
    with pytest.raises(ValueError, match="not found"):
        text_spans("abc", ["abc", "abc"])
