"""Accuracy-task parsers on messy, real-looking answers (expected values worked out by hand)."""

import pytest

from longbench100.scoring.metrics.parsers import (
    accuracy,
    parse_count,
    parse_option,
    parse_passage_number,
    parse_uuid,
)

KEY = "9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f"
VALUE = "3f2b8c1e-9d4a-4e6b-8f1a-2c3d4e5f6a7b"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (VALUE, VALUE),
        (f"The value associated with the key {KEY} is {VALUE}.", VALUE),
        (f'```json\n{{"{KEY}": "{VALUE.upper()}"}}\n```', VALUE),
        (f"<think>maybe {VALUE}</think>The answer is {KEY}", KEY),
        (f"{VALUE} is the value of {KEY}", KEY),  # the last UUID counts, as SPEC.md says
        ("I could not find the key.", None),
        ("3f2b8c1e-9d4a-4e6b-8f1a", None),  # a truncated UUID is no UUID
    ],
)
def test_parse_uuid_takes_the_last_uuid(answer, expected):
    assert parse_uuid(answer) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("3", 3),
        ("Option 2", 2),
        ("The answer is 4", 4),
        ("The correct option is (4): [12, 5, 7, 9]", 4),
        ("**Answer:** 1", 1),
        ("Answer: [3]", 3),
        ("I think it's choice #2 because the penguin counted 12 first.", 2),
        ("\\boxed{5}", 5),
        ("2. [31, 8, 77, 14]", 2),
        ("None of the options", None),
        ("I considered option 1 but the answer is option 2", 2),  # the last explicit cue
        ("The answer is option 2. Option 1 is wrong.", 2),  # "the answer is" beats a later mention
        ("To answer this, I counted 4 stars per list; option 3", 3),
    ],
)
def test_parse_option(answer, expected):
    assert parse_option(answer) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Passage 3.", 3),
        ("The answer is 4", 4),
        ("passage3", 3),
        ("Passage #12 matches the summary.", 12),
        ("The summary describes Passage 12, which covers the 2019 floods.", 12),
        ("The answer is Passage 7. Passage 3 is about something else.", 7),
        ("<think>Passage 2? No, the dates fit passage 9.</think>\n\nPassage 9", 9),
        ("7", 7),
        ("It is paragraph 15", 15),
        ("I cannot tell.", None),
    ],
)
def test_parse_passage_number(answer, expected):
    assert parse_passage_number(answer) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("12", 12),
        ("There are 12 unique paragraphs.", 12),
        ("The answer is: 14", 14),
        ("Paragraphs 3 and 7 are duplicates, so the count is 10", 10),
        ("After reviewing the 30 paragraphs, I count 25 unique ones.", 25),
        ("There are twelve distinct passages.", 12),
        ("Paragraph 1 repeats paragraph 4; in total 9.", 9),  # no cue: the last number
        (
            "There are 14 paragraphs in total, but only 11 are unique.",
            11,
        ),  # the unique cue beats "there are"
        ("There are 3 duplicated paragraphs; the number of distinct paragraphs is 9.", 9),
        (
            "The answer: paragraphs 3 and 5 are duplicates, so 11 unique",
            11,
        ),  # ... and beats "answer:"
        ("14 paragraphs, 11 of which are unique.", 11),
        ("Paragraphs 3 and 5 are unique; the rest repeat. In total 9 unique paragraphs.", 9),
        ("I am not sure.", None),
    ],
)
def test_parse_count(answer, expected):
    assert parse_count(answer) == expected


def test_accuracy_is_one_only_for_the_gold_answer():
    assert accuracy("kv_retrieval", f"It is {VALUE}", [VALUE]) == 1.0
    assert accuracy("kv_retrieval", f"It is {VALUE}", [KEY]) == 0.0
    assert accuracy("counting_stars", "Option 03", ["3"]) == 1.0
    assert accuracy("passage_retrieval", "Passage 17", ["7"]) == 0.0
    assert accuracy("passage_count", "There are 12 unique paragraphs.", ["12"]) == 1.0
    assert accuracy("passage_count", "", ["12"]) == 0.0


OPTIONS = [
    "[36, 18, 89, 53]",
    "[36, 29, 89, 53]",
    "[89, 36, 53, 29]",
    "[29, 36, 89, 53]",
    "The passages do not give enough information to tell.",
]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("[36, 29, 89, 53]", 2),  # the list itself instead of its option number
        ("The penguin counted [89,36,53,29] stars in order.", 3),
        ("Answer: [36, 29, 89, 53]", 2),
        ("Option 4: [29, 36, 89, 53]", 4),
        ("The passages do not give enough information to tell.", 5),
        ("[12, 45, 3, 8]", None),  # a list that is no option names no option
        ("[12, 45, 3, 8], so option 1", 1),
        ("2", 2),
        # an explicit final choice beats lists quoted in the reasoning
        (
            "Counts found: [36, 29, 89, 53]. Option 1 is [36, 18, 89, 53], which is wrong. Answer: 2",
            2,
        ),
        ("Option 1 is [36, 18, 89, 53]. The answer is option 4.", 4),
        ("The answer is [36, 29, 89, 53], which is option 2", 2),
        (
            "Option 1 does not fit; the counts are [36, 29, 89, 53].",
            2,
        ),  # the list comes after the cue
        (
            "The counts [36, 18, 89, 53] do not match, so option 2.",
            2,
        ),  # the cue comes after the list
        (
            "[36, 18, 89, 53] or [36, 29, 89, 53]? Hard to say.",
            None,
        ),  # several options quoted, no cue
        ("[36, 18, 89, 53] or [36, 29, 89, 53]? I pick option 2.", 2),
        # an option's counts stated in prose, as small chat models answer
        ("The penguin's star counts in the order they appear are 36, 29, 89, and 53.", 2),
        ("The little penguin counted 89 stars, then 36 stars, then 53 stars and then 29 stars.", 3),
        ("The answer is 29, 36, 89 and 53.", 4),
        ("The counts are 36; 18; 89; 53", 1),
        ("The counts are 36, 18, 89, 53 or maybe 36, 29, 89, 53.", None),  # two options' contents
        ("The penguin counted 12, 45, 3, and 8 stars.", None),  # no option's content
        ("It counted 36, 29, 89, and 53 stars, which is option 2.", 2),
        ("It counted 36, 29, 89, and 53 stars; still I choose option 4.", 4),  # a later cue wins
        ("Options 1, 2 and 3 are wrong, so option 4.", 4),
    ],
)
def test_parse_option_with_known_options(answer, expected):
    assert parse_option(answer, OPTIONS) == expected


def test_counting_stars_accuracy_uses_the_options():
    assert accuracy("counting_stars", "[36, 29, 89, 53]", ["2"], OPTIONS) == 1.0
    # SmolLM2-135M's reply to counting_stars-2k-0000, whose option 1 was [85, 90, 68, 33]
    reply = "The penguin's star counts in the order they appear are 85, 90, 68, and 33."
    options = [
        "[85, 90, 68, 33]",
        "[85, 68, 90, 33]",
        "[90, 85, 68, 33]",
        "[85, 90, 68, 14]",
        OPTIONS[-1],
    ]
    assert accuracy("counting_stars", reply, ["1"], options) == 1.0
    assert accuracy("counting_stars", reply, ["2"], options) == 0.0
    assert (
        accuracy("counting_stars", "[36, 29, 89, 53]", ["2"]) == 0.0
    )  # without options: the first integer, 36
