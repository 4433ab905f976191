"""Reading judge replies: strict JSON, JSON wrapped in prose or fences, labelled lines, and garbage."""

import pytest

from longbench100.scoring.judge_parse import parse_qa_verdict, parse_summary_verdict


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"fluency": 2, "correctness": 3}', 1.0),
        ('The answer names the right date.\n{"fluency": 2, "correctness": 2}', 4 / 6),
        ('Reasoning...\n```json\n{\n  "fluency": 1,\n  "correctness": 3\n}\n```\nDone.', 3 / 6),
        ('{"Fluency": "2", "Correctness": 1.0}', 2 / 6),
        ('Draft {"fluency": 0, "correctness": 0} then final {"fluency": 2, "correctness": 1}', 2 / 6),
        ("Fluency: 2\nCorrectness: 3", 1.0),
        ("**Fluency** (0-2): 1\n**Correctness** (0-3): 2", 2 / 6),
        ("{'fluency': 2, 'correctness': 0}", 0.0),  # Python-style quotes fall back to the labels
        ('{"fluency": 0, "correctness": 3}', 0.0),
    ],
)
def test_qa_verdicts(reply, expected):
    assert parse_qa_verdict(reply) == pytest.approx(expected)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I think the answer is quite good.",
        '{"fluency": 3, "correctness": 3}',  # out of range is invalid, not clipped
        '{"fluency": 2, "correctness": 4}',
        '{"fluency": 2}',
        '{"fluency": 1.5, "correctness": 2}',
        '{"fluency": true, "correctness": 2}',
        "Fluency: 2",
    ],
)
def test_invalid_qa_verdicts_are_none(reply):
    assert parse_qa_verdict(reply) is None


@pytest.mark.parametrize(
    ("reply", "n", "expected"),
    [
        ('[1] supported\n[2] not supported\n{"fluency": 1, "supported": [1]}', 2, 0.5),
        ('{"fluency": 1, "supported": [1, 3, 4]}', 4, 0.75),
        ('{"fluency": 1, "supported": [2, 2]}', 2, 0.5),  # a repeated number counts once
        ('{"fluency": 0, "supported": [1, 2]}', 2, 0.0),
        ('{"fluency": 1, "supported": []}', 3, 0.0),
        ('{"fluency": 1, "supported": 2}', 4, 0.5),  # a count instead of a list
        ('```\n{"fluency": "1", "supported": ["1", "2"]}\n```', 2, 1.0),
        ("Fluency: 1\nSupported: [1, 3]", 3, 2 / 3),
        (
            "Sentence 1: supported\nSentence 2: unsupported (adds a date)\nSentence 3 - Supported\nFluency: 1",
            3,
            2 / 3,
        ),
    ],
)
def test_summary_verdicts(reply, n, expected):
    assert parse_summary_verdict(reply, n) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("reply", "n"),
    [
        ("", 2),
        ("The summary is fine.", 2),
        ('{"fluency": 1, "supported": [1, 5]}', 3),  # sentence 5 does not exist
        ('{"fluency": 2, "supported": [1]}', 3),
        ('{"fluency": 1, "supported": 4}', 3),
        ("Sentence 1: supported\nFluency: 1", 3),  # sentences 2 and 3 have no verdict
    ],
)
def test_invalid_summary_verdicts_are_none(reply, n):
    assert parse_summary_verdict(reply, n) is None


@pytest.mark.parametrize(
    ("reply", "n", "expected"),
    [
        # a "Not supported: [...]" list is no "Supported" list, and a list never spans lines
        ("Fluency: 1\nSupported: [1]\nNot supported: [2, 3]", 3, 1 / 3),
        ("[1] supported\n[2] not supported\n[3] Supported\nFluency: 1", 3, 2 / 3),
        ("Fluency: 1\nUnsupported sentences: [2]\nSupported sentences: [1, 3]", 3, 2 / 3),
        ("Fluency: 1\n1. Supported\n2) is not fully supported by the reference", 2, 1 / 2),
        ("**Sentence 1**: Supported\n**Sentence 2**: Not supported\nSupported: [1]\nFluency: 1", 2, 1 / 2),
    ],
)
def test_summary_fallback_lines_read_negations_per_line(reply, n, expected):
    assert parse_summary_verdict(reply, n) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("reply", "n"),
    [
        ("Fluency: 1\nSupported: [1]\nSupported: [1, 2]", 2),  # two lists that differ
        ("Fluency: 1\nSupported: [1, 2]\nNot supported: [2]", 2),  # one sentence in both lists
        ("Fluency: 1\n[1] supported\n[2] supported\nSupported: [1]", 2),  # lines contradict the list
        ("Fluency: 1\n[1] supported\n[1] not supported\n[2] supported", 2),  # one sentence, two verdicts
        ("Fluency: 1\n[1] partially supported\n[2] supported", 2),  # a hedge is no verdict
        ("Fluency: 1\n[1] not supported, although the date is supported\n[2] supported", 2),  # mixed line
        ("Fluency: 1\nThese are supported\n[2]", 2),  # the list is not on the "supported" line
    ],
)
def test_ambiguous_summary_fallbacks_are_none(reply, n):
    assert parse_summary_verdict(reply, n) is None
