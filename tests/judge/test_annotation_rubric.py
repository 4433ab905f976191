"""Real replies of a small annotator model (SmolLM2-135M-Instruct served by llama.cpp, kept in
tests/support/fixtures/annotations_smollm2.jsonl by bench/annotation_fixture.py: novels' summaries and names,
then 16 contract chunks' legal references): the readers give the labels recorded with them, listed
items are always found in their chunk and have their type's shape, summaries keep at most five sentences."""

import json
import re
from pathlib import Path

import pytest

from longbench100.catalog.entities import ENTITY_TYPES
from longbench100.judge.annotation_rubric import (
    MENTIONS,
    SUMMARY,
    SUMMARY_SENTENCES,
    read_annotation,
)

FIXTURE = Path(__file__).resolve().parents[1] / "support" / "fixtures" / "annotations_smollm2.jsonl"
LINES = (
    [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    if FIXTURE.exists()
    else []
)
KINDS = {
    "summary": SUMMARY,
    "mentions": MENTIONS,
    "legal_references": ENTITY_TYPES["legal_references"].annotation_kind,
}
SHAPES = {
    "mentions": ENTITY_TYPES["people"].shaped,
    "legal_references": ENTITY_TYPES["legal_references"].shaped,
}


def test_the_fixture_holds_every_kind_of_label():
    assert {line["kind"] for line in LINES} == set(KINDS)
    assert len(LINES) >= 40


@pytest.mark.parametrize(
    "line", LINES, ids=lambda line: f"{line['kind']}-{line['chunk_sha256'][:8]}"
)
def test_each_real_reply_reads_as_recorded(line):
    label = read_annotation(
        KINDS[line["kind"]], line["reply"], line["chunk"], cut_off=line["cut_off"]
    )
    assert label == line["label"]
    assert label is not None  # only readable replies are cached
    if line["kind"] in SHAPES:
        assert all(
            name.lower() in line["chunk"].lower() and SHAPES[line["kind"]](name)
            for name in label["mentions"]
        )
    else:
        assert len(re.findall(r"[.!?](?:\s|$)", label["summary"])) <= SUMMARY_SENTENCES
        assert not re.search(
            r"</?[a-z]+>", label["summary"]
        )  # "<passage>" echoed from the prompt, "<p>": read away
