"""Real replies of a small model (tests/support/fixtures/smollm2) through the answer parsers and the judge parsers.

The expected values were decided by reading each reply, not by running the parsers: a reply that
names a passage or a count is read as that number, a reply without the requested answer is not read
as one, and a judge reply that does not follow the rubric grades nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longbench100.folders.data_records import DataRecord
from longbench100.judge.parse import parse_qa_verdict, parse_summary_verdict
from longbench100.judge.prompts import JudgePrompt
from longbench100.judge.verdict import judge_verdict
from longbench100.scoring.metrics.label_match import label_match, parse_label
from longbench100.scoring.metrics.parsers import (
    accuracy,
    parse_count,
    parse_option,
    parse_passage_number,
    parse_uuid,
    substring_match,
)
from longbench100.scoring.metrics.ranking import ndcg_at_10, parse_ranking

REPLIES = [
    json.loads(line)
    for line in (
        Path(__file__).resolve().parents[1] / "support" / "fixtures" / "smollm2" / "replies.jsonl"
    )
    .read_text()
    .splitlines()
]
BY_ID = {reply["id"]: reply for reply in REPLIES}

READ_AS = {
    "kv_retrieval-2k-0000": None,  # "3": no UUID in the reply
    "kv_retrieval-4k-0000": None,  # "3 ... The final value is 3."
    "counting_stars-2k-0000": 29,  # "The answer is: 29": an option number that does not exist
    "counting_stars-4k-0000": 29,
    "passage_retrieval-2k-0000": 5,  # "Passage 5:" followed by the passage itself
    "passage_retrieval-4k-0000": 5,  # "The passage is:\nPassage 5"
    "passage_count-2k-0000": 12,  # "The number of distinct paragraphs is 12."
    "passage_count-4k-0000": 1,
    "counting_stars-8k-0000": 2,  # "The correct answer is: 36, 29, 89, 53": exactly option 2's counts
    "passage_retrieval-8k-0000": 13,  # "...is:\nPassage 13: North Korea ..."
    "passage_count-8k-0000": 24,  # "There are 24 distinct paragraphs in the document."
    "kv_retrieval-8k-0000": None,  # "33438f98-20c4b17e6a5d": a cut-off UUID is no UUID
}


def _read(reply: dict) -> object:
    task, text = reply["task"], reply["reply"]
    if task == "kv_retrieval":
        return parse_uuid(text)
    if task == "counting_stars":
        return parse_option(text, reply["options"])
    return parse_passage_number(text) if task == "passage_retrieval" else parse_count(text)


@pytest.mark.parametrize("sample_id", sorted(READ_AS))
def test_answers_are_read_as_what_they_state(sample_id: str) -> None:
    reply = BY_ID[sample_id]
    assert _read(reply) == READ_AS[sample_id]
    expected_score = (
        1.0
        if READ_AS[sample_id] is not None and str(READ_AS[sample_id]) in reply["answers"]
        else 0.0
    )
    assert (
        accuracy(reply["task"], reply["reply"], reply["answers"], reply["options"])
        == expected_score
    )


@pytest.mark.parametrize(
    "reply", [reply for reply in REPLIES if reply["kind"] == "judge"], ids=lambda reply: reply["id"]
)
def test_judge_replies_off_the_rubric_grade_nothing(reply: dict) -> None:
    if reply["metric"] == "qa_judge":
        assert parse_qa_verdict(reply["reply"]) is None
    else:
        assert parse_summary_verdict(reply["reply"], 3) is None
    assert reply["ungraded_reason"] in ("invalid reply", "truncated reply")


HELMET_REPLIES = [
    json.loads(line)
    for line in (
        Path(__file__).resolve().parents[1]
        / "support"
        / "fixtures"
        / "smollm2"
        / "helmet_replies.jsonl"
    )
    .read_text()
    .splitlines()
]


@pytest.mark.parametrize("reply", HELMET_REPLIES, ids=lambda reply: reply["id"])
def test_real_replies_off_the_helmet_rubrics_give_no_verdict(reply: dict) -> None:
    verdict = judge_verdict(
        JudgePrompt(reply["metric"], "", reply["n_items"]), reply["reply"], None, False
    )
    assert (
        verdict.score is None
        and verdict.reason == "invalid reply"
        and verdict.reply == reply["reply"]
    )


TASK_REPLIES = [
    json.loads(line)
    for line in (
        Path(__file__).resolve().parents[1]
        / "support"
        / "fixtures"
        / "smollm2"
        / "helmet_task_replies.jsonl"
    )
    .read_text()
    .splitlines()
]


def _record(reply: dict) -> DataRecord:
    return DataRecord(
        reply["id"],
        reply["task"],
        "8k",
        8192,
        0,
        tuple(reply["answers"]),
        None,
        None,
        gold=reply["gold"],
    )


@pytest.mark.parametrize("reply", TASK_REPLIES, ids=lambda reply: reply["id"])
def test_real_replies_to_the_helmet_tasks_are_read_as_what_they_state(reply: dict) -> None:
    """SmolLM2 at 8k: ranked passage titles but no ids, prose instead of a label, one bare label, a wrong short answer."""
    text, record = reply["reply"], _record(reply)
    if (
        reply["task"] == "rerank"
    ):  # a numbered list of passage titles names no id: nothing is ranked
        assert (
            parse_ranking(text, list(reply["gold"]["relevance"])) == []
            and ndcg_at_10(text, record) == 0.0
        )
    elif reply["task"].startswith(
        "icl_"
    ):  # prose gives no label; a bare "1" is label 1, right only if that is the mapped one
        stated = 1 if text.strip() == "1" else None
        assert parse_label(text) == stated
        assert label_match(text, record) == float(stated == reply["gold"]["mapped_label"])
    else:
        assert substring_match(text, list(record.answers)) == 0.0
