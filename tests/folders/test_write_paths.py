"""The smaller write-path and wording cases of issue 47, each through the CLI: a read-only cache
refused before any paid call, a template file that is not UTF-8, locks on report and export, a demo
length far beyond what its sources hold, sources verify telling a log what it loads, and the
annotator's progress named as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.lock import output_lock
from tests.support.generate_helpers import assert_one_line_error, generate_from_demo
from tests.support.openai_stub import OpenAIStub


def invoke(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("writes")
    data = root / "data"
    generate_from_demo(data, ("single_doc_qa",), (("2k", 2048),), rows=2)
    predictions = root / "predictions.jsonl"
    rows = [
        json.loads(line) for line in (data / "single_doc_qa" / "2k.jsonl").read_text().splitlines()
    ]
    predictions.write_text(
        "".join(
            json.dumps({"id": r["id"], "prediction": "x", "closed_book_prediction": "y"}) + "\n"
            for r in rows
        )
    )
    results = root / "results.json"
    assert invoke("score", "--data", data, "--predictions", predictions, "--out", results)[0] == 0
    return {"data": data, "predictions": predictions, "results": results}


def test_a_read_only_cache_is_refused_before_any_judge_call(
    world: dict[str, Path], read_only_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(read_only_dir / "cache"))
    with OpenAIStub(lambda body: '{"score": 1}') as server:
        code, output = invoke(
            "score",
            "--data",
            world["data"],
            "--predictions",
            world["predictions"],
            "--judge-model",
            server.model,
            "--judge-base-url",
            server.base_url,
            "--out",
            tmp_path / "r.json",
        )
        assert not server.bodies  # no paid call went out
    assert_one_line_error(
        code, output, "the cache folder for the judge's replies", "LONGBENCH100_CACHE"
    )
    assert not (tmp_path / "r.json").exists()


def test_sources_verify_refuses_a_read_only_cache(
    read_only_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(read_only_dir / "cache"))
    assert_one_line_error(
        *invoke("sources", "verify", "--sources", "demo"), "the cache folder", "LONGBENCH100_CACHE"
    )


def test_sources_verify_tells_a_log_what_it_loads():
    code, output = invoke("sources", "verify", "--sources", "demo")
    assert code == 0, output
    assert "demo_qa: loading and counting tokens ..." in output


def test_a_template_that_is_not_utf8_is_one_line(tmp_path: Path):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "kv_retrieval.j2").write_bytes(b"Find the value \xff\xfe {{ question }}\n")
    code, output = invoke(
        "generate",
        "--sources",
        "demo",
        "--tasks",
        "kv_retrieval",
        "--lengths",
        "2k",
        "--rows",
        "1",
        "--templates",
        templates,
        "--out",
        tmp_path / "out",
    )
    assert_one_line_error(code, output, "template kv_retrieval.j2: not valid UTF-8")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["report", "export"])
def test_report_and_export_take_the_output_lock(
    world: dict[str, Path], tmp_path: Path, command: str
):
    out = tmp_path / "out"
    args = (
        ["report", world["results"], "--out", out]
        if command == "report"
        else ["export", "lm-eval", world["data"], out]
    )
    with output_lock(out, "--out"):
        assert_one_line_error(*invoke(*args), "another longbench100 run", "is writing there")
    assert invoke(*args)[0] == 0


def test_a_length_far_beyond_the_sources_is_warned_about(tmp_path: Path):
    code, output = invoke(
        "generate",
        "--sources",
        "demo",
        "--tasks",
        "single_doc_qa",
        "--lengths",
        "100000k",
        "--rows",
        "1",
        "--quiet",
        "--out",
        tmp_path / "out",
    )
    assert code == 0, output
    about_the_cell = [line for line in output.splitlines() if "single_doc_qa 100000k" in line]
    assert len(about_the_cell) == 1, output  # one line for one cause
    assert about_the_cell[0].startswith("underfilled: single_doc_qa 100000k: 1 row fill only 0.0")
    assert "too little distinct text" in about_the_cell[0]
    assert "single_doc_qa" in {
        entry["task"]
        for entry in json.loads((tmp_path / "out" / "manifest.json").read_text())["underfilled"]
    }
    code, output = invoke(
        "generate",
        "--sources",
        "demo",
        "--tasks",
        "single_doc_qa",
        "--lengths",
        "2k",
        "--rows",
        "1",
        "--quiet",
        "--out",
        tmp_path / "fits",
    )
    assert code == 0 and "the prompts fill" not in output and "underfilled" not in output


def test_the_annotator_is_named_in_its_progress(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from longbench100.annotation.annotator import annotation_prompt, make_annotator
    from longbench100.judge.annotation_rubric import SUMMARY
    from longbench100.llm.options import JudgeOptions

    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    with OpenAIStub(lambda body: "1. A sentence.") as server:
        annotator = make_annotator(JudgeOptions(model=server.model, base_url=server.base_url))
        annotator.grade([annotation_prompt(SUMMARY, "Some chunk of text.")], progress=True)
    err = capsys.readouterr().err
    assert "annotator: 1 calls to do" in err and "judge:" not in err
