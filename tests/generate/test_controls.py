"""Control twins: every sample's gold-removed and context-swapped twins, and the checks on them."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.analysis.prompt_parts import gold_block_spans, split_prompt
from longbench100.baselines.check import CONTROL_MARGIN, REAL, run_baselines
from longbench100.catalog.suites import DEFAULT_SUITE, load_suite
from longbench100.cli import main
from longbench100.fitting.refill import PoolText, refill_spans
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.text.tokenization import load_tokenizer
from tests.support.openai_stub import OpenAIStub, prompt_text

PAPER_TASKS = load_suite(DEFAULT_SUITE).tasks
SYNTHETIC = ("json_kv", "niah_multikey_2", "variable_tracking", "common_words", "frequent_words")
LENGTHS = (("2k", 2048), ("3000", 3000))


def _options(mirror: Path, out: Path, tasks: tuple[str, ...], **changes) -> GenerateOptions:
    base = dict(
        tasks=tasks,
        lengths=LENGTHS,
        rows=4,
        seed=11,
        tokenizer="cl100k_base",
        out=out,
        sources=str(mirror),
        workers=1,
    )
    return GenerateOptions(**{**base, **changes})


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def generated(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("controls") / "out"
    run_generate(
        _options(mirror, out, PAPER_TASKS + SYNTHETIC), echo=lambda _: None, progress=False
    )
    return out


def test_every_sample_gets_both_twins_within_budget_with_its_answer_key(generated: Path) -> None:
    tokenizer = load_tokenizer("cl100k_base")
    manifest = json.loads((generated / "manifest.json").read_text())
    for task in PAPER_TASKS + SYNTHETIC:
        for label, budget in LENGTHS:
            real = {record["id"]: record for record in _lines(generated / task / f"{label}.jsonl")}
            twins = _lines(generated / "controls" / task / f"{label}.jsonl")
            kinds = {(twin["twin_of"], twin["control"]) for twin in twins}
            assert kinds == {
                (sample, kind) for sample in real for kind in ("gold_removed", "context_swapped")
            }, task
            for twin in twins:
                sample = real[twin["twin_of"]]
                assert twin["id"] == f"{sample['id']}-{twin['control']}"
                assert (twin["answers"], twin["question"], twin["row"]) == (
                    sample["answers"],
                    sample["question"],
                    sample["row"],
                )
                assert twin["gold"].get("options") == sample["gold"].get("options")
                assert twin["prompt"] != sample["prompt"]
                assert tokenizer.count(twin["prompt"]) == twin["prompt_tokens"] <= budget
                assert twin["prompt_tokens"] >= 0.9 * sample["prompt_tokens"], twin["id"]
            path = f"controls/{task}/{label}.jsonl"
            assert manifest["controls"]["files"][path]["rows"] == {
                "gold_removed": len(real),
                "context_swapped": len(real),
            }


def test_gold_removed_twin_holds_no_gold_and_keeps_the_rest(generated: Path) -> None:
    for task in PAPER_TASKS + SYNTHETIC:
        real = {record["id"]: record for record in _lines(generated / task / "2k.jsonl")}
        for twin in _lines(generated / "controls" / task / "2k.jsonl"):
            if twin["control"] != "gold_removed":
                continue
            sample = real[twin["twin_of"]]
            parts = split_prompt(task, sample["prompt"], "test", sample["gold"])
            gold_texts = [
                parts.context[a:b] for a, b in gold_block_spans(task, sample["gold"], parts.blocks)
            ]
            for text in gold_texts:
                body = (
                    text.split(":\n", 1)[1] if text.startswith(("Passage ", "Paragraph ")) else text
                )
                assert body.strip() not in twin["prompt"], (twin["id"], body[:80])
            assert twin["prompt"].startswith(parts.head) and twin["prompt"].endswith(parts.tail)


def test_gold_removed_twin_fills_from_the_sources_of_the_prompts_own_padding(
    generated: Path,
) -> None:
    checked = 0
    for task in PAPER_TASKS:
        for label, _ in LENGTHS:
            real = {record["id"]: record for record in _lines(generated / task / f"{label}.jsonl")}
            for twin in _lines(generated / "controls" / task / f"{label}.jsonl"):
                padding = {d["source"] for d in real[twin["twin_of"]].get("distractors") or ()}
                if twin["control"] != "gold_removed" or not padding:
                    continue
                filled = {document["source"] for document in twin["filled_from"]}
                assert filled and filled <= padding, (twin["id"], filled, padding)
                checked += 1
    assert checked


def test_context_swapped_twin_has_another_rows_context_and_this_rows_question(
    generated: Path,
) -> None:
    for task in PAPER_TASKS:
        real = {record["id"]: record for record in _lines(generated / task / "2k.jsonl")}
        for twin in _lines(generated / "controls" / task / "2k.jsonl"):
            if twin["control"] != "context_swapped":
                continue
            sample, other = real[twin["twin_of"]], real[twin["context_of"]]
            own, theirs = (
                split_prompt(task, record["prompt"], "test", record["gold"])
                for record in (sample, other)
            )
            assert other["id"] != sample["id"]
            assert (
                twin["prompt"]
                == own.head
                + own.joint
                + twin["prompt"][len(own.head + own.joint) : -len(own.tail)]
                + own.tail
            )
            assert theirs.context.startswith(
                twin["prompt"][len(own.head + own.joint) : -len(own.tail)][:2000]
            )


def test_data_files_are_the_same_bytes_without_controls(
    generated: Path, mirror: Path, tmp_path: Path
) -> None:
    out = tmp_path / "plain"
    run_generate(
        _options(mirror, out, PAPER_TASKS + SYNTHETIC, controls=False),
        echo=lambda _: None,
        progress=False,
    )
    assert not (out / "controls").exists()
    assert "controls" not in json.loads((out / "manifest.json").read_text())
    for path in sorted(out.glob("*/*.jsonl")):
        assert path.read_bytes() == (generated / path.relative_to(out)).read_bytes(), path


def test_baselines_judge_each_control_kind_against_chance_plus_the_margin(generated: Path) -> None:
    run = run_baselines(generated)
    on = {(cell.task, cell.label): set() for cell in run.cells}
    for cell in run.cells:
        on[(cell.task, cell.label)].add(cell.on)
        if cell.on != REAL:
            assert cell.ceiling == pytest.approx(cell.chance + CONTROL_MARGIN)
            assert all(baseline.judged for baseline in cell.baselines)
    assert all(kinds == {REAL, "gold_removed", "context_swapped"} for kinds in on.values())
    assert {cell.on for cell in run_baselines(generated, controls=False).cells} == {REAL}


def test_refill_replaces_each_span_by_pool_text_within_the_budget() -> None:
    tokenizer = load_tokenizer("cl100k_base")
    gold = "The vault code is 4417 and only Mara knows it."
    prompt = (
        f"Read this.\n\nSome padding text here. {gold} More padding text follows."
        "\n\nQuestion: what is the code?"
    )
    start = prompt.index(gold)
    pool = [
        (text, tokenizer.count(text))
        for text in (
            "Rivers carry sediment to the sea. Deltas form where they slow down.",
            "Bees visit many flowers each day.",
        )
    ]
    budget = tokenizer.count(prompt)
    refilled = refill_spans(
        tokenizer,
        tokenizer.count,
        prompt,
        [(start, start + len(gold))],
        PoolText(pool, random.Random(1), None),
        budget,
    )
    assert refilled is not None
    text, tokens = refilled
    assert (
        "4417" not in text
        and text.startswith(prompt[:start])
        and text.endswith(prompt[start + len(gold) :])
    )
    assert tokens == tokenizer.count(text) <= budget
    assert (
        refill_spans(
            tokenizer,
            tokenizer.count,
            prompt,
            [(start, start + len(gold))],
            PoolText([], random.Random(1), None),
            budget,
        )
        is None
    )


def _question_part(prompt: str) -> str:
    """What a prompt asks after its context: its closing question on (counting_stars' options)."""
    return prompt[prompt.rfind("Question:") :]


def _numbers_reader(body: dict) -> str:
    """A model that reads the gold's cue: the option with the most of its numbers in the context."""
    prompt = prompt_text(body)
    cut = prompt.rfind("Question:")
    present = set(re.findall(r"\d+", prompt[:cut]))
    options = re.findall(r"^Option (\d+): \[([^\]]*)\]$", prompt[cut:], re.MULTILINE)
    return max(
        options, key=lambda option: sum(value in present for value in re.findall(r"\d+", option[1]))
    )[0]


@pytest.mark.parametrize(("name", "flagged"), [("memoriser", True), ("reader", False)])
def test_score_flags_a_model_that_answers_without_the_gold(
    mirror: Path, tmp_path: Path, name: str, flagged: bool
) -> None:
    data = tmp_path / "data"
    run_generate(
        _options(mirror, data, ("counting_stars",), rows=8), echo=lambda _: None, progress=False
    )
    memorised = {
        _question_part(record["prompt"]): record["answers"][0]
        for path in data.glob("*/*.jsonl")
        for record in _lines(path)
    }

    def responder(
        body: dict,
    ) -> str:  # the memoriser knows each question's answer whatever the context holds
        return (
            memorised[_question_part(prompt_text(body))]
            if name == "memoriser"
            else _numbers_reader(body)
        )

    runner = CliRunner()
    with OpenAIStub(responder) as server:
        result = runner.invoke(
            main,
            [
                "predict",
                "--data",
                str(data),
                "--model",
                "stub-model",
                "--base-url",
                server.base_url,
                "--out",
                str(tmp_path / "preds"),
                "--controls",
                "--no-progress",
            ],
        )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "preds" / "controls" / "counting_stars" / "2k.jsonl").is_file()
    results = tmp_path / "results.json"
    result = runner.invoke(
        main,
        [
            "score",
            "--data",
            str(data),
            "--predictions",
            str(tmp_path / "preds"),
            "--out",
            str(results),
            "--controls",
            "--model-name",
            name,
            "--base-lengths",
            "2k",
        ],
    )
    assert result.exit_code == 0, result.output
    block = json.loads(results.read_text())["aggregates"]["controls"]["counting_stars"]
    assert {label: cell["flagged"] for label, cell in block.items()} == {
        "2k": flagged,
        "3000": flagged,
    }
    for cell in block.values():
        assert (
            cell["chance"] == pytest.approx(25.0)
            and cell["gold_removed"]["n"] == cell["context_swapped"]["n"] == 8
        )
        if flagged:
            assert cell["gold_removed"]["score"] == cell["context_swapped"]["score"] == 100.0
    plain = runner.invoke(
        main,
        [
            "score",
            "--data",
            str(data),
            "--predictions",
            str(tmp_path / "preds"),
            "--out",
            str(tmp_path / "plain.json"),
            "--base-lengths",
            "2k",
        ],
    )
    assert plain.exit_code == 0, plain.output
    assert "controls" not in json.loads((tmp_path / "plain.json").read_text())["aggregates"]
    result = runner.invoke(main, ["report", str(results), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Control twins" in report
    assert ("⚠ above chance" in report) == flagged
    assert (
        f"**{name}** (counting_stars 2k): scores above chance on its control twins" in report
    ) == flagged
