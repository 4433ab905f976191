"""The ``report`` command: markdown tables, PNG plots and user errors."""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length
from longbench100.report.load import load_results
from longbench100.report.plots import (
    FEW_DEPTH_SAMPLES,
    MAX_DEPTH_LINES,
    lc_by_task_figure,
    score_by_depth_figure,
)
from longbench100.report.table import fmt, ranks
from longbench100.scoring.aggregates.aggregate import aggregate
from longbench100.scoring.results import RESULTS_SCHEMA
from longbench100.scoring.samples import ScoredSample

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BASE = ["2k", "4k", "6k"]
TASKS = ["kv_retrieval", "single_doc_qa"]


def model_samples(
    points: dict[str, float], n: int = 20, tasks: list[str] = TASKS
) -> list[ScoredSample]:
    """``n`` binary samples per task and length whose mean is ``points[label]`` (0-100)."""
    samples = []
    for task in tasks:
        for label, value in points.items():
            ones = round(value * n / 100)
            samples += [
                ScoredSample(
                    f"{task}-{label}-{row:04d}",
                    task,
                    label,
                    parse_length(label),
                    row,
                    float(row < ones),
                )
                for row in range(n)
            ]
    return samples


def settings(**changes) -> dict:
    """A results.json ``settings`` block (classic metrics, QA filter 0.5), with ``changes`` applied."""
    block = {
        "metric_mode": "auto",
        "metrics": {"kv_retrieval": "accuracy", "single_doc_qa": "qa_f1"},
        "rouge_variant": "longbench",
        "judge": None,
        "qa_filter": 0.5,
        "tokenizer": "tiktoken:cl100k_base",
        "base_lengths": BASE,
        "data_fingerprint": "c" * 64,
        "suite": "100-longbench",
    }
    block.update(changes)
    return block


def write_results(
    path: Path,
    model: str,
    samples: list[ScoredSample],
    base: list[str] = BASE,
    manifest_sha256: str | None = None,
    settings: dict | None = None,
    depth: dict | None = None,
) -> Path:
    """Write a results.json the way ``score`` does (with a ``data`` block when ``manifest_sha256`` is given,
    a ``settings`` block when ``settings`` is, and ``aggregates["depth"]`` when ``depth`` is)."""
    data = {
        "schema": RESULTS_SCHEMA,
        "model": model,
        "samples": [s.to_json() for s in samples],
        "aggregates": aggregate(samples, base, n_boot=100),
    }
    if manifest_sha256 is not None:
        data["data"] = {"path": "out", "manifest_sha256": manifest_sha256}
    if settings is not None:
        data["settings"] = settings
    if depth is not None:
        data["aggregates"]["depth"] = depth
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run(*args: str):
    """Invoke the CLI and return click's result."""
    return CliRunner().invoke(main, ["report", *args])


GOOD = {"2k": 80, "4k": 80, "6k": 80, "8k": 80, "16k": 70}
BAD = {"2k": 90, "4k": 90, "6k": 90, "8k": 50, "16k": 20}


def test_report_writes_tables_and_plots(tmp_path: Path):
    good = write_results(tmp_path / "good.json", "good-model", model_samples(GOOD))
    bad = write_results(tmp_path / "bad.json", "bad-model", model_samples(BAD))
    out = tmp_path / "report"
    result = run(str(bad), str(good), "--out", str(out), "--n-boot", "200")
    assert result.exit_code == 0, result.output
    for name in ("report.md", "score_vs_length.png", "lc_vs_length.png", "lc_by_task.png"):
        assert f"wrote {out / name}" in result.output
    for name in ("score_vs_length.png", "lc_vs_length.png", "lc_by_task.png"):
        assert (out / name).read_bytes().startswith(PNG_SIGNATURE)
        assert (out / name).stat().st_size > 10_000

    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "| Model | Base | 8k | 8k LC% | 16k | 16k LC% | Avg score | Avg LC% | Rank (avg LC) | Rank (avg score) |"
        in report
    )
    # good: base 80, LC 0 and -12.5 -> avg score 75, avg LC -6.25; bad: base 90, 8k -44.4, 16k -77.8.
    assert "| good-model | 80.0 | 80.0 | 0.0 | 70.0 | -12.5 | 75.0 | -6.2 | 1 | 1 |" in report
    assert "| bad-model | 90.0 | 50.0 | -44.4 | 20.0 | -77.8 | 35.0 | -61.1 | 2 | 2 |" in report
    assert report.index("| good-model | 80.0") < report.index(
        "| bad-model | 90.0"
    )  # ordered by rank
    assert "### kv_retrieval" in report and "### single_doc_qa" in report
    assert (
        report.count("| good-model | 80.0 | 80.0 | 0.0 | 70.0 | -12.5 |") == 3
    )  # overall and both tasks
    assert "| 8k | 40 | 0 | 0 | 80.0 | [" in report  # interval table: n summed over tasks
    assert "| bad-model | good-model | -54.9 | [" in report
    assert "**yes**" in report
    assert "![Score vs length](score_vs_length.png)" in report


