"""Base Ability, LongScore, averages, counts, nulls and bootstrap intervals of ``aggregate``."""

import json

import pytest

from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length
from longbench100.scoring.aggregates.aggregate import MIN_BASE_ABILITY, aggregate
from longbench100.scoring.samples import ScoredSample

BASE = ["2k", "4k", "6k"]


def cell(
    task: str, label: str, scores: list[float | None], *, filtered: int = 0, start: int = 0
) -> list[ScoredSample]:
    """Samples of one (task, length) cell; the first ``filtered`` scores are marked filtered."""
    return [
        ScoredSample(
            f"{task}-{label}-{start + row:04d}",
            task,
            label,
            parse_length(label),
            start + row,
            score,
            filtered=row < filtered,
        )
        for row, score in enumerate(scores)
    ]


def task_samples(task: str, points: dict[str, float], n: int = 100) -> list[ScoredSample]:
    """``n`` binary samples per length whose mean is ``points`` (0-100, a multiple of 100/n)."""
    samples = []
    for label, value in points.items():
        ones = round(value * n / 100)
        samples += cell(task, label, [1.0] * ones + [0.0] * (n - ones))
    return samples


def all_intervals(block: dict):
    """Yield (point, interval) pairs of a block: every length's score and LC, base and averages."""
    for entry in block["lengths"].values():
        yield entry["score"], entry["ci"]
        yield entry["lc"], entry["lc_ci"]
    for key in ("base", "avg_score", "avg_lc"):
        yield block["base_ability" if key == "base" else key], block[f"{key}_ci"]


def test_paper_example_lc_8k():
    samples = task_samples("kv_retrieval", {"2k": 96.5, "4k": 96.5, "6k": 96.5, "8k": 95.8}, n=1000)
    result = aggregate(samples, BASE, n_boot=0)
    block = result["tasks"]["kv_retrieval"]
    assert block["base_ability"] == pytest.approx(96.5)
    assert block["lengths"]["8k"]["score"] == pytest.approx(95.8)
    assert block["lengths"]["8k"]["lc"] == pytest.approx(-0.7253886, abs=1e-6)
    assert round(block["lengths"]["8k"]["lc"], 1) == -0.7
    assert block["avg_lc"] == pytest.approx(block["lengths"]["8k"]["lc"])


def test_base_is_mean_of_base_lengths_and_averages_use_long_lengths():
    samples = task_samples("kv_retrieval", {"2k": 40, "4k": 50, "6k": 60, "8k": 40, "16k": 25})
    block = aggregate(samples, BASE, n_boot=0)["tasks"]["kv_retrieval"]
    assert block["base_ability"] == pytest.approx(50.0)
    assert block["lengths"]["8k"]["lc"] == pytest.approx(-20.0)
    assert block["lengths"]["16k"]["lc"] == pytest.approx(-50.0)
    assert block["lengths"]["2k"]["lc"] == pytest.approx(-20.0)  # LC is given at base lengths too
    assert block["avg_score"] == pytest.approx(32.5)
    assert block["avg_lc"] == pytest.approx(-35.0)


def test_score_is_points_from_unit_scores():
    samples = cell("single_doc_qa", "2k", [0.5, 1.0, 0.0, 0.25])
    entry = aggregate(samples, ["2k"], n_boot=0)["tasks"]["single_doc_qa"]["lengths"]["2k"]
    assert entry["score"] == pytest.approx(43.75)
    assert entry["n"] == 4


def test_filtered_and_ungraded_are_excluded_and_counted():
    samples = cell("single_doc_qa", "2k", [1.0, 0.0, 1.0, None], filtered=1) + cell(
        "single_doc_qa", "8k", [None, 0.5], start=10
    )
    result = aggregate(samples, ["2k"], n_boot=0)
    entry = result["tasks"]["single_doc_qa"]["lengths"]["2k"]
    assert entry["score"] == pytest.approx(
        50.0
    )  # the filtered 1.0 and the ungraded sample do not count
    assert (entry["n"], entry["n_filtered"], entry["n_ungraded"]) == (2, 1, 1)
    overall = result["overall"]
    assert (overall["n"], overall["n_filtered"], overall["n_ungraded"]) == (3, 1, 2)
    assert any("2 ungraded" in warning for warning in overall["warnings"])


