"""``longbench100 dolce``: probes from generated data, the oracle and prediction fits, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.analysis.prompt_parts import IDK_INSTRUCTION, split_prompt
from longbench100.cli import main
from tests.conftest import SHARED_SOURCES
from tests.support.generate_helpers import generate_in_process

TASKS = ("kv_retrieval", "passage_retrieval", "passage_count", "single_doc_qa")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["dolce", *args])
    return result.exit_code, result.output


def records(folder: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("*/*.jsonl"))
        for line in path.read_text().splitlines()
    ]


@pytest.fixture(scope="module")
def data(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dolce") / "data"
    generate_in_process(out, TASKS, (("2k", 2048),), 4, sources=str(mirror), seed=3)
    return out


@pytest.fixture(scope="module")
def probes(data: Path) -> Path:
    out = data.parent / "probes"
    code, output = run("probes", "--data", str(data), "--out", str(out), "--windows", "0,1,2,5,all")
    assert code == 0, output
    return out


def test_probe_folder_is_a_data_folder_with_a_probe_manifest(data: Path, probes: Path):
    manifest = json.loads((probes / "manifest.json").read_text())
    assert manifest["kind"] == "dolce-probes" and manifest["units"] == {
        task: "passage" for task in TASKS
    }
    assert manifest["derived_from"]["path"] == str(data)
    probe_records = records(probes)
    assert (
        manifest["requests"]
        == len(probe_records)
        == sum(entry["rows"] for entry in manifest["files"].values())
    )
    originals = {record["id"]: record for record in records(data)}
    for probe in probe_records:
        origin = probe["gold"]["dolce"]
        assert probe["id"] == f"{origin['problem']}~C{origin['C']}~at{origin['start']}"
        assert list(probe) == list(originals[origin["problem"]])  # the same keys, in the same order
        assert IDK_INSTRUCTION in probe["prompt"] and probe["prompt_tokens"] > 0


def test_whole_window_probe_is_the_original_prompt_plus_the_idk_line(data: Path, probes: Path):
    originals = {record["id"]: record for record in records(data)}
    whole = [
        probe
        for probe in records(probes)
        if probe["gold"]["dolce"]["C"] == probe["gold"]["dolce"]["L"]
    ]
    assert len(whole) == len(originals)
    for probe in whole:
        original = originals[probe["gold"]["dolce"]["problem"]]["prompt"]
        assert probe["prompt"].replace("\n\n" + IDK_INSTRUCTION, "", 1) == original


def test_windows_hold_exactly_their_units_and_closed_book_has_none(data: Path, probes: Path):
    originals = {record["id"]: record for record in records(data)}
    for probe in records(probes):
        origin = probe["gold"]["dolce"]
        parts = split_prompt(probe["task"], originals[origin["problem"]]["prompt"], "test")
        shown = [
            block
            for block in parts.blocks
            if parts.context[block.span[0] : block.span[1]] in probe["prompt"]
        ]
        assert len(shown) == origin["C"] or origin["C"] == 0 and not shown


def test_other_units_split_inside_passages(data: Path, tmp_path: Path):
    for units in ("sentence", "line", "paragraph"):
        out = tmp_path / units
        code, output = run(
            "probes",
            "--data",
            str(data),
            "--out",
            str(out),
            "--units",
            units,
            "--windows",
            "0,3,all",
            "--tasks",
            "single_doc_qa",
            "--max-probes-per-problem",
            "12",
        )
        assert code == 0, output
        rows = records(out)
        lengths = {row["gold"]["dolce"]["L"] for row in rows}
        assert min(lengths) > 2  # more units than the two passages
        per_problem: dict[str, int] = {}
        for row in rows:
            per_problem[row["gold"]["dolce"]["problem"]] = (
                per_problem.get(row["gold"]["dolce"]["problem"], 0) + 1
            )
            assert row["gold"]["dolce"]["gold_units"] is not None
        assert max(per_problem.values()) <= 12


def test_dry_run_writes_nothing_and_probes_are_deterministic(
    data: Path, probes: Path, tmp_path: Path
):
    code, output = run(
        "probes",
        "--data",
        str(data),
        "--out",
        str(tmp_path / "dry"),
        "--windows",
        "0,1,2,5,all",
        "--dry-run",
    )
    assert (
        code == 0
        and "requests" in output
        and "prompt tokens" in output
        and not (tmp_path / "dry").exists()
    )
    again = tmp_path / "again"
    assert (
        run("probes", "--data", str(data), "--out", str(again), "--windows", "0,1,2,5,all")[0] == 0
    )
    for path in sorted(probes.rglob("*.jsonl")):
        assert (again / path.relative_to(probes)).read_bytes() == path.read_bytes()


def test_oracle_fit_finds_the_structure_of_our_tasks(probes: Path, tmp_path: Path):
    """With the refined estimator one-passage problems land in III unless the gold passage is the first
    or the last one.

    With one fixed layout and every window enumerated, a unit at the edge is covered by a single
    window of every size, fewer than pi (which averages over where the span lies) predicts; the fit
    explains that with a longer span. docs/dolce.md ("Limits") measures it on every gold position.
    """
    out = tmp_path / "dolce.json"
    code, output = run(
        "fit", "--probes", str(probes), "--oracle", "--estimator", "refined", "--out", str(out)
    )
    assert code == 0, output
    fit = json.loads(out.read_text())
    rows = {row["id"]: row for row in fit["problems"]}
    inside = 0
    for row in rows.values():
        assert row["kind"] == "COW" and row["category"] in fit["categories"]
        if row["task"] == "passage_count":
            assert row["category"] == "V" and row["expected"]["lambda"] == row["L"]
        if row["task"] in ("single_doc_qa", "passage_retrieval"):
            first, end = row["expected"].pop("gold_units")
            assert row["expected"] == {"lambda": 1, "k": 1, "category": "III"} and end == first + 1
            if 0 < first < row["L"] - 1:
                inside += 1
                assert row["category"] == "III", row["id"]
            else:
                assert row["category"] in ("III", "IV") and row["k"] == 1, row["id"]
        if row["task"] == "kv_retrieval":
            assert row["category"] == row["expected"]["category"], row["id"]
    assert inside >= 4  # the check above is not vacuous
    assert sum(fit["tasks"]["passage_count"]["shares"].values()) == pytest.approx(1.0)
    assert fit["estimator"]["name"] == "refined"
    second = tmp_path / "again.json"
    assert (
        run(
            "fit",
            "--probes",
            str(probes),
            "--oracle",
            "--estimator",
            "refined",
            "--out",
            str(second),
        )[0]
        == 0
    )
    assert second.read_bytes() == out.read_bytes()


def test_the_paper_estimator_is_the_default_and_reads_the_clear_structures(
    probes: Path, tmp_path: Path
):
    """Algorithm 1 as published (the default) on the same oracle outcomes: counting needs the whole
    context, the key-value chains read as the provenance says; on these tiny contexts (4-7 passages,
    a handful of probes each) its shared noise takes some of the single-passage hits, so those read
    III or IV (docs/dolce.md compares the two estimators)."""
    out = tmp_path / "paper.json"
    code, output = run("fit", "--probes", str(probes), "--oracle", "--out", str(out))
    assert code == 0, output
    fit = json.loads(out.read_text())
    assert fit["estimator"]["name"] == "paper" and "estimator: paper" in output
    for row in fit["problems"]:
        if row["task"] in ("passage_count", "kv_retrieval"):
            assert row["category"] == row["expected"]["category"], row["id"]
        if row["task"] in ("single_doc_qa", "passage_retrieval"):
            assert row["category"] in ("III", "IV") and row["k"] <= 2, row["id"]


def test_prediction_fit_scores_replies_and_recognises_idk(probes: Path, tmp_path: Path):
    """Replies that answer when the window holds the gold and decline otherwise fit like the oracle."""
    predictions = tmp_path / "pred.jsonl"
    lines = []
    for probe in records(probes):
        origin = probe["gold"]["dolce"]
        gold = origin["gold_units"]
        seen = gold and origin["start"] <= gold[0] and gold[1] <= origin["start"] + origin["C"]
        reply = (
            probe["answers"][0] if seen else "The text shown does not contain enough information."
        )
        lines.append(json.dumps({"id": probe["id"], "prediction": reply}))
    predictions.write_text("\n".join(lines) + "\n")
    assert (
        run(
            "fit",
            "--probes",
            str(probes),
            "--predictions",
            str(predictions),
            "--out",
            str(tmp_path / "p.json"),
        )[0]
        == 0
    )
    assert (
        run("fit", "--probes", str(probes), "--oracle", "--out", str(tmp_path / "o.json"))[0] == 0
    )
    by_model = {row["id"]: row for row in json.loads((tmp_path / "p.json").read_text())["problems"]}
    by_oracle = {
        row["id"]: row for row in json.loads((tmp_path / "o.json").read_text())["problems"]
    }
    for problem_id, row in by_oracle.items():
        assert (by_model[problem_id]["lambda"], by_model[problem_id]["k"]) == (
            row["lambda"],
            row["k"],
        )
        assert by_model[problem_id]["outcomes"] == row["outcomes"]


def test_report_draws_the_chart_and_table(probes: Path, tmp_path: Path):
    assert (
        run(
            "fit",
            "--probes",
            str(probes),
            "--oracle",
            "--oracle-noise",
            "0.1",
            "--out",
            str(tmp_path / "d.json"),
        )[0]
        == 0
    )
    code, output = run("report", str(tmp_path / "d.json"), "--out", str(tmp_path / "r"))
    assert code == 0, output
    png = (tmp_path / "r" / "dolce.png").read_bytes()
    assert (
        png.startswith(b"\x89PNG")
        and "| passage_count |" in (tmp_path / "r" / "dolce.md").read_text()
    )
    assert run("report", str(tmp_path / "d.json"), "--out", str(tmp_path / "r2"))[0] == 0
    assert (tmp_path / "r2" / "dolce.png").read_bytes() == png


def test_report_command_takes_the_dolce_chart_along(probes: Path, tmp_path: Path):
    """``report RESULTS --dolce dolce.json`` writes the Dolce chart and table beside report.md, the same
    bytes as ``dolce report``; a bad dolce file is refused before anything is written."""
    from tests.report.test_run import GOOD, model_samples, settings, write_results

    assert (
        run("fit", "--probes", str(probes), "--oracle", "--out", str(tmp_path / "d.json"))[0] == 0
    )
    results = write_results(tmp_path / "a.json", "a", model_samples(GOOD), settings=settings())
    out = tmp_path / "report"
    result = CliRunner().invoke(
        main,
        [
            "report",
            str(results),
            "--out",
            str(out),
            "--n-boot",
            "10",
            "--dolce",
            str(tmp_path / "d.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (out / "report.md").is_file() and f"wrote {out / 'dolce.png'}" in result.output
    assert run("report", str(tmp_path / "d.json"), "--out", str(tmp_path / "alone"))[0] == 0
    for name in ("dolce.png", "dolce.md"):
        assert (out / name).read_bytes() == (tmp_path / "alone" / name).read_bytes()
    empty = tmp_path / "refused"
    result = CliRunner().invoke(
        main, ["report", str(results), "--out", str(empty), "--dolce", str(results)]
    )
    assert result.exit_code == 2 and "not a dolce fit" in result.output and not empty.exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["fit", "--probes", "{probes}", "--out", "{tmp}/x.json"], "exactly one of --predictions"),
        (["fit", "--probes", "{data}", "--oracle", "--out", "{tmp}/x.json"], "not a probe folder"),
        (
            [
                "fit",
                "--probes",
                "{probes}",
                "--oracle",
                "--oracle-noise",
                "2",
                "--out",
                "{tmp}/x.json",
            ],
            "from 0 to 1",
        ),
        (["probes", "--data", "{probes}", "--out", "{tmp}/p"], "already a probe folder"),
        (["probes", "--data", "{data}", "--out", "{probes}"], "already exists"),
        (["probes", "--data", "{data}", "--out", "{tmp}/p", "--windows", "1,two"], "'two'"),
    ],
)
def test_user_errors_are_one_line(
    data: Path, probes: Path, tmp_path: Path, args: list[str], message: str
):
    filled = [arg.format(data=data, probes=probes, tmp=tmp_path) for arg in args]
    code, output = run(*filled)
    assert code == 2 and message in output and "Traceback" not in output


def test_missing_predictions_are_named(probes: Path, tmp_path: Path):
    first = records(probes)[0]
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"id": first["id"], "prediction": "7"}) + "\n")
    code, output = run(
        "fit",
        "--probes",
        str(probes),
        "--predictions",
        str(path),
        "--out",
        str(tmp_path / "x.json"),
    )
    assert code == 2 and "missing" in output and "rerun `longbench100 predict`" in output
    assert "--allow-missing" not in output  # dolce fit has no such option


def _always_idk(probes: Path, path: Path) -> Path:
    """A model that declines every probe, the whole context included."""
    path.write_text(
        "".join(
            json.dumps({"id": probe["id"], "prediction": "I don't know."}) + "\n"
            for probe in records(probes)
        )
    )
    return path


@pytest.mark.parametrize(
    "options, rule",
    [
        ([], "flag"),
        (["--estimator", "refined"], "ns"),
        (["--never-solved", "ns"], "ns"),
        (["--estimator", "refined", "--never-solved", "flag"], "flag"),
    ],
)
def test_a_model_that_never_answers_is_flagged_and_warned(
    probes: Path, tmp_path: Path, options: list[str], rule: str
):
    """Paper mode (flag) keeps the category the fit gives, never I or II, with solved: false; NS
    (ns) is the refined estimator's default and an explicit option; both warn."""
    out = tmp_path / "idk.json"
    replies = _always_idk(probes, tmp_path / "idk.jsonl")
    result = CliRunner().invoke(
        main,
        [
            "dolce",
            "fit",
            "--probes",
            str(probes),
            "--predictions",
            str(replies),
            *options,
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    fit = json.loads(out.read_text())
    assert fit["never_solved"] == rule and not any(row["solved"] for row in fit["problems"])
    categories = {row["category"] for row in fit["problems"]}
    if rule == "ns":
        assert categories == {"NS"} and "NS" in fit["categories"]
    else:
        assert "NS" not in categories | set(fit["categories"])
    assert ("NS not solved" in result.output) == (rule == "ns")
    if options == []:  # Algorithm 1: only the whole context is left unexplained by the categorical
        assert categories.isdisjoint({"I", "II"})
        assert all(row["lambda"] == row["L"] for row in fit["problems"])
    for task, summary in fit["tasks"].items():
        assert summary["never_solved"] == summary["counts"]
        assert sum(summary["counts"].values()) == summary["problems"]
        assert any("never answered right" in text for text in summary["warnings"])
        assert any("I don't know" in text for text in summary["warnings"])
        assert f"warning: {task}:" in result.stderr
        for text in summary["warnings"]:  # each once, not once with the table and once again
            assert result.output.count(f"warning: {task}: {text}") == 1, result.output
    assert "never solved" in result.output


def test_one_problem_alone_is_flagged(data: Path, tmp_path: Path):
    one = tmp_path / "one-data"
    generate_in_process(one, ("passage_retrieval",), (("2k", 2048),), 1, sources="demo", seed=3)
    assert (
        run("probes", "--data", str(one), "--out", str(tmp_path / "p"), "--windows", "0,1,all")[0]
        == 0
    )
    assert (
        run("fit", "--probes", str(tmp_path / "p"), "--oracle", "--out", str(tmp_path / "f.json"))[
            0
        ]
        == 0
    )
    summary = json.loads((tmp_path / "f.json").read_text())["tasks"]["passage_retrieval"]
    assert summary["problems"] == 1 and any(
        "only one problem" in text for text in summary["warnings"]
    )


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="needs the real sources mirror")
def test_an_always_idk_model_on_real_probes_is_never_solved(tmp_path: Path):
    data_dir = tmp_path / "real"
    generate_in_process(
        data_dir,
        ("passage_retrieval", "kv_retrieval"),
        (("4k", 4096),),
        3,
        sources=str(SHARED_SOURCES),
        seed=1,
    )
    probes = tmp_path / "probes"
    assert (
        run("probes", "--data", str(data_dir), "--out", str(probes), "--windows", "0,1,2,all")[0]
        == 0
    )
    code, output = run(
        "fit",
        "--probes",
        str(probes),
        "--predictions",
        str(_always_idk(probes, tmp_path / "idk.jsonl")),
        "--out",
        str(tmp_path / "f.json"),
    )
    assert code == 0, output
    fit = json.loads((tmp_path / "f.json").read_text())
    assert len(fit["problems"]) >= 4 and not any(row["solved"] for row in fit["problems"])
    assert all(row["category"] not in ("I", "II") for row in fit["problems"])
    assert all(summary["warnings"] for summary in fit["tasks"].values())
