"""Reading judge replies: strict JSON, JSON wrapped in prose or fences, labelled lines, and garbage."""

import pytest

from longbench100.judge.parse import parse_qa_verdict, parse_summary_verdict


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"fluency": 2, "correctness": 3}', 1.0),
        ('The answer names the right date.\n{"fluency": 2, "correctness": 2}', 4 / 6),
        ('Reasoning...\n```json\n{\n  "fluency": 1,\n  "correctness": 3\n}\n```\nDone.', 3 / 6),
        ('{"Fluency": "2", "Correctness": 1.0}', 2 / 6),
        (
            'Draft {"fluency": 0, "correctness": 0} then final {"fluency": 2, "correctness": 1}',
            2 / 6,
        ),
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
        (
            "**Sentence 1**: Supported\n**Sentence 2**: Not supported\nSupported: [1]\nFluency: 1",
            2,
            1 / 2,
        ),
    ],
)
def test_summary_fallback_lines_read_negations_per_line(reply, n, expected):
    assert parse_summary_verdict(reply, n) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("reply", "n"),
    [
        ("Fluency: 1\nSupported: [1]\nSupported: [1, 2]", 2),  # two lists that differ
        ("Fluency: 1\nSupported: [1, 2]\nNot supported: [2]", 2),  # one sentence in both lists
        (
            "Fluency: 1\n[1] supported\n[2] supported\nSupported: [1]",
            2,
        ),  # lines contradict the list
        (
            "Fluency: 1\n[1] supported\n[1] not supported\n[2] supported",
            2,
        ),  # one sentence, two verdicts
        ("Fluency: 1\n[1] partially supported\n[2] supported", 2),  # a hedge is no verdict
        (
            "Fluency: 1\n[1] not supported, although the date is supported\n[2] supported",
            2,
        ),  # mixed line
        ("Fluency: 1\nThese are supported\n[2]", 2),  # the list is not on the "supported" line
    ],
)
def test_ambiguous_summary_fallbacks_are_none(reply, n):
    assert parse_summary_verdict(reply, n) is None


# ---- HELMET rubrics and lenient JSON, on replies written in the styles real judges use ------------

from longbench100.judge.parse import helmet_qa_parts, json_values, key_points_parts, recall_parts  # noqa: E402

HELMET_QA_REPLIES = [
    # a step-by-step reply ending in a fenced, indented object
    (
        "Step 1: the question asks for the date of the vote.\nStep 2: the reference says April 25, 2018.\n"
        'Step 3: the answer says April 2018, close but without the day.\n\n```json\n{\n  "fluency": 1,\n'
        '  "correctness": 1\n}\n```',
        1 / 3,
    ),
    # single quotes and a trailing comma
    ("The answer matches the reference exactly.\n{'fluency': 1, 'correctness': 3,}", 1.0),
    # Python literals
    ("Readable, but it only restates the question.\n{'fluency': True, 'correctness': 0}", 0.0),
    # comments inside the object
    (
        '{\n  "fluency": 1, // reads well\n  "correctness": 2 // right, with unrelated extras\n}',
        2 / 3,
    ),
    # an example object quoted from the rubric first, the verdict last
    (
        'A perfect answer would get {"fluency": 1, "correctness": 3}. This one gets:\n{"fluency": 0, "correctness": 3}',
        0.0,
    ),
    # the last object is cut off: the last complete one counts
    ('{"fluency": 1, "correctness": 2}\nOn second thought: {"fluency": 1, "correctness": ', 2 / 3),
    # a template with placeholders (not JSON) before the filled-in object
    (
        'Format: {"fluency": <0 or 1>, "correctness": <0-3>}\nMine: {"fluency": "1", "correctness": "3"}',
        1.0,
    ),
    # booleans as strings, the grades nested in a larger object
    (
        '{"verdict": {"fluency": "true", "correctness": 2}, "why": "right date, plus a tangent {sic}"}',
        2 / 3,
    ),
    # labelled lines only
    ("**Fluency:** 1\n**Correctness (0-3):** 2", 2 / 3),
]


@pytest.mark.parametrize(("reply", "expected"), HELMET_QA_REPLIES)
def test_helmet_qa_replies_in_many_styles(reply, expected):
    parts = helmet_qa_parts(reply)
    assert parts is not None and parts["fluency"] * parts["correctness"] / 3 == pytest.approx(
        expected
    )


@pytest.mark.parametrize(
    "reply",
    [
        "The answer is correct and fluent.",
        '{"fluency": 2, "correctness": 3}',  # HELMET's fluency is 0 or 1
        '{"fluency": 1, "correctness": 4}',
        '{"fluency": 1, "correctness": 2.5}',
        '{"fluency": 1, "correctness": "high"}',
        '{"fluency": 1, "correctness": ',  # cut off
    ],
)
def test_off_rubric_helmet_qa_replies_are_none(reply):
    assert helmet_qa_parts(reply) is None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '```json\n{"key_points": ["The council approved the budget", "Taxes rise next year"]}\n```',
            ["The council approved the budget", "Taxes rise next year"],
        ),
        (
            "Here is the list:\n['The storm reached the coast', 'Power failed for thousands',]",
            ["The storm reached the coast", "Power failed for thousands"],
        ),
        ('{"Key Points": ["  A dam burst.  "]}', ["A dam burst."]),
        ('Draft: ["one"]\nFinal: {"key_points": ["first", "second"]}', ["first", "second"]),
    ],
)
def test_key_points_are_read_from_an_object_or_a_list(reply, expected):
    assert key_points_parts(reply) == {"key_points": expected}


@pytest.mark.parametrize(
    "reply",
    [
        "1. The council approved the budget.\n2. Taxes rise next year.",  # no JSON
        '{"key_points": []}',
        '[{"point": "The council approved the budget"}]',
        '{"key_points": ["ok", ""]}',
        '{"key_points": "The council approved the budget."}',
    ],
)
def test_off_rubric_key_point_replies_are_none(reply):
    assert key_points_parts(reply) is None


@pytest.mark.parametrize(
    ("reply", "n", "expected"),
    [
        ('[1] conveyed\n[2] missing\n{"supported": [1, 3]}', 3, 2),
        ("Key point 1: supported\nKey point 2: not supported\nKey point 3: supported", 3, 2),
        ("{'supported': [],}", 2, 0),
        ('{"supported": ["2"]}', 2, 1),
    ],
)
def test_recall_replies(reply, n, expected):
    assert recall_parts(reply, n) == {"supported_key_points": expected, "n_key_points": n}


@pytest.mark.parametrize(
    ("reply", "n"), [('{"supported": [4]}', 3), ("All key points are covered.", 2)]
)
def test_off_rubric_recall_replies_are_none(reply, n):
    assert recall_parts(reply, n) is None


def test_a_boolean_fluency_counts_for_the_zero_or_one_summary_rubric():
    assert parse_summary_verdict('{"fluency": true, "supported": [1]}', 2) == 0.5
    assert parse_summary_verdict('{"fluency": false, "supported": [1]}', 2) == 0.0


def test_json_values_skip_what_does_not_decode_and_keep_order():
    text = "x {\"a\": 1} [2, 3] {broken [4,] {'b': 'it\\'s'}"
    assert json_values(text) == [{"a": 1}, [2, 3], [4], {"b": "it's"}]
