"""Per-task Base Ability over the base lengths a task has, and overall figures over one fixed task set."""

import numpy as np
import pytest

from longbench100.scoring.aggregates.aggregate import (
    CI_LEVEL,
    aggregate,
    bootstrap_means,
    draw_indices,
)
from tests.scoring.test_aggregate import BASE, cell, task_samples

# The worked example of docs/aggregates.md: single_doc_qa has no 2k sample (no real document is that short).
KV = {"2k": 90, "4k": 80, "6k": 70, "8k": 60}
QA = {"4k": 50, "6k": 30, "8k": 20}


def worked_example() -> dict:
    """Aggregate the documented example with 10 binary samples per cell."""
    return aggregate(
        task_samples("kv_retrieval", KV, n=10) + task_samples("single_doc_qa", QA, n=10),
        BASE,
        n_boot=0,
    )


def test_task_without_2k_gets_a_base_from_4k_and_6k():
    block = worked_example()["tasks"]["single_doc_qa"]
    assert block["base_ability"] == pytest.approx(40.0)
    assert block["base"] == {"labels": ["4k", "6k"], "n": {"4k": 10, "6k": 10}}
    assert block["lengths"]["8k"]["lc"] == pytest.approx(-50.0)
    assert block["avg_lc"] == pytest.approx(-50.0)
    assert block["warnings"] == [
        "Base Ability is the mean over 4k, 6k only: no graded samples at base length 2k"
    ]


def test_overall_covers_the_same_tasks_at_every_length():
    result = worked_example()
    assert result["tasks"]["kv_retrieval"]["base"] == {
        "labels": BASE,
        "n": {"2k": 10, "4k": 10, "6k": 10},
    }
    overall = result["overall"]
    assert overall["tasks"] == ["kv_retrieval", "single_doc_qa"] and overall["excluded_tasks"] == {}
    assert overall["base_ability"] == pytest.approx(
        60.0
    )  # (80 + 40) / 2, not 68.3 from S_2k over one task
    assert overall["lengths"]["8k"]["score"] == pytest.approx(40.0)
    assert overall["lengths"]["8k"]["lc"] == pytest.approx(
        -100 / 3
    )  # (40 - 60) / 60, the paper's ratio
    assert overall["avg_lc"] == pytest.approx(-100 / 3)
    assert overall["lengths"]["4k"]["score"] == pytest.approx(65.0)
    two_k = overall["lengths"]["2k"]
    assert (two_k["score"], two_k["lc"], two_k["n"], two_k["n_tasks"]) == (None, None, 10, 1)
    assert overall["warnings"] == [
        "S_2k is null: single_doc_qa has no graded samples at 2k "
        "(the overall averages the same 2 tasks at every length)"
    ]


def test_overall_base_is_the_paper_recipe_when_every_task_has_every_base_length():
    samples = task_samples("kv_retrieval", {"2k": 80, "4k": 60, "8k": 40}) + task_samples(
        "passage_count", {"2k": 20, "4k": 40, "8k": 30}
    )
    overall = aggregate(samples, ["2k", "4k"], n_boot=0)["overall"]
    from_overall_scores = (
        overall["lengths"]["2k"]["score"] + overall["lengths"]["4k"]["score"]
    ) / 2
    assert overall["base_ability"] == pytest.approx(from_overall_scores) == pytest.approx(50.0)


def test_no_base_at_all_is_null_with_the_fix_and_left_out_of_the_overall():
    samples = task_samples("kv_retrieval", {"2k": 50, "8k": 40}) + task_samples(
        "single_doc_sum", {"8k": 30, "16k": 20, "32k": 10}
    )
    result = aggregate(samples, BASE, n_boot=20)
    block = result["tasks"]["single_doc_sum"]
    assert (
        block["base_ability"] is None
        and block["avg_lc"] is None
        and block["base"] == {"labels": [], "n": {}}
    )
    assert block["avg_score"] == pytest.approx(20.0)
    assert block["warnings"][0] == (
        "no graded samples at any base length (2k, 4k, 6k): Base Ability and LongScore are null and the task is "
        "left out of the overall figures; fix: score with --base-lengths 8k,16k or generate a length of at most 6k "
        "for it"
    )
    overall = result["overall"]
    assert overall["tasks"] == ["kv_retrieval"]
    assert overall["excluded_tasks"] == {
        "single_doc_sum": "no graded samples at any base length, so no Base Ability"
    }
    assert overall["base_ability"] == pytest.approx(50.0)
    assert overall["lengths"]["16k"]["n"] == 0  # counts cover the tasks the figures cover
    assert overall["warnings"][0].startswith("covers 1 of 2 scored tasks: single_doc_sum left out")


def test_no_task_with_a_base_makes_every_overall_figure_null():
    result = aggregate(task_samples("single_doc_qa", {"8k": 40}), BASE, n_boot=10)
    overall = result["overall"]
    assert overall["tasks"] == [] and list(overall["excluded_tasks"]) == ["single_doc_qa"]
    assert (
        overall["base_ability"] is None
        and overall["avg_score"] is None
        and overall["avg_lc"] is None
    )
    assert all(entry["score"] is None for entry in overall["lengths"].values())
    assert "every overall figure is null" in overall["warnings"][0]


def test_cell_without_graded_samples_is_null_never_zero():
    samples = (
        task_samples("kv_retrieval", {"2k": 50, "8k": 40, "16k": 30})
        + task_samples("passage_count", {"2k": 50, "8k": 20})
        + cell("passage_count", "16k", [None, None])
    )
    result = aggregate(samples, ["2k"], n_boot=0)
    entry = result["tasks"]["passage_count"]["lengths"]["16k"]
    assert (entry["score"], entry["lc"], entry["n"], entry["n_ungraded"]) == (None, None, 0, 2)
    assert result["overall"]["lengths"]["16k"]["score"] is None
    only_ungraded = aggregate(cell("kv_retrieval", "2k", [None, None]), ["2k"], n_boot=0)["tasks"][
        "kv_retrieval"
    ]
    assert only_ungraded["lengths"]["2k"]["score"] is None and only_ungraded["base_ability"] is None
    assert only_ungraded["warnings"] == ["no graded samples at any length: every figure is null"]


def test_replicate_base_uses_the_point_estimate_base_lengths():
    """Recompute the single_doc_qa base interval by hand: every replicate averages 4k and 6k, never 2k."""
    seed, n_boot = 3, 200
    samples = task_samples("kv_retrieval", KV, n=10) + task_samples("single_doc_qa", QA, n=10)
    result = aggregate(samples, BASE, n_boot=n_boot, seed=seed)
    columns = []
    for label in ("4k", "6k"):
        scores = np.array(
            [s.score for s in samples if s.task == "single_doc_qa" and s.label == label]
        )
        columns.append(
            bootstrap_means(scores, draw_indices(seed, "single_doc_qa", label, len(scores), n_boot))
        )
    base = np.mean(columns, axis=0)
    tail = (1 - CI_LEVEL) / 2 * 100
    expected = np.percentile(base[1:], [tail, 100 - tail])
    assert result["tasks"]["single_doc_qa"]["base_ci"] == pytest.approx(list(expected))
    kv = result["tasks"]["kv_retrieval"]
    overall = result["overall"]
    assert overall["base_ci"][0] < overall["base_ability"] < overall["base_ci"][1]
    assert kv["base_ci"] is not None and overall["lengths"]["2k"]["ci"] is None