def test_single_model_has_no_comparison(tmp_path: Path):
    path = write_results(tmp_path / "one.json", "solo", model_samples(GOOD))
    result = run(str(path), "--out", str(tmp_path / "out"), "--n-boot", "50")
    assert result.exit_code == 0, result.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "Paired comparison" not in report
    assert "## Warnings\n\nNone." in report


def test_identical_models_are_not_significant(tmp_path: Path):
    samples = model_samples(BAD)
    a = write_results(tmp_path / "a.json", "a", samples)
    b = write_results(tmp_path / "b.json", "b", samples)
    assert run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "100").exit_code == 0
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| a | b | 0.0 | [0.0, 0.0] | 1.000 | 200 | no |" in report


def test_small_base_and_missing_base_are_shown(tmp_path: Path):
    tiny = write_results(
        tmp_path / "tiny.json",
        "tiny",
        model_samples({"2k": 5, "4k": 5, "6k": 5, "8k": 5, "16k": 0}),
    )
    gap = write_results(
        tmp_path / "gap.json", "gap", model_samples({"2k": 50, "4k": 50, "8k": 40, "16k": 30})
    )
    result = run(str(tiny), str(gap), "--out", str(tmp_path / "out"), "--n-boot", "50")
    assert result.exit_code == 0, result.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| tiny | 5.0† |" in report
    assert "† Base Ability below 10 points" in report
    assert (
        "| gap | 50.0 | 40.0 | -20.0 | 30.0 | -40.0 | 35.0 | -30.0 | 1 | 1 |" in report
    )  # base from 2k, 4k
    assert (
        "**gap** (kv_retrieval): Base Ability is the mean over 2k, 4k only: no graded samples at base length 6k"
        in report
    )
    assert "**tiny** (overall): Base Ability 5.0 is below 10 points" in report


def test_each_task_says_which_base_lengths_formed_its_base_and_their_samples(tmp_path: Path):
    gap = write_results(
        tmp_path / "gap.json", "gap", model_samples({"2k": 50, "4k": 50, "8k": 40, "16k": 30}, n=12)
    )
    assert run(str(gap), "--out", str(tmp_path / "out"), "--n-boot", "0").exit_code == 0
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    section = report[report.index("### kv_retrieval") : report.index("### single_doc_qa")]
    assert "Base Ability from: gap 2k (12 samples), 4k (12 samples)." in section


