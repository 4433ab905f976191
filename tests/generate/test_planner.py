"""The row planner: ground truth stratified over sources, rows paired across lengths, unpaired mode, determinism."""

from __future__ import annotations

from collections import Counter

from longbench100.generate.planner import LengthPlan, plan_rows, rows_per_source
from longbench100.sources.records import Item
from longbench100.tasks.base import Candidate

BUDGETS = {"short": 1000, "middle": 4000, "long": 16000}


def _candidates(sizes: dict[str, list[int]]) -> list[Candidate]:
    """Candidates per source (in the given order), one per size; ids name the source and size."""
    return [
        Candidate(
            Item(
                f"{source}-{index}",
                source,
                (f"{source}/doc-{index}",),
                question="q",
                answers=("a",),
            ),
            tokens,
        )
        for source, tokens_list in sizes.items()
        for index, tokens in enumerate(tokens_list)
    ]


def _sources(plan: LengthPlan) -> Counter:
    return Counter(row.candidate.item.source for row in plan.rows)


def test_short_items_of_one_source_no_longer_take_every_row() -> None:
    # "news" items fit every length; "reports" and "contracts" are longer: before stratification news took all rows.
    candidates = _candidates(
        {"news": [500] * 20, "reports": [3000] * 20, "contracts": [12000] * 20}
    )
    plans = plan_rows(candidates, BUDGETS, 9, seed=1, task="t")
    assert _sources(plans["short"]) == {"news": 9}
    assert _sources(plans["middle"]) == {"news": 5, "reports": 4} or _sources(plans["middle"]) == {
        "news": 4,
        "reports": 5,
    }
    assert _sources(plans["long"]) == {"news": 3, "reports": 3, "contracts": 3}
    assert rows_per_source(plans["long"], plans["long"].rows) == {
        "news": 3,
        "reports": 3,
        "contracts": 3,
    }
    assert rows_per_source(plans["short"], plans["short"].rows) == {
        "news": 9,
        "reports": 0,
        "contracts": 0,
    }


def test_rows_keep_their_item_wherever_it_fits() -> None:
    candidates = _candidates(
        {"news": [500] * 20, "reports": [3000] * 20, "contracts": [12000] * 20}
    )
    plans = plan_rows(candidates, BUDGETS, 9, seed=1, task="t")
    for row in range(9):
        long_row = plans["long"].rows[row]
        assert long_row.paired
        for label in ("short", "middle"):
            row_plan = plans[label].rows[row]
            fits = long_row.candidate.min_tokens <= BUDGETS[label]
            assert row_plan.paired == fits
            assert (row_plan.candidate is long_row.candidate) == fits
    for plan in plans.values():  # no item asked twice at one length while unused ones remain
        assert len({id(row.candidate) for row in plan.rows}) == 9 and not any(
            row.reused for row in plan.rows
        )


def test_a_small_source_gets_what_it_has_and_the_others_share_the_rest() -> None:
    candidates = _candidates({"big": [500] * 10, "small": [500], "other": [500] * 10})
    plans = plan_rows(candidates, {"only": 1000}, 9, seed=5, task="t")
    assert _sources(plans["only"]) == {"big": 4, "small": 1, "other": 4}
    assert not any(row.reused for row in plans["only"].rows)


def test_items_are_reused_only_once_every_fitting_item_is_in_use() -> None:
    candidates = _candidates({"a": [500, 500], "b": [500]})
    plan = plan_rows(candidates, {"only": 1000}, 5, seed=5, task="t")["only"]
    assert len({id(row.candidate) for row in plan.rows if not row.reused}) == 3
    assert sum(row.reused for row in plan.rows) == 2 and plan.eligible == 3


def test_unpaired_rows_are_stratified_too_and_never_paired() -> None:
    candidates = _candidates(
        {"news": [500] * 20, "reports": [3000] * 20, "contracts": [12000] * 20}
    )
    plans = plan_rows(candidates, BUDGETS, 9, seed=1, task="t", paired=False)
    assert _sources(plans["long"]) == {"news": 3, "reports": 3, "contracts": 3}
    assert not any(row.paired for plan in plans.values() for row in plan.rows)


def test_the_plan_is_a_function_of_the_seed() -> None:
    candidates = _candidates({"news": [500] * 20, "reports": [3000] * 20})
    ids = lambda plans: [row.candidate.item.id for plan in plans.values() for row in plan.rows]  # noqa: E731
    assert ids(plan_rows(candidates, BUDGETS, 6, seed=1, task="t")) == ids(
        plan_rows(list(candidates), BUDGETS, 6, seed=1, task="t")
    )
    assert ids(plan_rows(candidates, BUDGETS, 6, seed=1, task="t")) != ids(
        plan_rows(candidates, BUDGETS, 6, seed=2, task="t")
    )


def test_lengths_without_a_fitting_item_get_no_rows_and_synthetic_tasks_no_sources() -> None:
    plans = plan_rows(_candidates({"long": [12000] * 3}), BUDGETS, 2, seed=1, task="t")
    assert plans["short"].rows == [] and plans["short"].eligible == 0
    synthetic = plan_rows(None, BUDGETS, 2, seed=1, task="t")
    assert rows_per_source(synthetic["short"], synthetic["short"].rows) is None
