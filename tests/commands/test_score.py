"""``longbench100 score`` end to end with classic metrics (no judge, no network)."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from tests.scoring.test_predictions import GOLD, RIGHT, write_dataset, write_predictions

TASKS = ("kv_retrieval", "passage_count", "single_doc_qa", "single_doc_sum")


def score(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["score", "--n-boot", "20", *args])
    return result.exit_code, result.output


@pytest.fixture
def data(tmp_path):
    return write_dataset(tmp_path / "data", tasks=TASKS, labels=("2k", "4k", "6k", "8k"), rows=2)


def answers(record: dict) -> str:
    """Right answers, except passage_count at 8k and a partly right QA answer at 8k."""
    if record["label"] == "8k" and record["task"] == "passage_count":
        return "After checking, 30 paragraphs with 11 unique ones."
    if record["label"] == "8k" and record["task"] == "single_doc_qa":
        return "It started on April 25, 2018."  # 6 tokens vs 3: P 3/6, R 1 -> F1 2/3
    return RIGHT[record["task"]]


def test_score_writes_results_with_every_documented_key(tmp_path, data):
    predictions = write_predictions(tmp_path / "my-model", data, answer=answers)
    out = tmp_path / "results.json"
    code, output = score("--data", str(data), "--predictions", str(predictions), "--out", str(out))
    assert code == 0, output
    results = json.loads(out.read_text())
    assert list(results) == [
        "schema",
        "model",
        "created",
        "longbench100_version",
        "data",
        "predictions",
        "metric_mode",
        "metrics",
        "judge",
        "settings",
        "missing_predictions",
        "missing_cells",
        "rows",
        "epochs",
        "skipped_tasks",
        "failed_predictions",
        "ungraded",
        "ungraded_by_reason",
        "limit",
        "qa_filter",
        "base_labels",
        "samples",
        "aggregates",
    ]
    assert results["model"] == "my-model"
    assert (
        results["data"]["manifest_sha256"]
        == hashlib.sha256((data / "manifest.json").read_bytes()).hexdigest()
    )
    assert results["metrics"] == {
        "kv_retrieval": "accuracy",
        "passage_count": "accuracy",
        "single_doc_qa": "qa_f1",
        "single_doc_sum": "rouge_l",
    }
    assert results["judge"] is None and results["base_labels"] == ["2k", "4k", "6k"]
    samples = {sample["id"]: sample for sample in results["samples"]}
    assert len(samples) == 4 * 4 * 2
    assert samples["passage_count-8k-0000"]["score"] == 0.0
    assert samples["single_doc_qa-8k-0001"]["score"] == pytest.approx(2 / 3)
    assert samples["single_doc_qa-8k-0001"]["closed_book_score"] == 0.0  # "I do not know."
    assert samples["single_doc_sum-2k-0000"] == {
        "id": "single_doc_sum-2k-0000",
        "task": "single_doc_sum",
        "label": "2k",
        "length": 2048,
        "row": 0,
        "score": pytest.approx(1.0),
        "filtered": False,
        "closed_book_score": None,
        "metric": "rouge_l",
        "prediction": RIGHT["single_doc_sum"],
        "answers": GOLD["single_doc_sum"],
        "depth": 0.5,
        "source": None,
        "parts": None,
        "judge_reply": None,
        "ungraded_reason": None,
    }
    tasks = results["aggregates"]["tasks"]
    assert tasks["passage_count"]["lengths"]["8k"]["score"] == 0.0
    assert tasks["passage_count"]["base_ability"] == 100.0
    assert tasks["single_doc_qa"]["lengths"]["8k"]["score"] == pytest.approx(200 / 3)
    assert "passage_count" in output and "overall" in output and f"wrote {out}" in output


def test_model_name_option_and_missing_manifest(tmp_path, data):
    (data / "manifest.json").unlink()
    predictions = write_predictions(tmp_path / "p", data)
    out = tmp_path / "r.json"
    code, output = score(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--model-name",
        "M",
    )
    assert code == 0, output
    results = json.loads(out.read_text())
    assert results["model"] == "M" and results["data"]["manifest_sha256"] is None
    assert "no manifest.json" in output


def test_qa_filter_threshold_and_off(tmp_path, data):
    # closed-book answer "April 2018": 2 of 2 tokens shared with 3 -> P 1, R 2/3 -> F1 0.8
    predictions = write_predictions(tmp_path / "p", data, closed_book=lambda record: "April 2018")
    out = tmp_path / "r.json"
    for threshold, dropped in (("0.8", 8), ("0.81", 0), ("off", 0)):
        code, output = score(
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--qa-filter",
            threshold,
        )
        assert code == 0, output
        results = json.loads(out.read_text())
        qa = [s for s in results["samples"] if s["task"] == "single_doc_qa"]
        assert sum(s["filtered"] for s in qa) == dropped
        if threshold == "off":
            assert results["qa_filter"] == {"threshold": None, "tasks": {}}
            assert all(s["closed_book_score"] is None for s in qa) and "QA filter: off" in output
        else:
            assert all(s["closed_book_score"] == pytest.approx(0.8) for s in qa)
            assert results["qa_filter"]["tasks"]["single_doc_qa"]["2k"]["dropped"] == dropped // 4


def test_missing_closed_book_answers_are_counted_not_filtered(tmp_path, data):
    predictions = write_predictions(tmp_path / "p", data, closed_book=lambda record: None)
    out = tmp_path / "r.json"
    code, output = score("--data", str(data), "--predictions", str(predictions), "--out", str(out))
    assert code == 0, output
    cell = json.loads(out.read_text())["qa_filter"]["tasks"]["single_doc_qa"]["6k"]
    assert cell == {"n": 2, "dropped": 0, "no_closed_book": 2, "closed_book_ungraded": 0}
    assert "without a closed-book answer" in output


def test_missing_predictions_error_unless_allowed(tmp_path, data):
    predictions = write_predictions(tmp_path / "p", data)
    (predictions / "kv_retrieval" / "8k.jsonl").unlink()
    path = predictions / "passage_count" / "4k.jsonl"
    path.write_text(path.read_text().splitlines()[1] + "\n")
    out = tmp_path / "r.json"
    code, output = score("--data", str(data), "--predictions", str(predictions), "--out", str(out))
    assert code == 2 and "are incomplete: 3 of 32 records have no prediction, in 2 task" in output
    assert "(kv_retrieval 8k 0 of 2 rows, passage_count 4k 1 of 2 rows)" in output
    assert "choose what to score with --tasks/--lengths" in output
    errors = [line for line in output.splitlines() if not line.startswith("warning:")]
    assert "Traceback" not in output and not out.exists() and len(errors) == 1


def missing_some(tmp_path, data):
    """Predictions where kv_retrieval has none at 8k and passage_count lacks row 0 at 4k."""
    predictions = write_predictions(tmp_path / "p", data)
    (predictions / "kv_retrieval" / "8k.jsonl").unlink()  # the whole cell: left out (null)
    path = predictions / "passage_count" / "4k.jsonl"
    path.write_text(path.read_text().splitlines()[1] + "\n")  # row 0 missing: never scored
    return predictions


def test_allow_missing_scores_only_rows_predicted_at_every_length(tmp_path, data):
    predictions = missing_some(tmp_path, data)
    out = tmp_path / "r.json"
    code, output = score(
        "--data", str(data), "--predictions", str(predictions), "--out", str(out), "--allow-missing"
    )
    assert code == 0, output
    assert "3 data records had no prediction: not scored" in output
    assert "kv_retrieval 8k: no predictions at all; left out (null), not scored 0" in output
    assert (
        "passage_count: rows scored 2k 1 of 2, 4k 1 of 2, 6k 1 of 2, 8k 1 of 2 "
        "(--allow-missing, paired"
    ) in output
    results = json.loads(out.read_text())
    assert results["missing_predictions"] == 3
    assert results["missing_cells"] == {"kv_retrieval": ["8k"]}
    assert results["rows"]["missing_rows"] == "paired"
    incomplete = results["rows"]["incomplete"]["passage_count"]
    assert incomplete["4k"] == {"rows": 2, "predicted": 1, "scored": 1}
    assert incomplete["2k"] == {"rows": 2, "predicted": 2, "scored": 1}
    assert not [s for s in results["samples"] if s["id"].startswith("kv_retrieval-8k")]
    passage_rows = {s["row"] for s in results["samples"] if s["task"] == "passage_count"}
    assert passage_rows == {1}  # row 0 at no length
    assert all(s["score"] is not None and s["prediction"] is not None for s in results["samples"])
    kv = results["aggregates"]["tasks"]["kv_retrieval"]
    assert (
        kv["lengths"]["8k"]["score"] is None and kv["lengths"]["8k"]["lc"] is None
    )  # was S 0.0, LC -100%
    assert kv["avg_lc"] is None
    passage = results["aggregates"]["tasks"]["passage_count"]["lengths"]
    assert passage["4k"]["score"] == 100.0 and {cell["n"] for cell in passage.values()} == {1}


def test_allow_missing_per_length_scores_each_length_on_its_own_rows(tmp_path, data):
    predictions = missing_some(tmp_path, data)
    out = tmp_path / "r.json"
    code, output = score(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--allow-missing",
        "--missing-rows",
        "per-length",
    )
    assert code == 0, output
    results = json.loads(out.read_text())
    passage = results["aggregates"]["tasks"]["passage_count"]["lengths"]
    rows = {label: cell["n"] for label, cell in passage.items()}
    assert rows == {"2k": 2, "4k": 1, "6k": 2, "8k": 2}
    assert results["rows"]["incomplete"] == {
        "kv_retrieval": {"8k": {"rows": 2, "predicted": 0, "scored": 0}},
        "passage_count": {"4k": {"rows": 2, "predicted": 1, "scored": 1}},
    }
    assert "passage_count: rows scored 4k 1 of 2 (--allow-missing, per-length" in output
    result = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "Scored on fewer rows than the data has" in report
    assert "- p: passage_count: rows scored 4k 1 of 2 (per-length)" in report


def test_unknown_and_duplicate_ids_are_errors(tmp_path, data):
    predictions = write_predictions(tmp_path / "p", data)
    path = predictions / "kv_retrieval" / "2k.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(
        "\n".join(lines + [lines[0], json.dumps({"id": "nope-1", "prediction": "x"})]) + "\n"
    )
    code, output = score(
        "--data", str(data), "--predictions", str(predictions), "--out", str(tmp_path / "r.json")
    )
    assert code == 2
    assert "1 unknown (e.g. nope-1" in output and "1 duplicate (e.g. kv_retrieval-2k-0000" in output


def test_failed_requests_are_refused_naming_their_cells_never_scored_0(tmp_path, data):
    predictions = write_predictions(
        tmp_path / "p",
        data,
        answer=lambda record: (
            None
            if (record["task"], record["label"], record["row"]) == ("kv_retrieval", "2k", 0)
            else RIGHT[record["task"]]
        ),
    )
    out = tmp_path / "r.json"
    code, output = score("--data", str(data), "--predictions", str(predictions), "--out", str(out))
    assert code == 2 and not out.exists()
    assert "1 of 32 requests failed (prediction null), in 1 task and length cells " in output
    assert "(kv_retrieval 2k 1 of 2 rows failed); rerun predict with --retry-failed" in output
    errors = [line for line in output.splitlines() if not line.startswith("warning:")]
    assert "Traceback" not in output and len(errors) == 1


def test_allow_missing_leaves_failed_requests_out_like_missing_rows(tmp_path, data):
    predictions = write_predictions(
        tmp_path / "p",
        data,
        answer=lambda record: (
            None
            if (record["task"], record["label"], record["row"]) == ("kv_retrieval", "2k", 0)
            else RIGHT[record["task"]]
        ),
    )
    out = tmp_path / "r.json"
    code, output = score(
        "--data", str(data), "--predictions", str(predictions), "--out", str(out), "--allow-missing"
    )
    assert code == 0, output
    results = json.loads(out.read_text())
    assert results["failed_predictions"] == 1 and results["missing_predictions"] == 0
    kv = [s for s in results["samples"] if s["task"] == "kv_retrieval"]
    assert {s["row"] for s in kv} == {1} and {s["score"] for s in kv} == {1.0}  # paired: row 0 out
    lengths = results["aggregates"]["tasks"]["kv_retrieval"]["lengths"]
    assert {label: cell["score"] for label, cell in lengths.items()} == dict.fromkeys(
        ("2k", "4k", "6k", "8k"), 100.0
    )  # never 75 or 50 from a zero
    assert results["rows"]["incomplete"]["kv_retrieval"]["2k"] == {
        "rows": 2,
        "predicted": 1,
        "scored": 1,
    }
    assert "1 requests had failed (prediction null): not scored" in output


def test_an_empty_answer_the_model_gave_is_still_graded(tmp_path, data):
    predictions = write_predictions(
        tmp_path / "p",
        data,
        answer=lambda record: "" if record["task"] == "kv_retrieval" else RIGHT[record["task"]],
    )
    out = tmp_path / "r.json"
    code, output = score("--data", str(data), "--predictions", str(predictions), "--out", str(out))
    assert code == 0, output
    results = json.loads(out.read_text())
    assert results["failed_predictions"] == 0
    assert {s["score"] for s in results["samples"] if s["task"] == "kv_retrieval"} == {0.0}


def test_only_failed_requests_under_allow_missing_is_one_line(tmp_path, data):
    predictions = write_predictions(tmp_path / "p", data, answer=lambda record: None)
    code, output = score(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(tmp_path / "r.json"),
        "--allow-missing",
    )
    assert code == 2
    assert output.strip().endswith("no data record has an answer (32 requests failed)")


def test_single_predictions_file_and_custom_base_lengths(tmp_path, data):
    folder = write_predictions(tmp_path / "p", data)
    single = tmp_path / "preds.jsonl"
    single.write_text("".join(path.read_text() for path in sorted(folder.glob("*/*.jsonl"))))
    out = tmp_path / "r.json"
    code, output = score(
        "--data", str(data), "--predictions", str(single), "--out", str(out), "--base-lengths", "2k"
    )
    assert code == 0, output
    results = json.loads(out.read_text())
    assert results["model"] == "preds" and results["base_labels"] == ["2k"]
    assert results["aggregates"]["long_labels"] == ["4k", "6k", "8k"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--qa-filter", "high"], "--qa-filter high: give a number from 0 to 1, or off"),
        (["--qa-filter", "1.5"], "--qa-filter 1.5"),
        (["--metric", "judge"], "--metric judge needs --judge-model"),
        (["--base-lengths", "2q"], "bad length label"),
        (["--seed", "-1"], "Invalid value for '--seed'"),  # was a numpy traceback
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, data, extra, message):
    predictions = write_predictions(tmp_path / "p", data)
    code, output = score(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(tmp_path / "r.json"),
        *extra,
    )
    assert code == 2 and message in output and "Traceback" not in output


def test_dry_run_without_judge_sends_and_writes_nothing(tmp_path, data):
    predictions = write_predictions(tmp_path / "p", data)
    out = tmp_path / "r.json"
    code, output = score(
        "--data", str(data), "--predictions", str(predictions), "--out", str(out), "--dry-run"
    )
    assert code == 0 and "no judge calls needed" in output and not out.exists()


def test_tasks_and_lengths_choose_what_is_scored_and_the_rest_is_not_missing(tmp_path, data):
    predictions = write_predictions(tmp_path / "p", data)
    for path in predictions.glob("*/*.jsonl"):
        if path.parent.name != "kv_retrieval" or path.stem == "8k":
            path.unlink()
    base = ["--data", str(data), "--predictions", str(predictions)]
    code, output = score(*base, "--out", str(tmp_path / "all.json"))
    assert code == 2 and "are incomplete" in output
    out = tmp_path / "r.json"
    code, output = score(
        *base, "--out", str(out), "--tasks", "kv_retrieval", "--lengths", "6k,2k,4k"
    )
    assert code == 0, output
    results = json.loads(out.read_text())
    assert {(s["task"], s["label"]) for s in results["samples"]} == {
        ("kv_retrieval", label) for label in ("2k", "4k", "6k")
    }
    assert results["missing_predictions"] == 0 and results["rows"]["incomplete"] == {}
    assert "not scored" not in output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--lengths", "4k,8k"],
            "--lengths 4k,8k leaves out the base lengths 2k, 6k that the "
            "Base Ability averages: add them, or choose others with "
            "--base-lengths",
        ),
        (
            ["--lengths", "2k,4k,6k,16k"],
            "--lengths 2k,4k,6k,16k: the data has no 16k (it has 2k, 4k, 6k, 8k)",
        ),
        (
            ["--tasks", "kv_retrieval,niah_single_1"],
            "--tasks kv_retrieval,niah_single_1: the data has no niah_single_1",
        ),
        (["--tasks", "nope"], "unknown task nope"),
        (["--lengths", ""], "--lengths is empty"),
        (["--base-lengths", ""], "--base-lengths is empty"),
        (["--base-lengths", " , "], "--base-lengths is empty"),
        (["--missing-rows", "per-length"], "--missing-rows per-length needs --allow-missing"),
        (["--dry-run", "--price-in", "nan", "--price-out", "1"], "must be finite numbers"),
        (["--dry-run", "--price-in", "1", "--price-out", "inf"], "must be finite numbers"),
        (["--epoch", "2"], "--epoch 2: the predictions hold epochs none"),
    ],
)
def test_bad_score_choices_are_one_line_errors(tmp_path, data, extra, message):
    predictions = write_predictions(tmp_path / "p", data)
    out = tmp_path / "r.json"
    code, output = score(
        "--data", str(data), "--predictions", str(predictions), "--out", str(out), *extra
    )
    assert code == 2 and message in output, output
    assert "Traceback" not in output and not out.exists()


def test_epoch_1_of_single_answer_predictions_is_their_one_answer(tmp_path, data):
    predictions = write_predictions(tmp_path / "p", data)
    out = tmp_path / "r.json"
    code, output = score(
        "--data", str(data), "--predictions", str(predictions), "--out", str(out), "--epoch", "1"
    )
    assert code == 0, output
    assert len(json.loads(out.read_text())["samples"]) == 32


def test_a_task_without_scored_rows_makes_the_overall_null_and_report_refuses_mixed_task_sets(
    tmp_path, data
):
    predictions = write_predictions(tmp_path / "p", data)
    for path in predictions.glob("*/*.jsonl"):
        if path.parent.name != "kv_retrieval":
            path.unlink()
    base = ["--data", str(data), "--predictions", str(predictions)]
    partial = tmp_path / "partial.json"
    code, output = score(*base, "--out", str(partial), "--allow-missing")
    assert code == 0, output
    overall = json.loads(partial.read_text())["aggregates"]["overall"]
    assert overall["base_ability"] is None and overall["avg_lc"] is None
    # not 100 from kv_retrieval alone
    assert {cell["score"] for cell in overall["lengths"].values()} == {None}
    assert overall["excluded_tasks"]["passage_count"].startswith("no scored rows")
    warning = "warning: overall: every overall figure is null: passage_count, single_doc_qa, "
    assert warning in output
    result = CliRunner().invoke(main, ["report", str(partial), "--out", str(tmp_path / "p-rep")])
    assert result.exit_code == 0, result.output
    chosen = tmp_path / "kv.json"
    code, output = score(*base, "--out", str(chosen), "--tasks", "kv_retrieval")
    assert code == 0, output
    overall = json.loads(chosen.read_text())["aggregates"]["overall"]
    assert overall["tasks"] == ["kv_retrieval"] and overall["base_ability"] == 100.0
    full = tmp_path / "full.json"
    assert (
        score(
            *base[:2],
            "--predictions",
            str(write_predictions(tmp_path / "q", data)),
            "--out",
            str(full),
        )[0]
        == 0
    )
    result = CliRunner().invoke(
        main, ["report", str(chosen), str(full), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert "different settings: tasks is [kv_retrieval] in" in result.output
    result = CliRunner().invoke(
        main, ["report", str(chosen), str(full), "--allow-mixed", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