def test_missing_file_is_a_user_error(tmp_path: Path):
    result = run(str(tmp_path / "nope.json"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "error: results file not found" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"model": "m"}', "schema is missing"),
        ("[1, 2]", "the content must be an object, not a list"),
        (
            '{"schema": "longbench100.results/1", "model": "m", "samples": [], "aggregates": {}}',
            "aggregates.base_labels is missing",
        ),
        (
            '{"schema": "longbench100.results/1", "model": "m", "samples": [{"x": 1}], "aggregates": {}}',
            "samples[0].id is missing",
        ),
        (
            '{"schema": "longbench100.results/999", "model": "m", "samples": [], "aggregates": {}}',
            "schema 'longbench100.results/999' is not one this version reads",
        ),
    ],
)
def test_not_a_results_file(tmp_path: Path, content: str, message: str):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    result = run(str(path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert f"error: {path}: " in result.output and message in result.output


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"settings": [1]}, "'settings' must be an object"),
        (
            {"settings": {"data_fingerprint": 7}},
            "settings.data_fingerprint has the wrong type (int)",
        ),
        ({"settings": {"metrics": "qa_f1"}}, "settings.metrics has the wrong type (str)"),
        (
            {"depth": {"kv_retrieval": {"8k": [{"lo": 0.0}]}}},
            "aggregates.depth must map task -> length",
        ),
    ],
)
def test_malformed_settings_or_depth_is_a_user_error(tmp_path: Path, block: dict, message: str):
    path = write_results(
        tmp_path / "a.json",
        "a",
        model_samples(GOOD),
        settings=block.get("settings"),
        depth=block.get("depth"),
    )
    result = run(str(path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert (
        result.output.count("\n") == 1
        and "is not a results.json" in result.output
        and message in result.output
    )


def test_same_model_twice_is_a_user_error(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "same", model_samples(GOOD))
    b = write_results(tmp_path / "b.json", "same", model_samples(BAD))
    result = run(str(a), str(b), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "model 'same' appears in both" in result.output
    assert not (tmp_path / "out").exists()


def test_different_base_lengths_are_refused(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD))
    b = write_results(tmp_path / "b.json", "b", model_samples(GOOD), base=["2k"])
    with pytest.raises(UserError, match="different base lengths"):
        load_results([a, b])


def test_ranks_and_formatting():
    assert ranks([3.0, None, 5.0, 3.0]) == [2, None, 1, 2]
    assert fmt(-0.04) == "0.0"
    assert fmt(-0.725) == "-0.7"
    assert fmt(None) == "—"


def test_old_results_on_different_data_are_refused(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), manifest_sha256="a" * 64)
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD), manifest_sha256="b" * 64)
    result = run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert (
        f"data_fingerprint is 'aaaaaaaaaaaa...' in {a} but 'bbbbbbbbbbbb...' in {b}"
        in result.output
    )
    assert "--allow-mixed" in result.output
    assert not (tmp_path / "out").exists()


def test_results_made_alike_are_compared_and_their_settings_stated(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD), settings=settings())
    result = run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## How these results were made" in report
    assert "| Setting | a | b |" in report
    assert "| metric mode (--metric) | auto | auto |" in report
    assert "| metric per task | kv_retrieval: accuracy, single_doc_qa: qa_f1 |" in report
    assert "| QA filter threshold | 0.5 | 0.5 |" in report
    assert "| data manifest sha256 | `cccccccccccc` | `cccccccccccc` |" in report
    assert "(differs)" not in report and "WARNING" not in report
    assert "## Paired comparison of average LC" in report


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            {
                "metric_mode": "judge",
                "judge": {"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"},
            },
            "metric_mode is 'auto' in",
        ),
        (
            {"metrics": {"kv_retrieval": "accuracy", "single_doc_qa": "qa_judge"}},
            "metrics.single_doc_qa is 'qa_f1' in",
        ),
        ({"rouge_variant": "rouge-score"}, "rouge_variant is 'longbench' in"),
        ({"qa_filter": None}, "qa_filter is 0.5 in"),
        ({"tokenizer": "hf:Qwen/Qwen2.5-7B"}, "tokenizer is 'tiktoken:cl100k_base' in"),
        ({"data_fingerprint": "d" * 64}, "data_fingerprint is 'cccccccccccc...' in"),
        ({"suite": "my-suite"}, "suite is '100-longbench' in"),
    ],
)
def test_mixed_settings_are_refused_in_one_line(tmp_path: Path, change: dict, named: str):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD), settings=settings(**change))
    result = run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 2
    assert result.output.startswith("error: the results were made with different settings: ")
    assert result.output.count("\n") == 1
    assert named in result.output and str(a) in result.output and str(b) in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_judge_on_another_endpoint_is_a_different_setting(tmp_path: Path):
    judge = {"model": "m", "base_url": "http://localhost:8000/v1"}
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings(judge=judge))
    b = write_results(
        tmp_path / "b.json",
        "b",
        model_samples(BAD),
        settings=settings(judge={**judge, "base_url": "http://other:8000/v1"}),
    )
    result = run(str(a), str(b), "--out", str(tmp_path / "out"))
    assert (
        result.exit_code == 2
        and "judge is {model: 'm', base_url: 'http://localhost:8000/v1'}" in result.output
    )


