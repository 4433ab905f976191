"""bench/side_by_side: the analysis turns a log into the right ratios; the runner's selection and
output digests (no anchor is run here)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support.bench_scripts import load_bench_script


@pytest.fixture(scope="module")
def analyse() -> ModuleType:
    """bench/side_by_side/analyse.py as a module."""
    return load_bench_script("side_by_side/analyse")


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    """bench/side_by_side/run.py as a module."""
    return load_bench_script("side_by_side/run")


def run(item: str, variant: str, rep: int, cpu: float, rc: int = 0, digest: str = "d") -> dict:
    """A log record of run.py's shape: item names say workload/task@length."""
    workload, rest = item.split("/")
    task, length = rest.split("@")
    scope = "cell" if task != "all" else ("whole" if length == "all" else "length")
    tasks = [task] if scope == "cell" else ["niah_a", "niah_b"]
    lengths = ["4k", "32k"] if length == "all" else [length]
    return {
        "kind": "run", "workload": workload, "scope": scope, "item": item, "tasks": tasks,
        "lengths": lengths, "variant": variant, "rep": rep, "rc": rc, "cpu_s": cpu,
        "controls": variant in ("ours_cold", "ours_warm"), "data_sha256": digest,
        "controls_sha256": "t", "load_before": [1.0, 1.0, 1.0], "load_after": [2.0, 1.0, 1.0],
    }  # fmt: skip


def ruler_log() -> list[dict]:
    """Two tasks x two lengths, three reps; ours per cell, per length and whole."""
    records = []
    anchor = {"niah_a": (10.0, 12.0, 9.0), "niah_b": (20.0, 18.0, 21.0)}
    for rep in (1, 2, 3):
        for task, cpus in anchor.items():
            for length, scale in (("4k", 1.0), ("32k", 2.0)):
                records.append(run(f"r/{task}@{length}", "anchor", rep, cpus[rep - 1] * scale))
    for rep, cpu in zip((1, 2, 3), (2.0, 3.0, 3.0)):
        records.append(run("r/niah_a@4k", "ours_warm", rep, cpu))
    for rep, cpu in zip((1, 2, 3), (3.0, 5.0, 6.0)):
        records.append(run("r/all@4k", "ours_warm", rep, cpu))
    for rep, cpu in zip((1, 2, 3), (9.0, 9.0, 10.0)):
        records.append(run("r/all@all", "ours_cold", rep, cpu))
    return records


def only(found: list, item: str, variant: str):
    """The one ratio of an item and variant."""
    (ratio,) = [r for r in found if r.item == item and r.variant == variant]
    return ratio


def test_cell_ratio_is_anchor_over_ours_paired_by_rep(analyse: ModuleType) -> None:
    ratio = only(analyse.ratios(ruler_log()), "r/niah_a@4k", "ours_warm")
    # reps: 10/2, 12/3, 9/3
    assert (ratio.median, ratio.low, ratio.high, ratio.reps) == (4.0, 3.0, 5.0, 3)
    assert (ratio.anchor_cpu, ratio.ours_cpu) == (10.0, 3.0)


def test_length_and_whole_sum_the_anchor_cells_they_cover(analyse: ModuleType) -> None:
    found = analyse.ratios(ruler_log())
    length = only(found, "r/all@4k", "ours_warm")
    # anchor sums at 4k: 30, 30, 30 against ours 3, 5, 6
    assert (length.median, length.low, length.high) == (6.0, 5.0, 10.0)
    whole = only(found, "r/all@all", "ours_cold")
    # anchor sums over both lengths: 90, 90, 90 against ours 9, 9, 10
    assert (whole.anchor_cpu, whole.median, whole.low, whole.high) == (90.0, 10.0, 9.0, 10.0)


def test_a_missing_or_failed_anchor_cell_drops_the_rep_never_counts_zero(
    analyse: ModuleType,
) -> None:
    records = [r for r in ruler_log() if not (r["item"] == "r/niah_b@4k" and r["rep"] == 2)]
    for record in records:
        if record["item"] == "r/niah_b@4k" and record["rep"] == 3:
            record["rc"] = 1
    length = only(analyse.ratios(records), "r/all@4k", "ours_warm")
    assert (length.reps, length.median) == (1, 10.0)


