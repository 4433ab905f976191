"""Score by gold-depth decile: the ``depth`` key of ``aggregate`` and the binning behind it."""

import json

import pytest

from longbench100.core.lengths import parse_length
from longbench100.scoring.aggregates.aggregate import aggregate
from longbench100.scoring.aggregates.depth import decile_bins, decile_of
from longbench100.scoring.samples import ScoredSample


def sample(
    task: str, label: str, row: int, score: float | None, depth: float | None, **kw
) -> ScoredSample:
    """One scored sample with a gold depth."""
    return ScoredSample(
        f"{task}-{label}-{row:04d}", task, label, parse_length(label), row, score, depth=depth, **kw
    )


def test_decile_edges():
    assert decile_of(0.0) == 0
    assert decile_of(0.0999) == 0
    assert decile_of(0.1) == 1
    assert decile_of(0.3) == 3 and decile_of(0.7) == 7
    assert decile_of(0.95) == 9
    assert decile_of(1.0) == 9  # the last bin includes 1.0
    for bad in (-0.01, 1.01):
        with pytest.raises(ValueError, match="outside 0-1"):
            decile_of(bad)


def test_decile_bins_shape_and_means():
    bins = decile_bins([(0.0, 1.0), (0.05, 0.0), (0.1, 0.5), (1.0, 1.0), (0.95, 0.0)])
    assert [(b["lo"], b["hi"]) for b in bins] == [(i / 10, (i + 1) / 10) for i in range(10)]
    assert bins[0]["lo"] == 0.0 and bins[1]["lo"] == 0.1 and bins[-1]["hi"] == 1.0
    assert [b["n"] for b in bins] == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert bins[0]["score"] == pytest.approx(50.0)
    assert bins[1]["score"] == pytest.approx(50.0)
    assert bins[9]["score"] == pytest.approx(50.0)
    assert all(b["score"] is None for b in bins[2:9])


def test_aggregate_depth_counts_graded_unfiltered_samples_with_a_depth():
    samples = [
        sample("kv_retrieval", "8k", 0, 1.0, 0.02),
        sample("kv_retrieval", "8k", 1, 0.0, 0.08),
        sample("kv_retrieval", "8k", 2, 1.0, 0.55),
        sample("kv_retrieval", "8k", 3, None, 0.55),  # ungraded: left out
        sample("kv_retrieval", "8k", 4, 1.0, 0.56, filtered=True),  # filtered: left out
        sample("kv_retrieval", "8k", 5, 0.0, None),  # no depth: left out of depth, kept in S_8k
        sample("kv_retrieval", "2k", 0, 1.0, None),  # a length without depths: absent
        sample("passage_count", "8k", 0, 1.0, None),  # a task without depths: absent
    ]
    result = aggregate(samples, ["2k"], n_boot=0)
    assert list(result["depth"]) == ["kv_retrieval"]
    assert list(result["depth"]["kv_retrieval"]) == ["8k"]
    bins = result["depth"]["kv_retrieval"]["8k"]
    assert len(bins) == 10
    assert (bins[0]["n"], bins[0]["score"]) == (2, pytest.approx(50.0))
    assert (bins[5]["n"], bins[5]["score"]) == (1, pytest.approx(100.0))
    assert sum(b["n"] for b in bins) == 3
    assert result["tasks"]["kv_retrieval"]["lengths"]["8k"]["n"] == 4
    assert json.loads(json.dumps(result, allow_nan=False)) == result


def test_depth_is_absent_without_any_depth():
    result = aggregate([sample("kv_retrieval", "2k", 0, 1.0, None)], ["2k"], n_boot=0)
    assert result["depth"] == {}


def test_depth_outside_range_is_refused():
    with pytest.raises(ValueError, match="outside 0-1"):
        aggregate([sample("kv_retrieval", "2k", 0, 1.0, 1.5)], ["2k"], n_boot=0)