def test_allow_mixed_reports_loudly_without_a_paired_test(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    b = write_results(
        tmp_path / "b.json", "b", model_samples(BAD), settings=settings(metric_mode="classic")
    )
    c = write_results(tmp_path / "c.json", "c", model_samples(BAD), settings=settings())
    result = run(
        str(a), str(b), str(c), "--out", str(tmp_path / "out"), "--n-boot", "20", "--allow-mixed"
    )
    assert result.exit_code == 0, result.output
    assert (
        "warning: the results were made with different settings (metric_mode is 'auto' in"
        in result.output
    )
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "**WARNING: THESE RESULTS WERE MADE WITH DIFFERENT SETTINGS**" in report
    assert "not run between models made differently (a vs b, b vs c)" in report
    assert "| **metric mode (--metric) (differs)** | auto | classic | auto |" in report
    compared = report[report.index("## Paired comparison") : report.index("## Warnings")]
    assert "| a | c |" in compared  # a and c were made alike: still compared
    assert "| a | b |" not in compared and "| b | c |" not in compared


def test_older_results_are_compared_on_what_they_hold(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD))  # no settings, no data hash
    result = run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 0, result.output
    assert f"warning: {b} records no settings (scored by an older longbench100)" in result.output
    assert (
        f"cannot check that the results were made alike for: metric_mode (unknown in {b})"
        in result.output
    )
    assert f"data_fingerprint (unknown in {b})" in result.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| tokenizer of the data | tiktoken:cl100k_base | unknown |" in report
    assert "recorded no settings block: b" in report
    assert "- **Settings**: cannot check that the results were made alike" in report