def test_an_anchor_run_of_the_item_itself_is_used_as_is(analyse: ModuleType) -> None:
    records = [run("p/all@8k", "anchor", 1, 40.0), run("p/all@8k", "ours_warm_nc", 1, 4.0)]
    ratio = only(analyse.ratios(records), "p/all@8k", "ours_warm_nc")
    assert (ratio.median, ratio.anchor_cpu) == (10.0, 40.0)


def test_report_prints_the_ratios_and_flags_differing_outputs(analyse: ModuleType) -> None:
    records = ruler_log()
    records.append(run("r/niah_a@4k", "ours_cold", 1, 4.0, digest="other"))
    text = analyse.report(records)
    assert "| r/all@4k | 3 | 30.00 | 5.00 s, 6.0x [5.0-10.0] |" in text
    assert "- r/niah_a@4k: ours data 2, ours twins 1, anchor 1 (DIFFERS)" in text
    assert "- r/all@4k: ours data 1, ours twins 1 (identical)" in text
    assert "1-minute load around the runs: 1.00-2.00" in text


def test_cells_patterns_select_items_by_name(runner: ModuleType) -> None:
    names = [
        i.name for i in runner.selected_items(["ruler", "paper"], ["ruler/*@4k", "paper/all@all"])
    ]
    assert names == [
        "ruler/niah_single_1@4k",
        "ruler/niah_single_2@4k",
        "ruler/niah_multikey_1@4k",
        "ruler/all@4k",
        "paper/all@all",
    ]
    with pytest.raises(SystemExit):
        runner.selected_items(["ruler"], ["paper/*"])


def test_output_digest_leaves_out_the_manifest_and_keeps_twins_apart(
    runner: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "kv").mkdir()
    (tmp_path / "controls" / "kv").mkdir(parents=True)
    (tmp_path / "kv" / "8k.jsonl").write_text("a\n")
    (tmp_path / "controls" / "kv" / "8k.jsonl").write_text("b\n")
    (tmp_path / "manifest.json").write_text("{}")
    data, twins = runner.folder_digest(tmp_path, "data"), runner.folder_digest(tmp_path, "controls")
    (tmp_path / "manifest.json").write_text('{"created": 1}')
    (tmp_path / ".longbench100-finished.jsonl").write_text("controls/kv/8k.jsonl\n")
    assert runner.folder_digest(tmp_path, "data") == data  # the run's bookkeeping is not data
    (tmp_path / "kv" / "8k.jsonl").write_text("c\n")
    assert runner.folder_digest(tmp_path, "data") != data
    assert runner.folder_digest(tmp_path, "controls") == twins
    assert runner.folder_digest(tmp_path / "kv", "controls") is None


def test_each_variant_gets_its_own_cache(runner: ModuleType, tmp_path: Path) -> None:
    setup = runner.Setup(tmp_path, tmp_path / "mirror", "python", None, False)
    prepared = tmp_path / "cache-prepared"
    (prepared / "records").mkdir(parents=True)
    (prepared / "records" / "a.pickle").write_text("kept")
    (tmp_path / "cache-cold").mkdir()
    (tmp_path / "cache-cold" / "left.json").write_text("from the last run")
    cold = runner.ours_cache(setup, "ours_cold_nc")
    assert cold == tmp_path / "cache-cold" and not any(cold.iterdir())  # empty every time
    copy = runner.ours_cache(setup, "ours_prep")
    assert (copy / "records" / "a.pickle").read_text() == "kept"
    (copy / "records" / "b.pickle").write_text("written by a timed run")
    again = runner.ours_cache(setup, "ours_prep_nc")
    assert sorted(p.name for p in (again / "records").iterdir()) == ["a.pickle"]  # a fresh copy
    assert runner.ours_cache(setup, "ours_warm") == tmp_path / "cache-warm"  # shared, kept
