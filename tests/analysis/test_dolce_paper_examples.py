"""The paper's own Category V problems, fitted in paper mode.

The Dolce paper's appendix of representative problems (its Appendix J) shows, for each of its two
tasks, the most representative Category V (holistic) problem with its outcome shares per window
size: QuALITY's "How many ..." question (L = 408 units) and LongFQA's "Does JLL ..." question
(L = 162). Neither is ever answered right: P(x = 1) = 0 at every window, and at the whole context
(C = L) every answer is "I don't know". The paper fits both lambda = L, k = 1 and calls them
Category V. Paper mode must give that answer too, and flag the problems ``solved: false``.

The tables' other cells split each partial window's answers between wrong and "I don't know";
those splits are not restated here, so the test runs over several splits (all IDK, wrong answers
rising with the window size, a constant share, a closed book that always guesses), alone and among
solved problems of the same task. The outcomes go in as probes and replies, through the same
scoring as a model's predictions. A split whose largest partial window declines clearly more often
than the smaller ones is another problem for Algorithm 1 (the oracle then explains those IDKs with
lambda = that window size: category IV); a test keeps that case, so paper mode is seen to report
the fit's category, not "V" for every problem it never solves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from longbench100.analysis.dolce.chart import category_figure, write_dolce_report
from longbench100.analysis.dolce.pipeline import Probe, prediction_outcomes, run_fit
from longbench100.folders.data_records import DataRecord

PAPER_SIZES = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500)  # the paper's grid; sizes >= L become L
STARTS_PER_SIZE = 10  # windows probed per partial size (evenly spaced starts)
IDK_REPLY = "The text shown does not contain enough information."

# The two Category V problems of Appendix J:
# (task that scores it, question, gold answer, a wrong reply, L)
QUALITY = ("passage_count", "How many ...?", "3", "7", 408)
LONGFQA = ("single_doc_qa", "Does JLL ...?", "Yes, it does.", "No.", 162)

# P(x = wrong) at a partial window of size C (0 <= C < L); the rest is "I don't know"
WRONG_SHARES: dict[str, Callable[[int], float]] = {
    "all idk": lambda size: 0.0,
    "wrong rises with C": lambda size: min(0.8, size / 250),
    "constant half": lambda size: 0.5,
    "closed book guesses": lambda size: 1.0 if size == 0 else 0.2,
}


def _record(task: str, probe_id: str, question: str, answer: str) -> DataRecord:
    return DataRecord(
        id=probe_id,
        task=task,
        label="paper",
        length=0,
        row=0,
        answers=(answer,),
        question=question,
        closed_book_prompt=None,
    )


def _sizes(length: int) -> list[int]:
    return sorted({min(size, length) for size in PAPER_SIZES} | {length})


def _starts(length: int, size: int) -> list[int]:
    """Evenly spaced window starts for one size (one window for C = 0 and C = L)."""
    if size in (0, length):
        return [0]
    count = min(STARTS_PER_SIZE, length - size + 1)
    return sorted({round(index * (length - size) / max(count - 1, 1)) for index in range(count)})


def _probes(
    spec: tuple, name: str, reply: Callable[[int, int, int], str]
) -> list[tuple[Probe, str]]:
    """Every probe of one problem with the reply ``reply(size, start, index among its size)``."""
    task, question, answer, _, length = spec
    items = []
    for size in _sizes(length):
        for index, start in enumerate(_starts(length, size)):
            record = _record(task, f"{name}~C{size}~at{start}", question, answer)
            probe = Probe(record, name, "sentence", length, size, start, None)
            items.append((probe, reply(size, start, index)))
    return items


def appendix_problem(
    spec: tuple, wrong_share: Callable[[int], float], name: str
) -> list[tuple[Probe, str]]:
    """One never-solved problem: at each partial window size a ``wrong_share`` of the windows get
    the wrong reply and the rest decline; the reply to the whole context (C = L) declines."""
    length, wrong = spec[4], spec[3]

    def reply(size: int, start: int, index: int) -> str:
        wrong_count = 0 if size == length else round(wrong_share(size) * len(_starts(length, size)))
        return wrong if index < wrong_count else IDK_REPLY

    return _probes(spec, name, reply)


def retrieval_problem(spec: tuple, gold: int, name: str) -> list[tuple[Probe, str]]:
    """A solved problem of the same task: answered right iff the window holds unit ``gold``."""
    answer = spec[2]
    return _probes(
        spec, name, lambda size, start, _: answer if start <= gold < start + size else IDK_REPLY
    )


def fit_problems(
    items: list[tuple[Probe, str]], tmp_path: Path, never_solved: str | None = None
) -> dict:
    """Write the replies as a predictions file, score them as `dolce fit --predictions` does and fit
    in paper mode."""
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": probe.record.id, "prediction": reply}) + "\n"
            for probe, reply in items
        )
    )
    probes = [probe for probe, _ in items]
    outcomes = prediction_outcomes(probes, predictions)
    return run_fit(probes, outcomes, {}, {"oracle": False}, "paper", never_solved)


def _fitted(row: dict) -> tuple:
    return row["category"], row["lambda"], row["k"], row["solved"]


@pytest.mark.parametrize("split", WRONG_SHARES)
@pytest.mark.parametrize("spec", [QUALITY, LONGFQA], ids=["quality", "longfqa"])
@pytest.mark.parametrize("company", [0, 6], ids=["alone", "among-solved"])
def test_appendix_j_category_v_problems_read_v_in_paper_mode(
    spec: tuple, split: str, company: int, tmp_path: Path
):
    items = appendix_problem(spec, WRONG_SHARES[split], "appendix-j")
    for index in range(company):
        items += retrieval_problem(spec, gold=(index * 67 + 11) % spec[4], name=f"solved-{index}")
    fit = fit_problems(items, tmp_path)
    assert fit["estimator"]["name"] == "paper" and fit["never_solved"] == "flag"
    row = next(row for row in fit["problems"] if row["id"] == "appendix-j")
    assert all(cell["correct"] == 0 for cell in row["outcomes"].values())
    whole = {"n": 1, "correct": 0, "wrong": 0, "idk": 1, "mean": 0.0}
    assert row["outcomes"][str(spec[4])] == whole
    assert _fitted(row) == ("V", spec[4], 1, False)
    summary = fit["tasks"][spec[0]]
    assert summary["never_solved"] == {"I": 0, "II": 0, "III": 0, "IV": 0, "V": 1}
    assert summary["counts"]["V"] >= 1 and summary["problems"] == company + 1
    others = [other for other in fit["problems"] if other is not row]
    assert all(other["solved"] and other["category"] != "V" for other in others)


@pytest.mark.parametrize("spec", [QUALITY, LONGFQA], ids=["quality", "longfqa"])
def test_appendix_j_problems_read_ns_when_asked(spec: tuple, tmp_path: Path):
    """``--never-solved ns`` (ours) turns the same problems into NS, with the same lambda and k."""
    items = appendix_problem(spec, WRONG_SHARES["wrong rises with C"], "appendix-j")
    fit = fit_problems(items, tmp_path, "ns")
    (row,) = fit["problems"]
    assert _fitted(row) == ("NS", spec[4], 1, False)
    assert fit["tasks"][spec[0]]["never_solved"]["NS"] == 1 and fit["categories"][-1] == "NS"


@pytest.mark.parametrize("spec", [QUALITY, LONGFQA], ids=["quality", "longfqa"])
def test_a_never_solved_problem_keeps_the_category_its_fit_gives(spec: tuple, tmp_path: Path):
    """Wrong guesses on short windows, mostly "I don't know" on the largest: Algorithm 1 reads
    lambda = the largest partial window (IV), and paper mode reports IV, flagged."""
    items = appendix_problem(spec, lambda size: max(0.1, 0.7 - size / 300), "declines")
    fit = fit_problems(items, tmp_path)
    (row,) = fit["problems"]
    largest_partial = max(size for size in _sizes(spec[4]) if size < spec[4])
    assert _fitted(row) == ("IV", largest_partial, 1, False)
    assert fit["tasks"][spec[0]]["never_solved"]["IV"] == 1


@pytest.mark.parametrize("never_solved", ["flag", "ns"])
def test_the_chart_hatches_the_never_solved_part_of_its_category(never_solved: str, tmp_path: Path):
    """One never-solved problem among three solved ones: a quarter of the bar is hatched, at the
    far right; under flag in V's colour (the category the fit gives), under ns in NS's."""
    items = appendix_problem(QUALITY, WRONG_SHARES["all idk"], "appendix-j")
    for index in range(3):
        items += retrieval_problem(QUALITY, gold=40 + 150 * index, name=f"solved-{index}")
    fit = fit_problems(items, tmp_path, never_solved)
    figure = category_figure(fit)
    drawn = [patch for patch in figure.axes[0].patches if abs(patch.get_width()) > 0]
    (hatched,) = [patch for patch in drawn if patch.get_hatch()]
    assert hatched.get_width() == pytest.approx(25) and hatched.get_x() + 25 == pytest.approx(100)
    (legend,) = figure.legends
    colours = {
        text.get_text(): handle.get_facecolor()
        for text, handle in zip(legend.get_texts(), legend.legend_handles)
    }
    expected = "V holistic" if never_solved == "flag" else "NS not solved"
    assert hatched.get_facecolor() == colours[expected]
    assert ("NS not solved" in colours) == (never_solved == "ns")
    write_dolce_report(fit, tmp_path)
    table = (tmp_path / "dolce.md").read_text()
    assert ("| 25% (25% never solved) |" in table) == (never_solved == "flag")


def test_a_fit_written_before_never_solved_existed_still_draws(tmp_path: Path):
    """Older dolce.json files have no ``never_solved`` and no ``categories``: their NS is their
    never-solved part, drawn hatched, and the table keeps the NS column."""
    items = appendix_problem(LONGFQA, WRONG_SHARES["all idk"], "appendix-j")
    items += retrieval_problem(LONGFQA, gold=80, name="solved")
    fit = fit_problems(items, tmp_path, "ns")
    for key in ("never_solved", "categories"):
        del fit[key]
    for summary in fit["tasks"].values():
        del summary["never_solved"]
    drawn = [patch for patch in category_figure(fit).axes[0].patches if abs(patch.get_width()) > 0]
    (hatched,) = [patch for patch in drawn if patch.get_hatch()]
    assert hatched.get_width() == pytest.approx(50)
    write_dolce_report(fit, tmp_path)
    assert "| NS not solved |" in (tmp_path / "dolce.md").read_text()
