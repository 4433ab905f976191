"""``longbench100 filter``: a dataset-level QA filter that writes a new data folder."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.scoring.qa_filter.filtered_folder import _updated_files
from tests.judge.test_grader import good_judge
from tests.scoring.test_predictions import write_dataset, write_predictions
from tests.support.openai_stub import OpenAIStub

TASKS = ("kv_retrieval", "single_doc_qa", "multi_doc_qa", "single_doc_sum")
LABELS = ("2k", "8k")


def run_filter(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["filter", *args])
    return result.exit_code, result.output


@pytest.fixture
def setup(tmp_path):
    """Data with 3 rows per file; model A knows single_doc_qa row 0 (at 8k only), model B multi_doc_qa row 2."""
    data = write_dataset(tmp_path / "data", tasks=TASKS, labels=LABELS, rows=3)
    (data / "NOTES.txt").write_text("kept as is\n")
    model_a = write_predictions(
        tmp_path / "model-a",
        data,
        closed_book=lambda r: (
            "April 25, 2018"
            if (r["task"], r["row"], r["label"]) == ("single_doc_qa", 0, "8k")
            else "no idea"
        ),
    )
    model_b = write_predictions(
        tmp_path / "model-b",
        data,
        closed_book=lambda r: (
            "Paris" if (r["task"], r["row"]) == ("multi_doc_qa", 2) else "no idea"
        ),
    )
    return tmp_path, data, model_a, model_b


def test_filter_drops_flagged_questions_at_every_length(setup):
    tmp_path, data, model_a, model_b = setup
    out = tmp_path / "filtered"
    code, output = run_filter(
        "--data", str(data), "--predictions", str(model_a), str(model_b), "--out", str(out)
    )
    assert code == 0, output
    ids = {
        task: [
            json.loads(line)["id"]
            for label in LABELS
            for line in (out / task / f"{label}.jsonl").read_text().splitlines()
        ]
        for task in TASKS
    }
    assert ids["single_doc_qa"] == [
        "single_doc_qa-2k-0001",
        "single_doc_qa-2k-0002",
        "single_doc_qa-8k-0001",
        "single_doc_qa-8k-0002",
    ]
    assert ids["multi_doc_qa"] == [
        "multi_doc_qa-2k-0000",
        "multi_doc_qa-2k-0001",
        "multi_doc_qa-8k-0000",
        "multi_doc_qa-8k-0001",
    ]
    for path in ["kv_retrieval/2k.jsonl", "single_doc_sum/8k.jsonl", "NOTES.txt"]:
        assert (out / path).read_bytes() == (data / path).read_bytes()
    kept_line = (data / "single_doc_qa" / "8k.jsonl").read_text().splitlines()[1]
    assert (out / "single_doc_qa" / "8k.jsonl").read_text().splitlines()[0] == kept_line
    assert "model-a: flagged 1 QA records" in output and "model-b: flagged 2 QA records" in output
    assert "single_doc_qa: dropped 2k 1/3, 8k 1/3" in output


def test_filter_manifest_records_files_models_and_original(setup):
    tmp_path, data, model_a, model_b = setup
    original_bytes = (data / "manifest.json").read_bytes()
    out = tmp_path / "filtered"
    code, output = run_filter(
        "--data",
        str(data),
        "--predictions",
        str(model_a),
        "--predictions",
        str(model_b),
        "--out",
        str(out),
        "--qa-filter",
        "0.9",
    )
    assert code == 0, output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 1  # the original's keys stay
    assert manifest["original_manifest"] == {
        "sha256": hashlib.sha256(original_bytes).hexdigest(),
        "manifest": json.loads(original_bytes),
    }
    assert set(manifest["files"]) == {f"{task}/{label}.jsonl" for task in TASKS for label in LABELS}
    for path, entry in manifest["files"].items():
        content = (out / path).read_bytes()
        assert entry == {
            "sha256": hashlib.sha256(content).hexdigest(),
            "rows": len(content.splitlines()),
        }
    assert manifest["files"]["single_doc_qa/2k.jsonl"]["rows"] == 2
    record = manifest["qa_filter"]
    assert record["threshold"] == 0.9 and record["metrics"] == {
        "single_doc_qa": "qa_f1",
        "multi_doc_qa": "qa_f1",
    }
    assert [(m["name"], m["flagged"]) for m in record["models"]] == [("model-a", 1), ("model-b", 2)]
    assert record["dropped_ids"] == {
        "single_doc_qa-2k-0000": ["model-a"],
        "single_doc_qa-8k-0000": ["model-a"],
        "multi_doc_qa-2k-0002": ["model-b"],
        "multi_doc_qa-8k-0002": ["model-b"],
    }
    assert record["counts"]["multi_doc_qa"] == {
        "2k": {"n": 3, "dropped": 1},
        "8k": {"n": 3, "dropped": 1},
    }
    assert record["source"]["manifest_sha256"] == hashlib.sha256(original_bytes).hexdigest()


def test_original_manifest_is_kept_verbatim_when_row_counts_change(setup):
    tmp_path, data, model_a, _ = setup
    facts = {"rows": 3, "eligible_items": 3, "paired_rows": 3, "reused_rows": 0, "tokens": 123}
    generator_manifest = {
        "seed": 1,
        "tasks": {
            task: {
                "paired_rows_all_lengths": 3,
                "paired_over_lengths": list(LABELS),
                "lengths": {label: dict(facts) for label in LABELS},
            }
            for task in TASKS
        },
        "files": json.loads((data / "manifest.json").read_text())["files"],
    }
    (data / "manifest.json").write_text(json.dumps(generator_manifest, indent=2), encoding="utf-8")
    original_bytes = (data / "manifest.json").read_bytes()
    out = tmp_path / "filtered"
    code, output = run_filter("--data", str(data), "--predictions", str(model_a), "--out", str(out))
    assert code == 0, output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tasks"]["single_doc_qa"]["lengths"]["8k"] == {**facts, "rows": 2}
    assert manifest["tasks"]["kv_retrieval"]["lengths"]["8k"] == facts
    assert manifest["original_manifest"] == {
        "sha256": hashlib.sha256(original_bytes).hexdigest(),
        "manifest": generator_manifest,
    }
    assert (data / "manifest.json").read_bytes() == original_bytes


def test_filtered_folder_scores_cleanly(setup):
    tmp_path, data, model_a, model_b = setup
    out = tmp_path / "filtered"
    assert run_filter("--data", str(data), "--predictions", str(model_a), "--out", str(out))[0] == 0
    predictions = write_predictions(tmp_path / "model-c", out)
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--data",
            str(out),
            "--predictions",
            str(predictions),
            "--out",
            str(tmp_path / "r.json"),
            "--n-boot",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "r.json").read_text())
    assert (
        results["data"]["manifest_sha256"]
        == hashlib.sha256((out / "manifest.json").read_bytes()).hexdigest()
    )
    assert len(results["samples"]) == 4 * 2 * 3 - 2


def test_filter_needs_only_qa_predictions_and_checks_them(setup):
    tmp_path, data, model_a, _ = setup
    for task in ("kv_retrieval", "single_doc_sum"):
        for path in (model_a / task).glob("*.jsonl"):
            path.unlink()
    (model_a / "multi_doc_qa" / "8k.jsonl").unlink()
    out = tmp_path / "filtered"
    code, output = run_filter("--data", str(data), "--predictions", str(model_a), "--out", str(out))
    assert code == 2 and "3 missing (e.g. multi_doc_qa-8k-0000" in output and not out.exists()
    code, output = run_filter(
        "--data", str(data), "--predictions", str(model_a), "--out", str(out), "--allow-missing"
    )
    assert code == 0, output
    assert "3 QA records without a closed-book answer" in output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--qa-filter", "off"], "--qa-filter off makes filter a copy"),
        (["--qa-filter", "2"], "--qa-filter 2"),
    ],
)
def test_filter_rejects_bad_thresholds(setup, extra, message):
    tmp_path, data, model_a, _ = setup
    code, output = run_filter(
        "--data", str(data), "--predictions", str(model_a), "--out", str(tmp_path / "o"), *extra
    )
    assert code == 2 and message in output


def test_filter_refuses_a_non_empty_or_nested_out(setup):
    tmp_path, data, model_a, _ = setup
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    refused = ((busy, "non-empty folder"), (data / "sub", "lies inside the input --data"))
    for out, message in refused:
        code, output = run_filter(
            "--data", str(data), "--predictions", str(model_a), "--out", str(out)
        )
        assert code == 2 and message in output


def test_filter_with_the_judge(setup, monkeypatch):
    tmp_path, data, model_a, _ = setup
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    with OpenAIStub(good_judge) as server:
        args = [
            "--data",
            str(data),
            "--predictions",
            str(model_a),
            "--judge-model",
            "j",
            "--judge-base-url",
            server.base_url,
            "--out",
            str(tmp_path / "filtered"),
        ]
        code, output = run_filter(*args, "--dry-run")
        assert code == 0 and "judge calls needed" in output and server.requests == []
        code, output = run_filter(*args)
        assert code == 0, output
    record = json.loads((tmp_path / "filtered" / "manifest.json").read_text())["qa_filter"]
    assert record["metrics"] == {"single_doc_qa": "qa_judge", "multi_doc_qa": "qa_judge"}
    assert record["judge"]["model"] == "j"
    assert sorted(record["dropped_ids"]) == ["single_doc_qa-2k-0000", "single_doc_qa-8k-0000"]


def test_updated_files_keeps_the_manifest_shape():
    entries = {"a/2k.jsonl": {"sha256": "new", "rows": 1}}
    assert _updated_files({"a/2k.jsonl": {"sha256": "old", "rows": 2, "bytes": 9}}, entries) == {
        "a/2k.jsonl": {"sha256": "new", "rows": 1, "bytes": 9}
    }
    assert _updated_files([{"path": "a/2k.jsonl", "sha256": "old", "tokens": 5}], entries) == [
        {"path": "a/2k.jsonl", "sha256": "new", "tokens": 5, "rows": 1}
    ]
    assert _updated_files(None, entries) == entries
