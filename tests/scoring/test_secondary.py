"""Secondary metrics (``TaskInfo.also``): graded next to the main metric, stored per sample, averaged per task and
length, printed by ``score``, tabled by ``report`` and listed by ``show``; never part of the main score.

Each test gives a task secondary metrics with monkeypatch, so none depends on which shipped tasks set ``also``.
"""

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.task_info import TASKS
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.report.load import load_result
from longbench100.scoring.samples import ScoredSample
from longbench100.scoring.secondary import secondary_means, secondary_metrics
from tests.scoring.test_predictions import RIGHT, UUID, write_dataset, write_predictions

DATA_TASKS = ("kv_retrieval", "passage_count", "single_doc_qa")
LABELS = ("2k", "4k", "6k", "8k")


def give_secondary(monkeypatch, task: str, *names: str) -> None:
    """Make ``task`` grade ``names`` as secondary metrics for this test only."""
    monkeypatch.setitem(TASKS, task, dataclasses.replace(TASKS[task], also=names))


def answer(record: dict) -> str | None:
    """Right answers, but at 8k kv_retrieval gives a bare UUID and the QA answer is half right;
    kv_retrieval's request for row 1 at 4k failed (null)."""
    if (record["task"], record["label"], record["row"]) == ("kv_retrieval", "4k", 1):
        return None
    if record["label"] == "8k" and record["task"] == "kv_retrieval":
        return UUID
    if record["label"] == "8k" and record["task"] == "single_doc_qa":
        return "It started on April 25, 2018."
    return RIGHT[record["task"]]


def closed_book(record: dict) -> str:
    """Row 1 of the QA task knows the answer closed-book at 2k, so the QA filter drops it there."""
    return (
        RIGHT["single_doc_qa"]
        if record["row"] == 1 and record["label"] == "2k"
        else "I do not know."
    )


def score(
    tmp_path: Path, predictions: Path, data: Path, name: str = "results.json"
) -> tuple[dict, str]:
    """Run ``score`` with classic metrics; return results.json and the terminal output."""
    out = tmp_path / name
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "20",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--allow-missing",
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text()), result.output


@pytest.fixture
def scored(tmp_path, monkeypatch):
    """Results without and with secondary metrics (kv_retrieval: qa_f1; single_doc_qa: substring_match)
    for the same data and predictions; kv_retrieval row 1 at 4k has a failed (null) prediction."""
    data = write_dataset(tmp_path / "data", tasks=DATA_TASKS, labels=LABELS, rows=2)
    predictions = write_predictions(
        tmp_path / "model", data, answer=answer, closed_book=closed_book
    )
    plain, _ = score(tmp_path, predictions, data, "plain.json")
    give_secondary(monkeypatch, "kv_retrieval", "qa_f1")
    give_secondary(monkeypatch, "single_doc_qa", "substring_match", "qa_f1")
    results, output = score(tmp_path, predictions, data)
    return tmp_path, plain, results, output


def test_secondary_scores_are_stored_per_sample_next_to_an_unchanged_main_score(scored):
    _, plain, results, _ = scored
    samples = {sample["id"]: sample for sample in results["samples"]}
    # "The value is <uuid>." against the uuid: 3 tokens after normalisation, 1 shared -> F1 = 2 * (1/3 * 1) / (4/3)
    assert samples["kv_retrieval-2k-0000"]["also"] == {"qa_f1": pytest.approx(0.5)}
    assert samples["kv_retrieval-8k-0000"]["also"] == {"qa_f1": pytest.approx(1.0)}
    # failed: a missing answer, never charged 0 by any metric; row 1 is left out at every length
    assert not [key for key in samples if key.startswith("kv_retrieval") and key.endswith("-0001")]
    # the half-right QA answer contains the gold answer: substring match 1, F1 2/3
    assert samples["single_doc_qa-8k-0000"]["also"] == {
        "substring_match": 1.0,
        "qa_f1": pytest.approx(2 / 3),
    }
    assert "also" not in samples["passage_count-2k-0000"]
    # the main metric and every main figure are exactly those of a run without secondary metrics
    assert [
        {k: v for k, v in sample.items() if k != "also"} for sample in results["samples"]
    ] == plain["samples"]
    assert {k: v for k, v in results["aggregates"].items() if k != "also"} == {
        k: v for k, v in plain["aggregates"].items() if k != "also"
    }
    assert plain["aggregates"]["also"] == {}


