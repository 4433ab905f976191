"""Paired bootstrap comparison of two models' average LC."""

import numpy as np
import pytest

from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length
from longbench100.scoring.aggregates.aggregate import aggregate
from longbench100.scoring.aggregates.compare import compare_avg_lc
from longbench100.scoring.samples import ScoredSample

LABELS = ["2k", "4k", "8k", "16k"]
BASE = ["2k", "4k"]
TASKS = ["kv_retrieval", "single_doc_qa"]


def model_samples(
    long_mean: float, seed: int, n: int = 40, base_mean: float = 0.8
) -> list[ScoredSample]:
    """Random 0-1 samples with the same ids for every model: ``base_mean`` at base lengths, ``long_mean`` beyond."""
    rng = np.random.default_rng(seed)
    samples = []
    for task in TASKS:
        for label in LABELS:
            mean = base_mean if label in BASE else long_mean
            for row in range(n):
                score = float(np.clip(rng.normal(mean, 0.15), 0.0, 1.0))
                samples.append(
                    ScoredSample(
                        f"{task}-{label}-{row:04d}", task, label, parse_length(label), row, score
                    )
                )
    return samples


def test_clearly_better_model_is_significant():
    good, bad = model_samples(0.75, seed=1), model_samples(0.3, seed=2)
    comparison = compare_avg_lc("good", good, "bad", bad, BASE, n_boot=500)
    assert comparison.significant
    assert comparison.diff > 40
    assert comparison.ci[0] > 0
    assert comparison.p_value < 0.01
    assert comparison.n_shared == len(good)
    reverse = compare_avg_lc("bad", bad, "good", good, BASE, n_boot=500)
    assert reverse.significant and reverse.diff == pytest.approx(-comparison.diff)


def test_identical_models_are_not_flagged():
    samples = model_samples(0.5, seed=3)
    comparison = compare_avg_lc("a", samples, "b", list(samples), BASE, n_boot=300)
    assert comparison.diff == 0.0
    assert comparison.ci == (0.0, 0.0)
    assert comparison.p_value == 1.0
    assert not comparison.significant


def test_same_quality_models_are_not_flagged():
    comparison = compare_avg_lc(
        "a", model_samples(0.5, seed=4), "b", model_samples(0.5, seed=5), BASE, n_boot=500
    )
    assert comparison.ci[0] < 0 < comparison.ci[1]
    assert not comparison.significant


def test_point_difference_matches_aggregates_on_full_overlap():
    a, b = model_samples(0.6, seed=6), model_samples(0.4, seed=7)
    comparison = compare_avg_lc("a", a, "b", b, BASE, n_boot=0)
    expected = (
        aggregate(a, BASE, n_boot=0)["overall"]["avg_lc"]
        - aggregate(b, BASE, n_boot=0)["overall"]["avg_lc"]
    )
    assert comparison.diff == pytest.approx(expected)
    assert comparison.ci is None and not comparison.significant


def test_only_ids_counted_for_both_models_are_used():
    a = model_samples(0.6, seed=8)
    b = model_samples(0.6, seed=9)
    b = [
        ScoredSample(
            s.id,
            s.task,
            s.label,
            s.length,
            s.row,
            None if s.row == 0 else s.score,
            filtered=s.row == 1,
        )
        for s in b[: len(b) // 2]
    ]
    comparison = compare_avg_lc("a", a, "b", b, BASE, n_boot=100)
    # b keeps the first task only, minus one ungraded and one filtered row per length.
    assert comparison.n_shared == len(LABELS) * 38


def test_seeded_and_deterministic():
    a, b = model_samples(0.6, seed=10), model_samples(0.5, seed=11)
    first = compare_avg_lc("a", a, "b", b, BASE, n_boot=200, seed=3)
    assert first == compare_avg_lc("a", a, "b", b, BASE, n_boot=200, seed=3)
    assert first.ci != compare_avg_lc("a", a, "b", b, BASE, n_boot=200, seed=4).ci


def test_no_shared_base_gives_null_difference():
    a = [s for s in model_samples(0.6, seed=12) if s.label not in BASE]
    comparison = compare_avg_lc("a", a, "b", model_samples(0.6, seed=13), BASE, n_boot=50)
    assert comparison.diff is None and comparison.ci is None and not comparison.significant
    assert comparison.tasks == () and comparison.excluded_tasks == tuple(TASKS)


def test_task_set_and_base_lengths_follow_the_aggregate_rules():
    """A task without a 2k base uses 4k in both models; a task without any base is left out, and says so."""

    def without(samples, task, labels):
        return [s for s in samples if not (s.task == task and s.label in labels)]

    a = without(model_samples(0.6, seed=15), "single_doc_qa", {"2k"})
    b = without(model_samples(0.4, seed=16), "single_doc_qa", {"2k"})
    extra_a = [
        ScoredSample(f"passage_count-8k-{row:04d}", "passage_count", "8k", 8192, row, 1.0)
        for row in range(5)
    ]
    extra_b = [
        ScoredSample(f"passage_count-8k-{row:04d}", "passage_count", "8k", 8192, row, 0.0)
        for row in range(5)
    ]
    comparison = compare_avg_lc("a", a + extra_a, "b", b + extra_b, BASE, n_boot=0)
    assert comparison.tasks == ("kv_retrieval", "single_doc_qa")
    assert comparison.excluded_tasks == ("passage_count",)
    overall_a = aggregate(a + extra_a, BASE, n_boot=0)["overall"]
    overall_b = aggregate(b + extra_b, BASE, n_boot=0)["overall"]
    assert overall_a["tasks"] == list(comparison.tasks) and list(overall_a["excluded_tasks"]) == [
        "passage_count"
    ]
    assert comparison.diff == pytest.approx(overall_a["avg_lc"] - overall_b["avg_lc"])


def test_repeated_id_is_an_error():
    samples = model_samples(0.6, seed=14)
    with pytest.raises(UserError, match="appears twice"):
        compare_avg_lc("a", samples + samples[:1], "b", samples, BASE)
