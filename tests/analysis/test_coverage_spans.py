"""Coverage by construction from recorded ``gold["spans"]``: the RULER/HELMET recall tasks and attributing,
recounted here from the prompt text; the prompt split at the spans; the evaluator (local stub) and the
Dolce probes on such data; malformed spans."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.analysis.prompt_parts import IDK_INSTRUCTION, split_prompt
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.fitting.spans import embedded_spans
from longbench100.judge.setup import PREFLIGHT_PROMPT
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate_in_process
from tests.support.openai_stub import OpenAIStub, prompt_text

TASKS = (
    "niah_single_2",
    "niah_multivalue",
    "json_kv",
    "variable_tracking",
    "common_words",
    "frequent_words",
    "attributing",
)


@pytest.fixture(scope="module")
def data(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spans") / "data"
    generate_in_process(out, TASKS, (("2k", 2048),), 2, sources=str(mirror), seed=9)
    return out


def _records(data: Path) -> list[dict]:
    return [
        json.loads(line)
        for task in TASKS
        for line in (data / task / "2k.jsonl").read_text().splitlines()
    ]


def _between(prompt: str, before: str, after: str) -> str:
    return prompt.split(before, 1)[1].rsplit(after, 1)[0]


def _context_and_gold(record: dict) -> tuple[str, list[str]]:
    """The context and gold texts of a recall-task prompt, cut by hand from the packaged templates' wording."""
    prompt, gold, task = record["prompt"], record["gold"], record["task"]
    if task.startswith("niah_"):
        return _between(prompt, "asked about them afterwards.\n\n", "\n\nQuestion: "), gold[
            "needles"
        ]
    if task == "json_kv":
        return _between(prompt, "is a UUID.\n\n", "\n\nQuestion: "), [
            json.dumps(gold["key"]) + ": " + json.dumps(record["answers"][0])
        ]
    if task == "variable_tracking":
        return _between(prompt, "Now the text to work on.\n\n", "\n\nQuestion: "), gold["chain"]
    context = _between(
        prompt,
        "Now the list to work on.\n\n"
        if task == "common_words"
        else "three coded words that appear most often.\n\n",
        "\n\nQuestion: ",
    )
    return context, [context]


