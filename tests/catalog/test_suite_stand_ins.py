"""A suite task marked ``stand_ins = false`` is built from its anchor's own data only: where only a stand-in
source could serve it (helmet's rerank on a mirror without HELMET's archive), a ``--suite`` run skips it with a
one-line reason kept in the manifest and shown by ``inspect``; naming the task without ``--suite`` builds the
stand-in; the anchor's data, when present, is used as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.suites import load_suite, parse_suite_file
from longbench100.cli import main
from longbench100.core.errors import UserError
from tests.support.fixture_mirror import write_mirror
from tests.support.generate_helpers import generate


@pytest.fixture(scope="module")
def graded_mirror(tmp_path_factory) -> Path:
    return write_mirror(
        tmp_path_factory.mktemp("anchor"),
        only={"helmet_msmarco", "rag_mini_bioasq_rerank", "cnn_dailymail"},
    )


@pytest.fixture(scope="module")
def stand_in_mirror(graded_mirror: Path, tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("stand-in") / "mirror"
    shutil.copytree(
        graded_mirror, copy, ignore=lambda folder, names: ["HELMET"] if "HELMET" in names else []
    )
    return copy


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def test_the_helmet_suite_keeps_rerank_to_helmets_own_data() -> None:
    assert load_suite("helmet").without_stand_ins == ("rerank",)
    shown = CliRunner().invoke(main, ["suites", "show", "helmet"]).output
    assert (
        "  rerank (ndcg_at_10); its anchor data only, no stand-in source\n" in shown
        and "  json_kv (substring_match)\n" in shown
    )
    assert load_suite("ruler").without_stand_ins == (
        "qa_1",
        "qa_2",
    )  # RULER's QA from its own datasets only
    assert all(not load_suite(name).without_stand_ins for name in ("100-longbench", "ethic"))


def test_stand_ins_must_be_a_boolean(tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(
        'name = "s"\nlengths = ["8k"]\nbase_lengths = ["8k"]\n[tasks.rerank]\nstand_ins = "no"\n'
    )
    with pytest.raises(UserError, match=r"tasks\.rerank\.stand_ins must be true or false"):
        parse_suite_file(suite)


def test_a_suite_run_skips_the_task_its_stand_in_alone_would_serve(
    stand_in_mirror: Path, tmp_path: Path
) -> None:
    out = generate(
        tmp_path / "data",
        "--suite",
        "helmet",
        "--tasks",
        "rerank,json_kv",
        "--lengths",
        "2k",
        "--rows",
        "2",
        "--sources",
        str(stand_in_mirror),
    )
    assert not (out / "rerank").exists() and (out / "json_kv" / "2k.jsonl").exists()
    skipped = _manifest(out)["skipped_tasks"]
    assert (
        list(skipped) == ["rerank"]
        and "helmet_msmarco" in skipped["rerank"]
        and "rag_mini_bioasq_rerank" in skipped["rerank"]
    )
    assert _manifest(out)["options"]["tasks"] == ["json_kv"]
    shown = CliRunner().invoke(main, ["inspect", str(out)])
    assert shown.exit_code == 0 and f"skipped: {skipped['rerank']}" in shown.output


def test_asking_the_suite_for_that_task_alone_is_a_one_line_error(
    stand_in_mirror: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--quiet",
            "--workers",
            "1",
            "--suite",
            "helmet",
            "--tasks",
            "rerank",
            "--lengths",
            "2k",
            "--rows",
            "2",
            "--sources",
            str(stand_in_mirror),
            "--out",
            str(tmp_path / "data"),
        ],
    )
    assert result.exit_code == 2
    assert result.output.startswith(
        "error: nothing to build: rerank: suite helmet builds it from helmet_msmarco only"
    )
    assert len(result.output.strip().splitlines()) == 1


def test_naming_the_task_without_a_suite_builds_the_stand_in(
    stand_in_mirror: Path, tmp_path: Path
) -> None:
    out = generate(
        tmp_path / "data",
        "--tasks",
        "rerank",
        "--lengths",
        "2k",
        "--rows",
        "2",
        "--sources",
        str(stand_in_mirror),
    )
    manifest = _manifest(out)
    assert (
        "skipped_tasks" not in manifest
        and manifest["sources"]["rag_mini_bioasq_rerank"]["stand_in_for"] == "helmet_msmarco"
    )
    assert (out / "rerank" / "2k.jsonl").read_text().count("\n") == 2


def test_the_anchors_own_data_is_used_by_the_suite(graded_mirror: Path, tmp_path: Path) -> None:
    out = generate(
        tmp_path / "data",
        "--suite",
        "helmet",
        "--tasks",
        "rerank",
        "--lengths",
        "2k",
        "--rows",
        "2",
        "--sources",
        str(graded_mirror),
    )
    manifest = _manifest(out)
    assert "skipped_tasks" not in manifest and "helmet_msmarco" in manifest["sources"]
    assert (out / "rerank" / "2k.jsonl").exists()


def test_a_task_with_real_sources_besides_its_stand_ins_keeps_them_out_of_its_ground_truth(
    tmp_path_factory, tmp_path: Path
) -> None:
    mirror = write_mirror(
        tmp_path_factory.mktemp("mixed"),
        only={"leval_gov_report_summ", "patent_summ", "meeting_summ"},
    )
    suite = tmp_path / "mine.toml"
    suite.write_text(
        'name = "mine"\nlengths = ["2k"]\nbase_lengths = ["2k"]\n[tasks.single_doc_sum]\nstand_ins = false\n'
    )
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--quiet",
            "--workers",
            "1",
            "--suite",
            str(suite),
            "--rows",
            "6",
            "--sources",
            str(mirror),
            "--out",
            str(tmp_path / "data"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (
        "note: single_doc_sum: suite mine takes no stand-in: its ground truth leaves out leval_gov_report_summ"
        in result.output
    )
    manifest = _manifest(tmp_path / "data")
    assert manifest["stand_ins_left_out"] == {"single_doc_sum": ["leval_gov_report_summ"]}
    written = manifest["tasks"]["single_doc_sum"]["lengths"]["2k"]["sources"]
    assert written and "leval_gov_report_summ" not in written
    # without the suite's rule the stand-in serves again
    plain = generate(
        tmp_path / "plain",
        "--tasks",
        "single_doc_sum",
        "--lengths",
        "2k",
        "--rows",
        "6",
        "--sources",
        str(mirror),
    )
    assert "stand_ins_left_out" not in _manifest(plain)
    assert (
        "leval_gov_report_summ"
        in _manifest(plain)["tasks"]["single_doc_sum"]["lengths"]["2k"]["sources"]
    )


def test_a_skipped_task_is_named_by_score_and_report(stand_in_mirror: Path, tmp_path: Path) -> None:
    from tests.scoring.test_predictions import write_predictions

    data = generate(
        tmp_path / "data",
        "--suite",
        "helmet",
        "--tasks",
        "rerank,json_kv",
        "--lengths",
        "8k,16k",
        "--rows",
        "2",
        "--sources",
        str(stand_in_mirror),
    )
    reason = _manifest(data)["skipped_tasks"]["rerank"]
    predictions = write_predictions(
        tmp_path / "model", data, answer=lambda record: record["answers"][0]
    )
    scored = CliRunner().invoke(
        main,
        [
            "score",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(tmp_path / "r.json"),
        ],
    )
    assert scored.exit_code == 0, scored.output
    assert "rerank: not generated" in scored.output
    assert json.loads((tmp_path / "r.json").read_text())["skipped_tasks"] == {"rerank": reason}
    reported = CliRunner().invoke(
        main, ["report", str(tmp_path / "r.json"), "--out", str(tmp_path / "report")]
    )
    assert reported.exit_code == 0, reported.output
    assert f"- model: rerank: {reason}" in (tmp_path / "report" / "report.md").read_text()
