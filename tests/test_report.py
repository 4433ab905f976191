"""The ``report`` command: markdown tables, PNG plots and user errors."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.errors import UserError
from longbench100.lengths import parse_length
from longbench100.report.load import load_results
from longbench100.report.table import fmt, ranks
from longbench100.scoring.aggregate import aggregate
from longbench100.scoring.samples import ScoredSample

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BASE = ["2k", "4k", "6k"]
TASKS = ["kv_retrieval", "single_doc_qa"]


def model_samples(points: dict[str, float], n: int = 20, tasks: list[str] = TASKS) -> list[ScoredSample]:
    """``n`` binary samples per task and length whose mean is ``points[label]`` (0-100)."""
    samples = []
    for task in tasks:
        for label, value in points.items():
            ones = round(value * n / 100)
            samples += [
                ScoredSample(f"{task}-{label}-{row:04d}", task, label, parse_length(label), row, float(row < ones))
                for row in range(n)
            ]
    return samples


def write_results(path: Path, model: str, samples: list[ScoredSample], base: list[str] = BASE,
                  manifest_sha256: str | None = None) -> Path:
    """Write a results.json the way ``score`` does (with a ``data`` block when ``manifest_sha256`` is given)."""
    data = {"model": model, "samples": [s.to_json() for s in samples], "aggregates": aggregate(samples, base, n_boot=100)}
    if manifest_sha256 is not None:
        data["data"] = {"path": "out", "manifest_sha256": manifest_sha256}
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
    assert "| Model | Base | 8k | 8k LC% | 16k | 16k LC% | Avg score | Avg LC% | Rank (avg LC) | Rank (avg score) |" in report
    # good: base 80, LC 0 and -12.5 -> avg score 75, avg LC -6.25; bad: base 90, 8k -44.4, 16k -77.8.
    assert "| good-model | 80.0 | 80.0 | 0.0 | 70.0 | -12.5 | 75.0 | -6.2 | 1 | 1 |" in report
    assert "| bad-model | 90.0 | 50.0 | -44.4 | 20.0 | -77.8 | 35.0 | -61.1 | 2 | 2 |" in report
    assert report.index("| good-model | 80.0") < report.index("| bad-model | 90.0")  # ordered by rank
    assert "### kv_retrieval" in report and "### single_doc_qa" in report
    assert report.count("| good-model | 80.0 | 80.0 | 0.0 | 70.0 | -12.5 |") == 3  # overall and both tasks
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
    tiny = write_results(tmp_path / "tiny.json", "tiny", model_samples({"2k": 5, "4k": 5, "6k": 5, "8k": 5, "16k": 0}))
    gap = write_results(tmp_path / "gap.json", "gap", model_samples({"2k": 50, "4k": 50, "8k": 40, "16k": 30}))
    result = run(str(tiny), str(gap), "--out", str(tmp_path / "out"), "--n-boot", "50")
    assert result.exit_code == 0, result.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| tiny | 5.0† |" in report
    assert "† Base Ability below 10 points" in report
    assert "| gap | 50.0 | 40.0 | -20.0 | 30.0 | -40.0 | 35.0 | -30.0 | 1 | 1 |" in report  # base from 2k, 4k
    assert "**gap** (kv_retrieval): Base Ability is the mean over 2k, 4k only: no graded samples at base length 6k" in report
    assert "**tiny** (overall): Base Ability 5.0 is below 10 points" in report


def test_missing_file_is_a_user_error(tmp_path: Path):
    result = run(str(tmp_path / "nope.json"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "error: results file not found" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "invalid JSON"), ('{"model": "m"}', "needs the keys"), ("[1, 2]", "needs the keys"),
     ('{"model": "m", "samples": [], "aggregates": {}}', "lacks base_labels"),
     ('{"model": "m", "samples": [{"x": 1}], "aggregates": {"base_labels": [], "overall": {}, "tasks": {}}}',
      "bad sample record")],
)
def test_not_a_results_file(tmp_path: Path, content: str, message: str):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    result = run(str(path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "is not a results.json" in result.output and message in result.output


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


def test_results_scored_on_different_data_are_flagged(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), manifest_sha256="a" * 64)
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD), manifest_sha256="b" * 64)
    result = run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 0, result.output
    assert "warning: the models were scored on different data" in result.output
    assert "a: aaaaaaaaaaaa, b: bbbbbbbbbbbb" in result.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "**Warning:** The models were scored on different data" in report
    assert "- **Data**: the models were scored on different data" in report
    assert "only uses the sample ids they share" in report


def test_results_on_the_same_data_are_not_flagged(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), manifest_sha256="c" * 64)
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD), manifest_sha256="c" * 64)
    result = run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    assert "data manifest sha256" not in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_a_result_without_a_manifest_hash_cannot_be_checked(tmp_path: Path):
    a = write_results(tmp_path / "a.json", "a", model_samples(GOOD), manifest_sha256="c" * 64)
    b = write_results(tmp_path / "b.json", "b", model_samples(BAD))
    result = run(str(a), str(b), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 0, result.output
    assert "warning: the models were scored on data that cannot be checked to be the same" in result.output
    assert "b: unknown" in result.output
