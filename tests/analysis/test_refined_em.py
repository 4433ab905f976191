"""The Dolce EM fit, the category rule, the window grid and the IDK recogniser, on simulated outcomes."""

from __future__ import annotations

import json
import random

import pytest

from longbench100.analysis.dolce.categories import Thresholds, category, thresholds
from longbench100.analysis.dolce.closed_forms import window_cover_array, window_cover_probability
from longbench100.analysis.dolce.outcomes import is_idk
from longbench100.analysis.dolce.refined_em import (
    Problem,
    candidate_pairs,
    candidates,
    canonical_pair,
    distinct_pairs,
    fit_cow,
    fit_pig,
)
from longbench100.analysis.dolce.simulate import (
    best_possible_hit,
    grid_truths,
    random_spans,
    simulate_problem,
)
from longbench100.analysis.dolce.windows import parse_windows, probe_windows, window_starts
from longbench100.core.errors import UserError


def test_float_pi_matches_exact_pi():
    for length in range(1, 16):
        for lam in range(0, length + 1):
            for k in [0] if lam == 0 else range(1, length // lam + 1):
                for window in range(length + 1):
                    exact = float(window_cover_probability(lam, k, length, window))
                    assert float(window_cover_array(lam, k, length, window)) == pytest.approx(
                        exact, abs=1e-9
                    )


def test_windows_grid_and_starts():
    assert parse_windows("0,1,5,all") == ((0, 1, 5), True)
    with pytest.raises(UserError, match="'x'"):
        parse_windows("1,x")
    assert probe_windows((0, 1, 5, 500), False, 6) == [(0, 0)] + [(1, s) for s in range(6)] + [
        (5, 0),
        (5, 1),
        (6, 0),
    ]
    assert window_starts(2, 60, 5) == list(range(0, 59, 5))
    assert window_starts(1, 100, 1, cap=5) == [0, 25, 50, 74, 99]


def test_a_stride_keeps_at_least_ten_windows_of_a_size():
    assert window_starts(2, 20, 5) == list(
        range(0, 19, 2)
    )  # 19 starts: the stride shrinks to 2, ten windows
    assert window_starts(2, 50, 5) == list(range(0, 49, 5))  # 49 starts: stride 5 already keeps ten
    assert window_starts(1, 30, 5) == list(
        range(0, 30, 3)
    )  # 30 starts: the stride shrinks to 3, ten windows
    assert window_starts(1, 8, 5) == list(range(8))  # fewer than ten: all of them
    assert window_starts(10, 300, 5) == list(range(0, 291, 5))  # plenty: the stride as asked


def test_candidates_include_zero_the_step_past_the_largest_window_and_l():
    assert candidates((0, 1, 2, 5, 30), 30) == [0, 1, 2, 5, 6, 30]
    pairs = candidate_pairs((0, 1, 2, 5, 30), 30)
    assert (
        pairs[0] == (0, 0)
        and (5, 6) in pairs
        and (6, 5) in pairs
        and (6, 6) not in pairs
        and (30, 1) in pairs
    )


def test_random_spans_are_disjoint_and_inside():
    rng = random.Random(3)
    for _ in range(500):
        length = rng.randint(1, 40)
        lam = rng.randint(1, length)
        k = rng.randint(1, length // lam)
        spans = random_spans(lam, k, length, rng)
        assert len(spans) == k and all(b - a == lam for a, b in spans) and spans[-1][1] <= length
        assert all(left[1] <= right[0] for left, right in zip(spans, spans[1:]))


def test_category_rule():
    limits = thresholds([0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 900], 900)
    assert limits == Thresholds(10, 10, 500)
    assert [
        category(lam, k, limits)
        for lam, k in [(0, 0), (2, 20), (5, 1), (10, 10), (11, 1), (500, 1), (501, 1)]
    ] == ["I", "II", "III", "III", "IV", "IV", "V"]
    assert thresholds([0, 4], 4) == Thresholds(1, 1, 1)  # closed book and whole context only


@pytest.mark.parametrize("truth", [(0, 0), (20, 1), (2, 10), (10, 5), (5, 5), (51, 1)])
def test_fit_recovers_clear_cases_without_noise(truth):
    rng = random.Random(5)
    sizes = (0, 1, 2, 5, 10, 20, 50)
    problems = [simulate_problem(f"p{i}", *truth, 200, sizes, 0.0, rng) for i in range(6)]
    fits, noise = fit_cow(problems)
    assert [(fit.lam, fit.k) for fit in fits] == [truth] * 6
    assert sum(noise) == pytest.approx(1.0)


def test_fit_separates_retrieval_from_holistic_under_noise():
    rng = random.Random(9)
    sizes = (0, 1, 2, 5, 10, 20, 50)
    problems = [simulate_problem(f"r{i}", 2, 1, 150, sizes, 0.1, rng) for i in range(20)]
    problems += [simulate_problem(f"h{i}", 150, 1, 150, sizes, 0.1, rng) for i in range(20)]
    fits, noise = fit_cow(problems)
    found = [
        category(fit.lam, fit.k, thresholds(list(p.windows), p.length))
        for fit, p in zip(fits, problems)
    ]
    assert sum(name == "III" for name in found[:20]) >= 18
    assert all(fit.lam >= 50 for fit in fits[20:])  # nothing short suffices
    assert noise[1] > 0.2  # the random outcomes' wrong answers are the noise's


def test_pig_fit_ranks_spread_aspects_above_few():
    """Windows score the share of aspects they hold; many spread aspects need a longer span than two."""
    rng = random.Random(2)
    length = 40

    def problem(name: str, aspects: int) -> Problem:
        units = rng.sample(range(length), aspects)
        windows, scores = [], []
        for size in (0, 1, 2, 5, 10, 20, 40):
            for start in range(0, length - size + 1):
                hit = sum(start <= unit < start + size for unit in units) / aspects
                windows.append(size)
                scores.append(min(1.0, max(0.0, hit + rng.uniform(-0.02, 0.02))) if hit else None)
        return Problem(name, length, tuple(windows), tuple(scores))

    fits = fit_pig([problem("few", 2), problem("many", 20)])
    assert 0 < fits[0].lam < fits[1].lam


@pytest.mark.parametrize(
    "reply",
    [
        "not enough information",
        "Not enough information.",
        " Passage not enough information",
        "The text shown does not contain enough information to answer.",
        "I cannot determine the final value from the records shown.",
        "<think>the key is missing</think>Not enough information",
        "The passage doesn't mention what features are extracted.",
        "N/A",
        "Unanswerable",
    ],
)
def test_idk_replies_are_recognised(reply):
    assert is_idk(reply)


@pytest.mark.parametrize(
    "reply",
    [
        " 7",
        "Passage 3",
        "61defe86-37f9-4bc7-b07a-7bd528ff1257",
        "Sentiment, morality and style features",
        "12",
        "The answer is the information retrieval model described in section 2, which "
        + "works well " * 30
        + "but not enough information was given about its cost.",
    ],
)
def test_answers_are_not_idk(reply):
    assert not is_idk(reply)


def test_cow_or_pig_by_the_dip_test():
    from longbench100.analysis.dolce.pipeline import outcome_kind

    rng = random.Random(4)
    assert outcome_kind("accuracy", [0.3, 0.5, 0.7]) == "COW"  # accuracy tasks always
    assert outcome_kind("qa_judge", [1.0, 0.0, None, 1.0]) == "COW"  # only 0, 1 and IDK
    two_modes = [rng.uniform(0.0, 0.08) for _ in range(60)] + [
        rng.uniform(0.85, 1.0) for _ in range(60)
    ]
    assert outcome_kind("qa_judge", two_modes) == "COW"
    spread = [rng.uniform(0.0, 1.0) for _ in range(120)]
    one_mode = [min(1.0, max(0.0, rng.gauss(0.5, 0.12))) for _ in range(120)]
    assert outcome_kind("summary_judge", one_mode) == "PIG"
    assert outcome_kind("summary_judge", spread) == "PIG"


def test_pairs_past_the_largest_window_cannot_be_told_apart():
    """Why exact recovery on the full candidate grid cannot reach 100%: every span longer than the
    largest partial window is missed by every partial window and caught by the whole context, so
    (max C + 1, k) and (L, 1) give every probe the same probability, and the fit can only pick one."""
    sizes = (0, 1, 2, 5, 10, 20, 50, 200)
    same = [(51, 1), (51, 2), (200, 1)]
    assert all(pair in candidate_pairs(sizes, 200) for pair in same)
    probabilities = [
        [float(window_cover_probability(lam, k, 200, size)) for size in sizes] for lam, k in same
    ]
    assert probabilities[0] == probabilities[1] == probabilities[2] == [0.0] * 7 + [1.0]
    rng = random.Random(2)
    problems = [
        simulate_problem(f"p{i}", *pair, 200, sizes[:-1], 0.0, rng) for i, pair in enumerate(same)
    ]
    fits, _ = fit_cow(problems)
    assert {(fit.lam, fit.k) for fit in fits} == {(51, 1)}  # one answer for three truths


@pytest.mark.parametrize(
    "length,sizes",
    [
        (200, (0, 1, 2, 5, 10, 20, 50, 200)),
        (12, (0, 1, 2, 5, 12)),
        (7, (1, 2, 7)),
        (30, (0, 3, 30)),
    ],
)
def test_grid_collapse_merges_exactly_the_pairs_with_identical_likelihoods(length, sizes):
    """Two candidate pairs share a class iff every probed window gets the same exact pi and lies on the
    same side of lambda (the COW likelihood reads nothing else); each class keeps its first pair."""
    pairs = candidate_pairs(sizes, length)
    kept = distinct_pairs(sizes, length)

    def signature(pair: tuple[int, int]) -> tuple:
        return tuple(
            (window_cover_probability(*pair, length, size), size < pair[0]) for size in sizes
        )

    by_signature: dict[tuple, list[tuple[int, int]]] = {}
    for pair in pairs:
        by_signature.setdefault(signature(pair), []).append(pair)
    assert kept == [members[0] for members in by_signature.values()]
    assert len(set(map(signature, kept))) == len(kept)  # distinct ones differ
    for members in by_signature.values():
        assert {canonical_pair(*pair, sizes, length) for pair in members} == {members[0]}


def test_grid_collapse_keeps_the_category_when_a_partial_window_was_probed():
    sizes, length = (0, 1, 2, 5, 10, 20, 50, 200), 200
    assert canonical_pair(200, 1, sizes, length) == canonical_pair(51, 3, sizes, length) == (51, 1)
    limits = thresholds(list(sizes), length)
    for pair in candidate_pairs(sizes, length):
        assert category(*pair, limits) == category(*canonical_pair(*pair, sizes, length), limits)
    assert canonical_pair(50, 1, sizes, length) == (50, 1) and canonical_pair(
        0, 0, sizes, length
    ) == (0, 0)


@pytest.mark.parametrize("noise", [0.0, 0.2])
def test_exact_recovery_on_the_distinguishable_grid_is_near_the_best_possible(noise):
    """A small deterministic version of bench/bench_dolce.py's recovery table: truths uniform on the
    distinguishable grid, outcomes drawn from the model. The ceiling is the Bayes-optimal estimator's
    rate (it knows the true model and noise); near ties (lambda 50 vs 51, k 1 vs 2 with a single hit)
    keep it below 100%."""
    rng = random.Random(11)
    sizes = (0, 1, 2, 5, 10, 20, 50)
    truths, problems = [], []
    for index in range(80):
        length = rng.choice((100, 200, 300))
        truth = rng.choice(grid_truths(sizes, length))
        truths.append(truth)
        problems.append(simulate_problem(f"p{index}", *truth, length, sizes, noise, rng))
    fits, _ = fit_cow(problems)
    exact = sum((fit.lam, fit.k) == truth for fit, truth in zip(fits, truths))
    ceiling = sum(
        best_possible_hit(problem, truth, noise) for problem, truth in zip(problems, truths)
    )
    assert ceiling < len(truths)  # the near ties are real
    assert exact >= ceiling - 0.08 * len(truths)


def test_no_context_problems_stay_in_category_i_under_noise():
    """With a per-problem categorical below lambda free of charge, a long span that only the whole
    context catches explains 'correct at every window' as well as lambda = 0 does, plus a little noise;
    the BIC penalty and each pair's own oracle weight keep such problems at (0, 0)."""
    rng = random.Random(8)
    sizes = (0, 1, 2, 5, 10, 20, 50)
    problems = [simulate_problem(f"i{i}", 0, 0, 200, sizes, 0.2, rng) for i in range(10)]
    problems += [simulate_problem(f"r{i}", 5, 1, 200, sizes, 0.2, rng) for i in range(20)]
    fits, _ = fit_cow(problems)
    for problem, fit in zip(problems[:10], fits):
        closed_book = problem.outcomes[problem.windows.index(0)]
        # a noisy closed-book miss is better explained by "every unit holds the answer" (1, L): category II
        assert (fit.lam, fit.k) == ((0, 0) if closed_book == 1.0 else (1, 200))
    assert sum(problem.outcomes[0] == 1.0 for problem in problems[:10]) >= 8
    assert all(fit.lam <= 10 for fit in fits[10:])  # the retrieval problems keep a short span


def test_noise_free_outcomes_reach_the_best_possible_exact_rate():
    """Without noise a problem's outcomes hold no wrong answer; the oracle-weight gate then fits it noise
    free, so a single hit at C = lambda is not handed to the task's noise (without the gate the fit
    read lambda 1 as 2 on such problems). Default windows: the Bayes ceiling is above 90% here."""
    rng = random.Random(4)  # the fit without the gate: 69 exact against a ceiling of 76
    sizes = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500)
    truths, problems = [], []
    for index in range(80):
        length = rng.choice((100, 200, 300))
        truth = rng.choice(grid_truths(sizes, length))
        truths.append(truth)
        problems.append(simulate_problem(f"p{index}", *truth, length, sizes, 0.0, rng))
    fits, _ = fit_cow(problems)
    exact = sum((fit.lam, fit.k) == truth for fit, truth in zip(fits, truths))
    ceiling = sum(
        best_possible_hit(problem, truth, 0.0) for problem, truth in zip(problems, truths)
    )
    assert exact >= ceiling - 1 and exact >= 0.9 * len(truths)


def _hand_fit() -> dict:
    """A small dolce.json as ``dolce fit`` writes it: two problems of one task, both category V."""
    rows = [
        {
            "id": f"p{n}",
            "task": "kv_retrieval",
            "label": "2k",
            "category": "V",
            "solved": True,
            "lambda": 3.0,
            "k": 1.0,
        }
        for n in range(2)
    ]
    summary = {
        "problems": 2,
        "kinds": {"COW": 2, "PIG": 0},
        "noise": None,
        "counts": {"I": 0, "II": 0, "III": 0, "IV": 0, "V": 2},
        "shares": {"I": 0.0, "II": 0.0, "III": 0.0, "IV": 0.0, "V": 1.0},
        "never_solved": {"I": 0, "II": 0, "III": 0, "IV": 0, "V": 0},
        "warnings": [],
    }
    return {
        "never_solved": "flag",
        "categories": ["I", "II", "III", "IV", "V"],
        "tasks": {"kv_retrieval": summary},
        "problems": rows,
    }


def _summary_says_iii(fit: dict) -> dict:
    summary = fit["tasks"]["kv_retrieval"]
    summary["counts"] = {**summary["counts"], "III": 2, "V": 0}
    summary["shares"] = {**summary["shares"], "III": 1.0, "V": 0.0}
    return fit


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_summary_says_iii, "tasks.kv_retrieval.counts is"),
        (lambda fit: {**fit, "problems": {}}, "problems must be a list"),
        (lambda fit: {**fit, "problems": None}, "problems must be a list"),
        (
            lambda fit: {**fit, "problems": [{**fit["problems"][0], "category": "VII"}]},
            "category 'VII' is not one of",
        ),
        (
            lambda fit: {**fit, "problems": [{**fit["problems"][0], "lambda": "big"}]},
            "lambda must be",
        ),
        (lambda fit: {**fit, "problems": fit["problems"][:1]}, "tasks.kv_retrieval.problems is 2"),
    ],
)
def test_a_dolce_fit_edited_by_hand_is_refused_in_one_line(tmp_path, change, message):
    """``dolce report`` (and ``report --dolce``, which reads the fit with the same loader)."""
    from click.testing import CliRunner

    from longbench100.cli import main

    good = tmp_path / "good.json"
    good.write_text(json.dumps(_hand_fit()))
    assert (
        CliRunner()
        .invoke(main, ["dolce", "report", str(good), "--out", str(tmp_path / "ok")])
        .exit_code
        == 0
    )
    edited = tmp_path / "dolce.json"
    edited.write_text(json.dumps(change(_hand_fit())))
    result = CliRunner().invoke(
        main, ["dolce", "report", str(edited), "--out", str(tmp_path / "r")]
    )
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, (
        result.output
    )
    assert message in errors[0], errors[0]
    assert not (tmp_path / "r" / "dolce.md").exists()