def test_overall_is_mean_over_tasks_not_samples():
    samples = cell("kv_retrieval", "2k", [1.0] * 10) + cell("passage_count", "2k", [0.0] * 2)
    overall = aggregate(samples, ["2k"], n_boot=0)["overall"]
    assert overall["lengths"]["2k"]["score"] == pytest.approx(50.0)
    assert overall["lengths"]["2k"]["n"] == 12
    assert overall["lengths"]["2k"]["n_tasks"] == 2
    assert overall["tasks"] == ["kv_retrieval", "passage_count"]


def test_overall_lc_comes_from_overall_scores():
    samples = task_samples("kv_retrieval", {"2k": 80, "8k": 40}) + task_samples(
        "passage_count", {"2k": 20, "8k": 20}
    )
    overall = aggregate(samples, ["2k"], n_boot=0)["overall"]
    assert overall["base_ability"] == pytest.approx(50.0)
    assert overall["lengths"]["8k"]["score"] == pytest.approx(30.0)
    assert overall["lengths"]["8k"]["lc"] == pytest.approx(-40.0)  # not the mean of -50 and 0


def test_labels_are_canonical_and_ordered_by_length():
    samples = task_samples(
        "kv_retrieval", {"128k": 10, "2k": 50, "16k": 20, "8k": 30, "4k": 50, "6k": 50}
    )
    result = aggregate(samples, ["6k", "2048", "4k"], n_boot=0)
    assert result["base_labels"] == ["2k", "4k", "6k"]
    assert result["long_labels"] == ["8k", "16k", "128k"]
    assert list(result["lengths"].items()) == [
        ("2k", 2048),
        ("4k", 4096),
        ("6k", 6144),
        ("8k", 8192),
        ("16k", 16384),
        ("128k", 131072),
    ]
    assert list(result["tasks"]["kv_retrieval"]["lengths"]) == list(result["lengths"])


def test_tasks_follow_canonical_order():
    samples = task_samples("multi_doc_sum", {"2k": 50}) + task_samples("kv_retrieval", {"2k": 50})
    assert list(aggregate(samples, ["2k"], n_boot=0)["tasks"]) == ["kv_retrieval", "multi_doc_sum"]


def test_missing_base_length_gives_base_over_the_others_and_warning():
    samples = task_samples("kv_retrieval", {"2k": 50, "4k": 70, "8k": 40})
    result = aggregate(samples, BASE, n_boot=50)
    block = result["tasks"]["kv_retrieval"]
    assert block["base_ability"] == pytest.approx(60.0)
    assert block["base"] == {"labels": ["2k", "4k"], "n": {"2k": 100, "4k": 100}}
    assert block["lengths"]["8k"]["lc"] == pytest.approx(-100 / 3)
    entry = block["lengths"]["6k"]
    assert (entry["length"], entry["score"], entry["ci"], entry["n"], entry["lc"]) == (
        6144,
        None,
        None,
        0,
        None,
    )
    assert any(
        "mean over 2k, 4k only" in warning and "base length 6k" in warning
        for warning in block["warnings"]
    )
    assert result["overall"]["base_ability"] == pytest.approx(60.0)


def test_base_length_with_only_filtered_samples_is_missing():
    samples = cell("single_doc_qa", "2k", [1.0, 1.0], filtered=2) + cell(
        "single_doc_qa", "8k", [1.0], start=5
    )
    block = aggregate(samples, ["2k"], n_boot=0)["tasks"]["single_doc_qa"]
    assert block["base_ability"] is None
    assert block["lengths"]["2k"]["n_filtered"] == 2


def test_small_base_is_flagged():
    samples = task_samples("kv_retrieval", {"2k": 5, "8k": 4})
    block = aggregate(samples, ["2k"], n_boot=0)["tasks"]["kv_retrieval"]
    assert block["lengths"]["8k"]["lc"] == pytest.approx(-20.0)
    assert any(f"below {MIN_BASE_ABILITY:g} points" in warning for warning in block["warnings"])
    healthy = aggregate(task_samples("kv_retrieval", {"2k": 50, "8k": 40}), ["2k"], n_boot=0)
    assert healthy["tasks"]["kv_retrieval"]["warnings"] == []


def test_zero_base_makes_lc_null():
    samples = task_samples("kv_retrieval", {"2k": 0, "8k": 10})
    block = aggregate(samples, ["2k"], n_boot=100)["tasks"]["kv_retrieval"]
    assert block["base_ability"] == 0.0
    assert block["lengths"]["8k"]["lc"] is None and block["avg_lc"] is None
    assert block["avg_score"] == pytest.approx(10.0)
    assert any("undefined" in warning for warning in block["warnings"])


