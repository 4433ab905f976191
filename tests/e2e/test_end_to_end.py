"""The whole flow a user runs: generate -> predict (against a local OpenAI-compatible stub) -> score -> report.

The stub plays an oracle model that answers every prompt with its record's canonical answer and
answers closed-book prompts with nonsense, so every metric has a known value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from tests.support.openai_stub import OpenAIStub, prompt_text


def test_generate_predict_score_report(mirror: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    data = tmp_path / "data"
    result = runner.invoke(
        main,
        [
            "generate",
            "--sources",
            str(mirror),
            "--lengths",
            "2k,4k,6k,8k",
            "--rows",
            "3",
            "--out",
            str(data),
            "--quiet",
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    answers: dict[str, str] = {}
    for path in data.glob("*/*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            answers[record["prompt"]] = record["answers"][0]

    def oracle(body: dict) -> str:
        return answers.get(prompt_text(body), "zebra quantum marmalade")

    predictions = tmp_path / "preds"
    with OpenAIStub(oracle) as server:
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
                str(predictions),
                "--concurrency",
                "4",
                "--no-progress",
            ],
        )
    assert result.exit_code == 0, result.output

    results = tmp_path / "results.json"
    result = runner.invoke(
        main,
        [
            "score",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--metric",
            "classic",
            "--model-name",
            "oracle",
            "--out",
            str(results),
        ],
    )
    assert result.exit_code == 0, result.output
    scored = json.loads(results.read_text())
    assert scored["model"] == "oracle"
    samples = scored["samples"]
    assert len(samples) == 8 * 4 * 3
    # LongBench's ROUGE-L gives a perfect summary 2PR/(P+R+1e-8) = 0.999999995
    assert all(sample["score"] == pytest.approx(1.0) for sample in samples), [
        s for s in samples if s["score"] != 1.0
    ][:3]
    assert not any(sample["filtered"] for sample in samples)
    overall = scored["aggregates"]["overall"]
    assert overall["base_ability"] == pytest.approx(100.0)

    report = tmp_path / "report"
    result = runner.invoke(main, ["report", str(results), "--out", str(report)])
    assert result.exit_code == 0, result.output
    assert "oracle" in (report / "report.md").read_text()
    assert (report / "lc_vs_length.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