def test_secondary_means_per_task_and_length_leave_out_filtered_samples(scored):
    _, _, results, output = scored
    also = results["aggregates"]["also"]
    assert list(also) == ["kv_retrieval", "single_doc_qa"]
    assert also["kv_retrieval"] == {
        "2k": {"qa_f1": pytest.approx(50.0)},
        "4k": {"qa_f1": pytest.approx(50.0)},
        "6k": {"qa_f1": pytest.approx(50.0)},
        "8k": {"qa_f1": pytest.approx(100.0)},
    }
    samples = {sample["id"]: sample for sample in results["samples"]}
    assert samples["single_doc_qa-2k-0001"]["filtered"]
    assert also["single_doc_qa"]["2k"] == {
        "substring_match": 100.0,
        "qa_f1": pytest.approx(100.0),
    }  # row 0 only
    assert also["single_doc_qa"]["8k"] == {
        "substring_match": 100.0,
        "qa_f1": pytest.approx(200 / 3),
    }
    assert (
        "secondary metric (not in LongScore): kv_retrieval qa_f1: 2k 50.0, 4k 50.0, 6k 50.0, 8k 100.0"
        in output
    )
    assert "single_doc_qa substring_match: 2k 100.0" in output


def test_report_tables_secondary_metrics_only_for_tasks_that_have_them(scored):
    tmp_path, _, _, _ = scored
    result = CliRunner().invoke(
        main, ["report", str(tmp_path / "results.json"), "--out", str(tmp_path / "rep")]
    )
    assert result.exit_code == 0, result.output
    report = (tmp_path / "rep" / "report.md").read_text()
    kv = report.split("### kv_retrieval")[1].split("###")[0]
    assert "Secondary metrics of this task" in kv
    assert (
        "| Model | Metric | 2k | 4k | 6k | 8k |" in kv
        and "| model | qa_f1 | 50.0 | 50.0 | 50.0 | 100.0 |" in kv
    )
    assert "Secondary metrics" not in report.split("### passage_count")[1].split("###")[0]
    qa = report.split("### single_doc_qa")[1].split("##")[0]
    assert "| model | substring_match | 100.0 | 100.0 | 100.0 | 100.0 |" in qa
    plain = CliRunner().invoke(
        main, ["report", str(tmp_path / "plain.json"), "--out", str(tmp_path / "rep2")]
    )
    assert plain.exit_code == 0, plain.output
    assert "Secondary metrics" not in (tmp_path / "rep2" / "report.md").read_text()


def test_show_lists_a_samples_secondary_scores(scored):
    tmp_path, _, _, _ = scored
    result = CliRunner().invoke(
        main, ["show", str(tmp_path / "results.json"), "--id", "single_doc_qa-8k-0000"]
    )
    assert result.exit_code == 0, result.output
    assert "also        substring_match 100.0, qa_f1 66.7" in result.output
    plain = CliRunner().invoke(
        main, ["show", str(tmp_path / "plain.json"), "--id", "single_doc_qa-8k-0000"]
    )
    assert "also " not in plain.output


def test_secondary_means_by_hand():
    def sample(
        row: int, also: dict | None, filtered: bool = False, label: str = "8k"
    ) -> ScoredSample:
        return ScoredSample(
            f"t-{label}-{row}", "json_kv", label, 8192, row, 1.0, filtered=filtered, also=also
        )

    samples = [
        sample(0, {"qa_f1": 0.5, "rouge_l": 0.25}),
        sample(1, {"qa_f1": 1.0, "rouge_l": 0.75}),
        sample(2, {"qa_f1": 0.0, "rouge_l": 0.0}, filtered=True),
        sample(3, {"qa_f1": 0.2}, filtered=True, label="16k"),
        ScoredSample("u-8k-0", "niah_single_1", "8k", 8192, 0, 1.0),
    ]
    assert secondary_means(samples) == {
        "json_kv": {"8k": {"qa_f1": 75.0, "rouge_l": 50.0}, "16k": {"qa_f1": None}}
    }
    assert secondary_means(samples[-1:]) == {}


def test_every_task_names_secondary_metrics_that_grade_without_a_judge(monkeypatch):
    for task in TASKS:
        assert all(isinstance(name, str) for name in secondary_metrics(task))
    give_secondary(monkeypatch, "json_kv", "qa_judge")
    with pytest.raises(ValueError, match="task json_kv: secondary metric 'qa_judge' is not one of"):
        secondary_metrics("json_kv")
    give_secondary(monkeypatch, "json_kv", "ndcg_at_10", "bleu")
    with pytest.raises(ValueError, match="'bleu'"):
        secondary_metrics("json_kv")


def test_a_malformed_secondary_block_is_a_one_line_error(tmp_path, scored):
    path = scored[0] / "results.json"
    data = json.loads(path.read_text())
    data["aggregates"]["also"] = {"kv_retrieval": {"8k": {"qa_f1": "high"}}}
    path.write_text(json.dumps(data))
    with pytest.raises(
        UserError, match="aggregates.also must map task -> length -> secondary metric -> mean"
    ):
        load_result(path)