def test_missing_long_length_is_left_out_of_averages():
    samples = task_samples("kv_retrieval", {"2k": 50, "8k": 40, "16k": 20}) + task_samples(
        "passage_count", {"2k": 50, "8k": 30}
    )
    result = aggregate(samples, ["2k"], n_boot=0)
    block = result["tasks"]["passage_count"]
    assert block["lengths"]["16k"]["score"] is None
    assert block["avg_score"] == pytest.approx(30.0)
    assert any("16k" in warning and "left out" in warning for warning in block["warnings"])
    overall = result["overall"]  # never a mean over fewer tasks than the other lengths use
    assert overall["lengths"]["16k"]["score"] is None and overall["lengths"]["16k"]["lc"] is None
    assert overall["lengths"]["16k"]["n_tasks"] == 1
    assert overall["avg_score"] == pytest.approx(35.0)  # 8k only: (40 + 30) / 2
    assert any(
        "S_16k is null: passage_count has no graded samples" in warning
        and "left out of the averages" in warning
        for warning in overall["warnings"]
    )


def test_no_long_lengths_gives_null_averages():
    block = aggregate(task_samples("kv_retrieval", {"2k": 50}), ["2k"], n_boot=0)["tasks"][
        "kv_retrieval"
    ]
    assert block["avg_score"] is None and block["avg_lc"] is None
    assert any("no long lengths" in warning for warning in block["warnings"])


def test_bootstrap_is_deterministic_and_contains_point_estimates():
    samples = []
    for task, scores in (("kv_retrieval", (0.9, 0.5)), ("single_doc_qa", (0.8, 0.3))):
        for label, mean in zip(("2k", "4k", "8k", "16k"), (*scores, *scores)):
            samples += cell(task, label, [mean, mean - 0.2, mean + 0.1, 0.0, 1.0] * 8)
    first = aggregate(samples, ["2k", "4k"], n_boot=300, seed=7)
    assert first == aggregate(samples, ["2k", "4k"], n_boot=300, seed=7)
    other = aggregate(samples, ["2k", "4k"], n_boot=300, seed=8)
    assert other["overall"]["avg_lc_ci"] != first["overall"]["avg_lc_ci"]
    assert other["overall"]["avg_lc"] == first["overall"]["avg_lc"]
    for block in (*first["tasks"].values(), first["overall"]):
        for point, interval in all_intervals(block):
            assert interval is not None
            assert interval[0] <= point <= interval[1]
            assert interval[0] < interval[1]


def test_task_intervals_do_not_depend_on_other_tasks():
    kv = task_samples("kv_retrieval", {"2k": 60, "8k": 30}, n=20)
    alone = aggregate(kv, ["2k"], n_boot=200)["tasks"]["kv_retrieval"]
    together = aggregate(
        kv + task_samples("passage_count", {"2k": 50, "8k": 50}, n=20), ["2k"], n_boot=200
    )
    assert together["tasks"]["kv_retrieval"] == alone
    assert together["overall"]["avg_lc_ci"] != alone["avg_lc_ci"]


def test_no_bootstrap_gives_null_intervals():
    block = aggregate(task_samples("kv_retrieval", {"2k": 60, "8k": 30}), ["2k"], n_boot=0)[
        "overall"
    ]
    assert all(interval is None for _, interval in all_intervals(block))


def test_result_is_strict_json():
    samples = task_samples("kv_retrieval", {"2k": 0, "8k": 10}) + task_samples(
        "passage_count", {"4k": 50}
    )
    result = aggregate(samples, BASE, n_boot=20)
    assert json.loads(json.dumps(result, allow_nan=False)) == result
    assert result["settings"] == {
        "n_boot": 20,
        "seed": 0,
        "ci_level": 0.95,
        "min_base_ability": MIN_BASE_ABILITY,
    }


def test_bad_inputs_raise():
    with pytest.raises(UserError, match="no base lengths"):
        aggregate(task_samples("kv_retrieval", {"2k": 50}), [])
    with pytest.raises(UserError, match="no scored samples"):
        aggregate([], BASE)
    with pytest.raises(UserError, match="bad length label"):
        aggregate(task_samples("kv_retrieval", {"2k": 50}), ["two"])
    with pytest.raises(ValueError, match="outside 0-1"):
        aggregate(cell("kv_retrieval", "2k", [1.5]), ["2k"])
