"""The needle heatmap of the report: which tasks get one, its axes and cells, and its place in report.md."""

from pathlib import Path

import numpy as np

from longbench100.report.heatmap import needle_heatmap_figure, needle_tasks
from longbench100.report.load import load_results
from tests.report.test_run import (
    GOOD,
    PNG_SIGNATURE,
    depth_bins,
    model_samples,
    run,
    settings,
    write_results,
)

FALLING = [100.0, 90.0, 70.0, 50.0, 20.0, 10.0, 30.0, 60.0, None, 100.0]


def depth_block() -> dict:
    """kv_retrieval with depth at three lengths, single_doc_qa (a judged task) and counting_stars at one length."""
    return {
        "kv_retrieval": {
            "2k": depth_bins([100.0] * 10),
            "8k": depth_bins(FALLING),
            "16k": depth_bins([0.0] * 10),
        },
        "single_doc_qa": {"2k": depth_bins([50.0] * 10), "8k": depth_bins([40.0] * 10)},
        "counting_stars": {"8k": depth_bins([50.0] * 10)},
    }


def test_only_exact_answer_tasks_with_two_lengths_are_needle_tasks(tmp_path: Path):
    results = load_results(
        [write_results(tmp_path / "a.json", "a", model_samples(GOOD), depth=depth_block())]
    )
    assert needle_tasks(results) == ["kv_retrieval"]
    assert (
        needle_heatmap_figure(
            load_results([write_results(tmp_path / "b.json", "b", model_samples(GOOD))])
        )
        is None
    )


def test_heatmap_has_lengths_across_depths_down_and_the_scores_in_its_cells(tmp_path: Path):
    results = load_results(
        [write_results(tmp_path / "a.json", "a", model_samples(GOOD), depth=depth_block())]
    )
    figure = needle_heatmap_figure(results)
    (panel,) = [ax for ax in figure.axes if ax.get_title() == "kv_retrieval"]
    assert [tick.get_text() for tick in panel.get_xticklabels()] == ["2k", "8k", "16k"]
    assert panel.get_xlabel() == "context length" and panel.get_ylabel() == "depth (%)"
    cells = np.ma.filled(panel.images[0].get_array(), np.nan)
    assert cells.shape == (10, 3)
    assert list(cells[:, 0]) == [100.0] * 10 and list(cells[:, 2]) == [0.0] * 10
    assert np.isnan(cells[8, 1]) and cells[4, 1] == 20.0


def test_report_writes_the_heatmap_and_links_it(tmp_path: Path):
    path = write_results(
        tmp_path / "a.json", "a", model_samples(GOOD), settings=settings(), depth=depth_block()
    )
    result = run(str(path), "--out", str(tmp_path / "out"), "--n-boot", "20")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "depth_heatmap.png").read_bytes().startswith(PNG_SIGNATURE)
    assert "![Depth x length heatmap](depth_heatmap.png)" in (
        tmp_path / "out" / "report.md"
    ).read_text(encoding="utf-8")
    plain = write_results(tmp_path / "b.json", "b", model_samples(GOOD), settings=settings())
    assert run(str(plain), "--out", str(tmp_path / "plain"), "--n-boot", "20").exit_code == 0
    assert not (tmp_path / "plain" / "depth_heatmap.png").exists()