def test_recall_tasks_ic_is_their_gold_tokens_over_context_tokens(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "coverage.json"
    result = CliRunner().invoke(main, ["coverage", "--data", str(data), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    rows = {row["id"]: row for row in report["samples"]}
    tokenizer = load_tokenizer("cl100k_base")
    for record in _records(data):
        if record["task"] == "attributing":
            continue
        context, gold = _context_and_gold(record)
        assert all(text in context for text in gold)
        expected = round(
            min(sum(tokenizer.count(text) for text in gold) / tokenizer.count(context), 1.0), 4
        )
        assert rows[record["id"]]["ic"] == expected, record["id"]
        assert rows[record["id"]]["context_tokens"] == tokenizer.count(context)
    table = report["construction"]
    for task in ("niah_single_2", "niah_multivalue", "json_kv", "variable_tracking"):
        assert 0 < table[task]["2k"]["ic"] < 0.1
    assert table["common_words"]["2k"]["ic"] == table["frequent_words"]["2k"]["ic"] == 1.0
    assert table["attributing"]["2k"]["ic_min"] >= 0.99  # all but the first passage's heading


def test_the_split_at_spans_is_exact_and_starts_at_the_first_heading(data: Path) -> None:
    for record in _records(data):
        parts = split_prompt(record["task"], record["prompt"], "test", record["gold"])
        assert parts.head + parts.joint + parts.context + parts.tail == record["prompt"]
        assert (
            "".join(parts.context[a:b] for a, b in (block.span for block in parts.blocks))
            == parts.context
        )
        start, end = record["gold"]["spans"]["context"]
        assert (
            record["prompt"].endswith(parts.tail) and len(parts.tail) == len(record["prompt"]) - end
        )
        if record["task"] == "attributing":
            assert parts.context.startswith("Passage 1:\n") and parts.head.endswith(
                "not its sources."
            )
        else:
            assert len(parts.head) + len(parts.joint) == start


@pytest.mark.parametrize(
    "spans, message",
    [
        ({"context": [5]}, "gold.spans is not"),
        ({"context": [0, 10**6], "gold": []}, "outside the prompt"),
        ({"context": [10, 40], "gold": [[5, 20]]}, "lies outside the context"),
        ({"context": [10, 40], "gold": [[12, 20], [15, 30]]}, "overlaps another"),
    ],
)
def test_malformed_spans_are_one_line_errors(spans: dict, message: str) -> None:
    with pytest.raises(UserError, match=message):
        split_prompt("attributing", "x" * 100, "data.jsonl:3", {"spans": spans})


def oracle(body: dict) -> str:
    """Says 1 for a fragment holding a whole magic-number sentence, 0 otherwise."""
    if prompt_text(body) == PREFLIGHT_PROMPT:
        return "OK"
    fragment = (
        prompt_text(body)
        .split("[Fragment of a longer text]\n", 1)[1]
        .split("\n[End of fragment]", 1)[0]
    )
    needed = re.search(r"One of the special magic numbers for \S+ is: \d+\.", fragment) is not None
    return f"Query understanding: a question.\nFragment understanding: text.\nAssessment: see above.\nFinal score: {int(needed)}"


def test_evaluator_runs_on_span_data_and_is_validated_against_the_spans(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "coverage.json"
    with OpenAIStub(oracle) as server:
        result = CliRunner().invoke(
            main,
            [
                "coverage",
                "--data",
                str(data),
                "--tasks",
                "niah_single_2,niah_multivalue",
                "--chunk-tokens",
                "200",
                "--evaluator-model",
                "stub-model",
                "--evaluator-base-url",
                server.base_url,
                "--out",
                str(out),
            ],
        )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    for task in ("niah_single_2", "niah_multivalue"):
        validation = report["evaluator"]["validation"][task]
        assert (
            validation["precision"] == 1.0
            and validation["tp"] >= 2
            and validation["undecided"] == 0
        )
    for row in report["samples"]:
        assert 1 <= sum(row["gold_chunks"]) <= 4 < row["chunks"]


def test_dolce_probes_work_on_span_data(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "probes"
    result = CliRunner().invoke(
        main,
        [
            "dolce",
            "probes",
            "--data",
            str(data),
            "--out",
            str(out),
            "--windows",
            "0,2,all",
            "--tasks",
            "niah_single_2,attributing",
        ],
    )
    assert result.exit_code == 0, result.output
    originals = {record["id"]: record for record in _records(data)}
    probes = [
        json.loads(line)
        for path in sorted(out.glob("*/*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert {probe["task"] for probe in probes} == {"niah_single_2", "attributing"}
    for probe in probes:
        origin = probe["gold"]["dolce"]
        assert origin["units"] == "sentence" and origin["gold_units"] is not None
        if origin["C"] == origin["L"]:
            assert (
                probe["prompt"].replace("\n\n" + IDK_INSTRUCTION, "", 1)
                == originals[origin["problem"]]["prompt"]
            )
        if origin["C"] == 0:  # no context at all: no passage, no needle
            assert "Passage " not in probe["prompt"]
            assert not any(needle in probe["prompt"] for needle in probe["gold"].get("needles", []))


@pytest.mark.parametrize(
    "prompt, context, expected_at, start",
    [
        ("Read: CONTEXT. Answer.", "CONTEXT", 6, 6),  # where the builder rendered it
        ("abab-ab", "ab", 2, 0),  # an earlier occurrence wins, as a search finds it
        ("Read: CONTEXT. Answer.", "CONTEXT", 3, 6),  # a wrong expectation falls back to the search
        ("Read: CONTEXT. Answer.", "CONTEXT", None, 6),
    ],
)
def test_embedded_spans_from_an_expected_offset_equal_a_search(
    prompt: str, context: str, expected_at: int | None, start: int
) -> None:
    spans = embedded_spans(prompt, context, [(1, 2)], expected_at)
    assert spans == {"context": [start, start + len(context)], "gold": [[start + 1, start + 2]]}
    assert spans == embedded_spans(prompt, context, [(1, 2)])
