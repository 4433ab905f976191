"""ETHIC's attributing task on the synthetic mirror: budgets (recounted here), pairing, determinism, the
same-domain distractors, the recorded spans, the passage-id parser and the id_f1 metric end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.data_records import DataRecord
from longbench100.scoring.metrics.passage_ids import id_f1, parse_passage_ids
from longbench100.text.tokenization import load_tokenizer
from tests.conftest import SHARED_SOURCES
from tests.scoring.test_predictions import write_predictions
from tests.support.generate_helpers import generate_in_process

LENGTHS = (("2k", 2048), ("4k", 4096))
RESERVED = 128  # attributing keeps its answer room free
_HEADING = re.compile(r"^Passage (\d+):\n", re.MULTILINE)


def _generate(
    mirror: Path, out: Path, lengths=LENGTHS, rows: int = 4, sources: str | None = None
) -> Path:
    generate_in_process(
        out, ["attributing"], lengths, rows, sources=sources or str(mirror), seed=11
    )
    return out


@pytest.fixture(scope="module")
def data(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generate(mirror, tmp_path_factory.mktemp("attributing") / "data")


def _records(folder: Path, label: str) -> list[dict]:
    return [
        json.loads(line)
        for line in (folder / "attributing" / f"{label}.jsonl").read_text().splitlines()
    ]


def _passages(prompt: str) -> dict[int, str]:
    """The numbered passages of a prompt, cut by hand: number -> text."""
    headings = list(_HEADING.finditer(prompt))
    end_of_last = prompt.index("\n\nTarget ")
    texts = {}
    for heading, following in zip(headings, headings[1:] + [None]):
        end = following.start() - 2 if following else end_of_last
        texts[int(heading.group(1))] = prompt[heading.end() : end]
    return texts


def test_prompts_keep_the_budget_and_name_the_supporting_passages(data: Path) -> None:
    tokenizer = load_tokenizer("cl100k_base")
    for label, length in LENGTHS:
        records = _records(data, label)
        assert len(records) == 4
        for record in records:
            tokens = tokenizer.count(record["prompt"])
            assert tokens == record["prompt_tokens"] <= length - RESERVED
            gold = record["gold"]
            passages = _passages(record["prompt"])
            assert sorted(passages) == list(range(1, len(passages) + 1))
            assert len(gold["passages"]) >= 2 and set(gold["passages"]) <= set(passages)
            assert record["answers"] == [", ".join(str(number) for number in gold["passages"])]
            assert record["metric"] == "id_f1"
            # distractors come from the gold item's own source (same domain): its most similar other targets' passages
            assert {entry["source"] for entry in record["distractors"]} == {gold["sources"][0]}
            assert len(passages) == len(gold["passages"]) + len(record["distractors"])


def test_rows_are_paired_and_generation_is_deterministic(
    mirror: Path, data: Path, tmp_path: Path
) -> None:
    short, long = _records(data, "2k"), _records(data, "4k")
    assert [record["gold"]["item_ids"] for record in short] == [
        record["gold"]["item_ids"] for record in long
    ]
    assert {record["gold"]["sources"][0] for record in short} == {
        "rag_mini_bioasq",
        "multi_news_e",
    }  # both domains
    again = _generate(mirror, tmp_path / "again")
    for label, _ in LENGTHS:
        assert (again / "attributing" / f"{label}.jsonl").read_bytes() == (
            data / "attributing" / f"{label}.jsonl"
        ).read_bytes()


def test_spans_cover_every_passage_from_the_first_to_the_last(data: Path) -> None:
    for record in _records(data, "2k"):
        spans = record["gold"]["spans"]
        start, end = spans["context"]
        passages = _passages(record["prompt"])
        context = record["prompt"][start:end]
        assert context.startswith(passages[1]) and context.endswith(passages[len(passages)])
        assert spans["gold"] == [
            [start, end]
        ]  # the answer needs every passage: the whole context is gold


@pytest.mark.parametrize(
    "reply, numbers",
    [
        ("4, 19, 23", {4, 19, 23}),
        ("[4, 19, 23]", {4, 19, 23}),
        ("Passages 2, 5 and 9", {2, 5, 9}),
        ("Passages 12-14 and 20.", {12, 13, 14, 20}),
        ("Passages 12 to 14", {12, 13, 14}),
        ("The supporting passages are 4 and 12.", {4, 12}),
        ("Passage 4 reports 25 patients, and Passage 9 confirms it.", {4, 9}),
        (
            "Passage 3 is about mice and does not fit. Passage 7 does.\n\n**Answer:** Passages 7, 11",
            {7, 11},
        ),
        ("<think>Passage 1 looks relevant, maybe 2.</think>6, 8", {6, 8}),
        ("Passage [3], Passage [17]", {3, 17}),
        ("Passage 6 (p<0.05) and Passage 11 (45% of cases)", {6, 11}),
        ("1. Passage 4\n2. Passage 9", {4, 9}),
        ("None of the passages support it.", set()),
        ("", set()),
    ],
)
def test_passage_id_parser_reads_real_shaped_replies(reply: str, numbers: set[int]) -> None:
    assert parse_passage_ids(reply) == numbers


def _record(passages: list[int]) -> DataRecord:
    return DataRecord(
        "attributing-8k-0000",
        "attributing",
        "8k",
        8192,
        0,
        ("2, 5, 9",),
        None,
        None,
        gold={"passages": passages},
    )


@pytest.mark.parametrize(
    "reply, score",
    [
        ("2, 5, 9", 1.0),
        ("Passages 2 and 5", 0.8),  # P 1, R 2/3
        ("2, 5, 9, 11", 6 / 7),  # P 3/4, R 1
        ("7", 0.0),
        ("I cannot tell.", 0.0),
    ],
)
def test_id_f1(reply: str, score: float) -> None:
    assert id_f1(reply, _record([2, 5, 9])) == pytest.approx(score)


def test_score_grades_attributing_with_id_f1(data: Path, tmp_path: Path) -> None:
    def reply(record: dict) -> str:
        numbers = record["gold"]["passages"]
        return (
            f"Passages {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"
            if record["row"] % 2 == 0
            else f"{numbers[0]}"
        )

    predictions = write_predictions(tmp_path / "model", data, answer=reply)
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "20",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--base-lengths",
            "2k",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    records = {record["id"]: record for label, _ in LENGTHS for record in _records(data, label)}
    samples = json.loads(out.read_text())["samples"]
    assert len(samples) == len(records)
    for sample in samples:
        record = records[sample["id"]]
        assert sample["metric"] == "id_f1"
        expected = (
            1.0
            if record["row"] % 2 == 0
            else 2
            * (1 / len(record["gold"]["passages"]))
            / (1 + 1 / len(record["gold"]["passages"]))
        )
        assert sample["score"] == pytest.approx(expected)


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="../shared/sources is not here")
def test_real_bioasq_items_at_8k(tmp_path: Path) -> None:
    out = _generate(
        Path("unused"),
        tmp_path / "real",
        lengths=(("8k", 8192),),
        rows=2,
        sources=str(SHARED_SOURCES),
    )
    tokenizer = load_tokenizer("cl100k_base")
    for record in _records(out, "8k"):
        assert tokenizer.count(record["prompt"]) <= 8192 - RESERVED
        assert record["gold"]["sources"] == ["rag_mini_bioasq"]
        passages = _passages(record["prompt"])
        assert len(passages) > 20 and set(record["gold"]["passages"]) <= set(passages)


def test_a_template_that_changes_the_passages_is_a_one_line_error(
    mirror: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    packaged = (
        Path(__file__).resolve().parents[2] / "task_templates" / "attributing.j2"
    ).read_text()
    (folder / "attributing.j2").write_text(packaged.replace("{{ b.text }}", "{{ b.text[1:] }}"))
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--tasks",
            "attributing",
            "--sources",
            str(mirror),
            "--lengths",
            "2k",
            "--rows",
            "1",
            "--templates",
            str(folder),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 2
    assert (
        "error: context text not found in the prompt" in result.output
        and "--templates" in result.output
    )
    assert "Traceback" not in result.output
