"""``report --html``: one self-contained page with the report, its plots and a sample browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.report.html import (
    AROUND_CHARS,
    HEAD_CHARS,
    TAIL_CHARS,
    gold_spans_of,
    prompt_excerpt,
)


def test_excerpt_shows_the_opening_the_gold_with_context_and_the_ending():
    prompt = "".join(chr(ord("a") + i % 26) for i in range(10_000))
    pieces = prompt_excerpt(prompt, [(5000, 5010)])
    shown = "".join(piece.get("text", "") for piece in pieces)
    skipped = sum(piece.get("skipped", 0) for piece in pieces)
    assert len(shown) + skipped == len(prompt)
    assert [piece for piece in pieces if piece.get("gold")] == [
        {"text": prompt[5000:5010], "gold": True}
    ]
    assert pieces[0] == {"text": prompt[:HEAD_CHARS], "gold": False} and pieces[-1][
        "text"
    ].endswith(prompt[-TAIL_CHARS:])
    assert pieces[1] == {"skipped": 5000 - AROUND_CHARS - HEAD_CHARS}
    assert prompt_excerpt("short", [(0, 2)]) == [
        {"text": "sh", "gold": True},
        {"text": "ort", "gold": False},
    ]


def test_gold_spans_come_from_the_record_or_the_answer_text():
    assert gold_spans_of({"prompt": "x", "gold": {"spans": {"gold": [[3, 9]]}}, "answers": []}) == [
        (3, 9)
    ]
    assert gold_spans_of(
        {"prompt": "the answer is 114 volumes", "gold": {}, "answers": ["114"]}
    ) == [(14, 17)]
    assert (
        gold_spans_of({"prompt": "no", "gold": {}, "answers": ["7"]}) == []
    )  # too short to find reliably


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("html")
    data = root / "data"
    run_generate(
        GenerateOptions(
            tasks=("kv_retrieval", "single_doc_qa"),
            lengths=(("2k", 2048), ("4k", 4096)),
            rows=2,
            seed=1,
            tokenizer="cl100k_base",
            out=data,
            sources="demo",
            workers=1,
        ),
        echo=lambda _: None,
        progress=False,
    )
    records = [
        json.loads(line)
        for path in sorted(data.glob("*/*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    predictions = root / "predictions.jsonl"
    replies = {
        record["id"]: (
            record["answers"][0] if record["row"] == 0 else "</script><script>alert(1)</script>"
        )
        for record in records
    }
    predictions.write_text(
        "".join(json.dumps({"id": i, "prediction": r}) + "\n" for i, r in replies.items())
    )
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "score",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--qa-filter",
            "off",
            "--out",
            str(root / "m.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    out = root / "report"
    result = runner.invoke(
        main,
        [
            "report",
            str(root / "m.json"),
            "--out",
            str(out),
            "--html",
            "--data",
            str(data),
            "--n-boot",
            "10",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"wrote {out / 'report.html'}" in result.output
    return out, data


def test_the_page_is_self_contained_and_carries_every_sample(report_dir: tuple[Path, Path]):
    out, data = report_dir
    page = (out / "report.html").read_text(encoding="utf-8")
    assert (
        not re.search(r'(src|href)="(https?:|//)', page) and "<link" not in page
    )  # nothing to fetch
    assert page.count('src="data:image/png;base64,') >= 3 and "score_vs_length.png" not in page
    payload = json.loads(
        re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    [model] = payload["models"]
    assert len(model["samples"]) == 8 and set(payload["prompts"]) == {
        sample["id"] for sample in model["samples"]
    }
    assert (
        "alert(1)" not in page.split('type="application/json">')[0]
    )  # a reply cannot close the data script early
    assert "</script><script>alert(1)</script>" in {
        sample["prediction"] for sample in model["samples"]
    }
    assert "<table>" in page and "LongBench100 report" in page


@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="needs Debian's chromium (apt-get install chromium)"
)
def test_a_real_browser_filters_and_opens_a_sample(report_dir: tuple[Path, Path], tmp_path: Path):
    out, _ = report_dir
    link = f"{(out / 'report.html').as_uri()}#samples?task=single_doc_qa&length=4k&open=single_doc_qa-4k-0000"
    command = [
        "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [*command, "--dump-dom", link], capture_output=True, text=True, timeout=120
    ).stdout
    assert 'id="count">2 of 8 samples' in dom
    assert 'id="detail-id">single_doc_qa-4k-0000' in dom and "<mark>" in dom.split('id="detail"')[1]
    shot = tmp_path / "page.png"
    subprocess.run(
        [*command, "--window-size=1200,1200", f"--screenshot={shot}", link],
        capture_output=True,
        timeout=120,
    )
    assert shot.read_bytes().startswith(b"\x89PNG")