def test_older_results_read_their_settings_from_the_file(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD))
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD))
    for path, mode in ((a, "classic"), (b, "judge")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data.update(metric_mode=mode, judge=None, qa_filter={"threshold": 0.5, "tasks": {}})
        path.write_text(json.dumps(data), encoding="utf-8")
    result = run(str(a), str(b), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "metric_mode is 'classic' in" in result.output


def depth_bins(scores: list[float | None]) -> list[dict]:
    """Ten depth deciles with the given scores (contract of aggregates["depth"])."""
    return [
        {"lo": i / 10, "hi": (i + 1) / 10, "n": 0 if score is None else 4, "score": score}
        for i, score in enumerate(scores)
    ]


def test_depth_plot_is_written_for_tasks_with_depth(tmp_path: Path):
    u_shape = [90.0, 80.0, 60.0, 40.0, 30.0, 30.0, 45.0, 60.0, 80.0, 95.0]
    depth = {
        "kv_retrieval": {
            "2k": depth_bins([100.0] * 10),
            "8k": depth_bins(u_shape),
            "16k": depth_bins(u_shape[:5] + [None] * 5),
        }
    }
    path = write_results(
        tmp_path / "a.json", "a", model_samples(GOOD), settings=settings(), depth=depth
    )
    result = run(str(path), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / 'out' / 'score_by_depth.png'}" in result.output
    assert (tmp_path / "out" / "score_by_depth.png").read_bytes().startswith(PNG_SIGNATURE)
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "![Score by depth](score_by_depth.png)" in report
    assert "No depth data for: single_doc_qa" in report


def test_depth_panels_draw_lines_for_few_lengths_and_a_heatmap_for_many(tmp_path: Path):
    few = {"kv_retrieval": {label: depth_bins([50.0] * 10) for label in ["2k", "8k"]}}
    many_labels = ["2k", "4k", "6k", "8k", "16k", "32k", "64k"][: MAX_DEPTH_LINES + 1]
    many = {"kv_retrieval": {label: depth_bins([50.0] * 9 + [None]) for label in many_labels}}
    for depth, lines, images in ((few, 2, 0), (many, 0, 1)):
        path = write_results(tmp_path / "a.json", "a", model_samples(GOOD), depth=depth)
        figure = score_by_depth_figure(load_results([path]))
        (panel,) = [ax for ax in figure.axes if ax.get_title() == "kv_retrieval"]
        assert (len(panel.lines), len(panel.images)) == (lines, images)
    assert (
        score_by_depth_figure(
            load_results([write_results(tmp_path / "b.json", "b", model_samples(GOOD))])
        )
        is None
    )


def test_depth_points_resting_on_few_samples_are_hollow(tmp_path: Path):
    bins = depth_bins([50.0] * 10)  # 4 samples per bin
    bins[0]["n"] = FEW_DEPTH_SAMPLES  # enough: drawn solid
    path = write_results(
        tmp_path / "a.json", "a", model_samples(GOOD), depth={"kv_retrieval": {"2k": bins}}
    )
    figure = score_by_depth_figure(load_results([path]))
    (panel,) = [ax for ax in figure.axes if ax.get_title() == "kv_retrieval"]
    (hollow,) = panel.collections
    assert len(hollow.get_offsets()) == 9 and "fewer than 10 samples" in figure.get_supxlabel()


def test_no_depth_data_means_no_depth_plot(tmp_path: Path):
    path = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    assert run(str(path), "--out", str(tmp_path / "out"), "--n-boot", "20").exit_code == 0
    assert not (tmp_path / "out" / "score_by_depth.png").exists()
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "No depth data for: kv_retrieval, single_doc_qa" in report
    assert "score_by_depth.png" not in report


def test_lc_panels_without_data_say_so_and_share_one_scale(tmp_path: Path):
    samples = model_samples(BAD, tasks=["kv_retrieval"])
    samples += model_samples(
        {"2k": 50, "4k": 50, "6k": 50}, tasks=["single_doc_qa"]
    )  # base lengths only
    result = load_results([write_results(tmp_path / "a.json", "a", samples)])
    figure = lc_by_task_figure(result)
    panels = {ax.get_title(): ax for ax in figure.axes if ax.get_visible() and ax.get_title()}
    assert set(panels) == {"kv_retrieval", "single_doc_qa"}
    assert any("no data" in text.get_text() for text in panels["single_doc_qa"].texts)
    assert not any("no data" in text.get_text() for text in panels["kv_retrieval"].texts)
    assert panels["kv_retrieval"].get_ylim() == panels["single_doc_qa"].get_ylim()
    low, high = panels["kv_retrieval"].get_ylim()
    assert low < -77.8 and high > 0  # holds bad's LC of -77.8 at 16k and the zero line
    assert "$LC_{l}$" in figure.get_supylabel()


def test_read_only_or_impossible_out_is_one_line(tmp_path: Path):
    path = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    blocker = tmp_path / "file.txt"
    blocker.write_text("x", encoding="utf-8")
    for out, message in (
        (blocker, "is a file, not a folder"),
        (blocker / "report", "cannot create it"),
        (Path("/proc/longbench100-report"), "cannot write there"),
    ):
        result = run(str(path), "--out", str(out))
        assert result.exit_code == 2, (out, result.output)
        assert (
            result.output.count("\n") == 1
            and message in result.output
            and "Traceback" not in result.output
        )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_out_folder_is_refused(tmp_path: Path):
    path = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    out = tmp_path / "locked"
    out.mkdir()
    out.chmod(0o555)
    try:
        result = run(str(path), "--out", str(out))
    finally:
        out.chmod(0o755)
    assert result.exit_code == 2 and "cannot write there" in result.output
    assert list(out.iterdir()) == []


def test_run_report_is_the_library_entry(tmp_path: Path):
    from longbench100 import ReportOptions, run_report

    path = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    outcome = run_report(ReportOptions([path], tmp_path / "out", n_boot=10))
    assert outcome.written[0] == tmp_path / "out" / "report.md" and outcome.warnings == []
    assert all(written.is_file() for written in outcome.written)


def test_a_missing_overall_score_is_explained_not_left_blank():
    from types import SimpleNamespace

    from longbench100.report.document import missing_overall_note

    reason = "kv_retrieval has no graded samples at 2k (the overall averages 2 tasks everywhere)"
    result = SimpleNamespace(
        model="m", aggregates={"overall": {"warnings": [f"S_2k is null: {reason}", "other"]}}
    )
    assert missing_overall_note([result], ["2k", "4k"]).endswith(f"\n- m, S_2k: {reason}")
    assert missing_overall_note([result], ["4k"]) is None
