"""``score`` refuses to mislead: wrong data, failed judges, ungraded samples; --limit, dry-run cost, settings, sample log.

Also the library entry ``run_score(ScoreOptions)`` that the command is a thin shell over.
"""

import json
import os
import re
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.digests import prompt_sha256
from longbench100.folders.data_records import manifest_sha256
from longbench100.judge.setup import PREFLIGHT_PROMPT
from tests.judge.test_grader import good_judge
from tests.scoring.test_predictions import GOLD, RIGHT, seal, write_dataset, write_predictions
from tests.support.openai_stub import OpenAIStub, prompt_text

TASKS = ("kv_retrieval", "single_doc_qa", "single_doc_sum")
LABELS = ("2k", "4k", "6k", "8k")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["score", "--n-boot", "20", *args])
    return result.exit_code, result.output


def fingerprint(predictions: Path, data: Path, manifest: str | None = "from data") -> Path:
    """Add the fingerprints ``predict`` records to every prediction line, from the data records of ``data``."""
    records = {}
    for path in data.glob("*/*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            records[record["id"]] = record
    sha = manifest_sha256(data) if manifest == "from data" else manifest
    for path in predictions.glob("*/*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            record = records[row["id"]]
            row["prompt_sha256"] = prompt_sha256(record["prompt"])
            closed = record["closed_book_prompt"]
            row["closed_book_prompt_sha256"] = None if closed is None else prompt_sha256(closed)
            row["data_manifest_sha256"] = sha
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return predictions


@pytest.fixture
def judged(tmp_path, monkeypatch):
    """A data folder with judge tasks, right answers, an empty judge cache and no API key set."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("LB_TEST_KEY", raising=False)
    data = write_dataset(tmp_path / "data", tasks=TASKS, labels=LABELS, rows=2)
    predictions = fingerprint(write_predictions(tmp_path / "model-a", data), data)
    return tmp_path, data, predictions


def judge_args(
    tmp_path: Path, data: Path, predictions: Path, base_url: str, *extra: str
) -> list[str]:
    return [
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(tmp_path / "results.json"),
        "--judge-model",
        "judge-x",
        "--judge-base-url",
        base_url,
        "--judge-api-key-env",
        "LB_TEST_KEY",
        *extra,
    ]


def graded(server: OpenAIStub) -> list[dict]:
    return [body for body in server.bodies if prompt_text(body) != PREFLIGHT_PROMPT]


# ---- wrong data: predictions made for other prompts -------------------------------------------------


@pytest.fixture(scope="module")
def two_seeds(mirror, tmp_path_factory):
    """kv_retrieval data generated from the synthetic mirror with seed 7 and with seed 42 (same ids)."""
    root = tmp_path_factory.mktemp("seeds")
    folders = {}
    for seed in (7, 42):
        out = root / f"seed{seed}"
        result = CliRunner().invoke(
            main,
            [
                "generate",
                "--sources",
                str(mirror),
                "--tasks",
                "kv_retrieval,single_doc_qa",
                "--lengths",
                "2k,4k",
                "--rows",
                "2",
                "--seed",
                str(seed),
                "--out",
                str(out),
                "--quiet",
                "--workers",
                "1",
            ],
        )
        assert result.exit_code == 0, result.output
        folders[seed] = out
    return folders


def oracle_predictions(data: Path, out: Path) -> Path:
    """Right answers for every record of ``data``."""
    return write_predictions(
        out, data, answer=lambda record: record["answers"][0], closed_book=lambda record: "no idea"
    )


def test_predictions_for_another_seed_are_refused_in_one_line(two_seeds, tmp_path):
    predictions = fingerprint(oracle_predictions(two_seeds[7], tmp_path / "p7"), two_seeds[7])
    out = tmp_path / "r.json"
    code, output = invoke(
        "--data", str(two_seeds[42]), "--predictions", str(predictions), "--out", str(out)
    )
    assert code == 2 and not out.exists(), output
    assert len(output.strip().splitlines()) == 1 and "Traceback" not in output
    assert re.search(
        r"made for other prompts: 8 of 8 samples differ \(e\.g\. kv_retrieval-2k-0000", output
    )
    assert "another seed" in output
    code, output = invoke(
        "--data", str(two_seeds[7]), "--predictions", str(predictions), "--out", str(out)
    )
    assert code == 0, output
    assert "prompt_sha256" not in output and "note:" not in output
    assert {
        s["score"] for s in json.loads(out.read_text())["samples"] if s["task"] == "kv_retrieval"
    } == {1.0}


def test_one_changed_prompt_is_caught(two_seeds, tmp_path):
    predictions = fingerprint(oracle_predictions(two_seeds[7], tmp_path / "p"), two_seeds[7])
    path = predictions / "single_doc_qa" / "4k.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1]["closed_book_prompt_sha256"] = prompt_sha256("some other question?")
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, output = invoke(
        "--data",
        str(two_seeds[7]),
        "--predictions",
        str(predictions),
        "--out",
        str(tmp_path / "r.json"),
    )
    assert code == 2 and "1 of 8 samples differ (e.g. single_doc_qa-4k-0001)" in output


def test_predictions_without_fingerprints_get_one_warning(two_seeds, tmp_path):
    predictions = oracle_predictions(two_seeds[7], tmp_path / "p")
    code, output = invoke(
        "--data",
        str(two_seeds[7]),
        "--predictions",
        str(predictions),
        "--out",
        str(tmp_path / "r.json"),
    )
    assert code == 0, output
    warnings = [
        line
        for line in output.splitlines()
        if line.startswith("warning:") and "prompt_sha256" in line
    ]
    assert warnings == [
        "warning: 8 of 8 predictions carry no prompt_sha256; cannot check they answer this data's prompts"
    ]


def test_another_manifest_with_matching_prompts_is_accepted_with_a_note(two_seeds, tmp_path):
    predictions = fingerprint(
        oracle_predictions(two_seeds[7], tmp_path / "p"), two_seeds[7], manifest="0" * 64
    )
    code, output = invoke(
        "--data",
        str(two_seeds[7]),
        "--predictions",
        str(predictions),
        "--out",
        str(tmp_path / "r.json"),
    )
    assert code == 0, output
    assert (
        "note: predictions were made from another data folder (manifest differs), but every prompt matches"
        in output
    )


def test_settings_record_the_data_tokenizer_and_fingerprint(two_seeds, tmp_path):
    predictions = oracle_predictions(two_seeds[7], tmp_path / "p")
    out = tmp_path / "r.json"
    code, output = invoke(
        "--data",
        str(two_seeds[7]),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--base-lengths",
        "2k",
        "--qa-filter",
        "0.7",
    )
    assert code == 0, output
    settings = json.loads(out.read_text())["settings"]
    manifest = json.loads((two_seeds[7] / "manifest.json").read_text())
    assert settings == {
        "metric_mode": "auto",
        "metrics": {"kv_retrieval": "accuracy", "single_doc_qa": "qa_f1"},
        "rouge_variant": "longbench",
        "judge": None,
        "qa_filter": 0.7,
        "tokenizer": manifest["tokenizer"]["identity"],
        "base_lengths": ["2k"],
        "data_fingerprint": manifest_sha256(two_seeds[7]),
        "suite": "100-longbench",
        "judge_style": None,  # no task used the judge
    }
    assert settings["tokenizer"]


# ---- the judge is checked before any work --------------------------------------------------------


def one_error_line(output: str) -> str:
    lines = [
        line for line in output.strip().splitlines() if "one-token test request to" not in line
    ]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in output, output
    return lines[0]


def test_a_dead_judge_fails_at_once(judged):
    tmp_path, data, predictions = judged
    server = OpenAIStub(good_judge, model="judge-x")
    with server:
        base_url = server.base_url
    code, output = invoke(*judge_args(tmp_path, data, predictions, base_url))
    assert code == 2
    assert f"judge server {base_url}: cannot reach it (ConnectError" in one_error_line(output)
    assert not (tmp_path / "results.json").exists()


def test_a_judge_answering_500_fails_after_one_retry(judged):
    tmp_path, data, predictions = judged
    with OpenAIStub(
        lambda body: (500, {"error": {"message": "boom"}}),
        model="judge-x",
        answer_test_requests=False,
    ) as server:
        code, output = invoke(*judge_args(tmp_path, data, predictions, server.base_url))
        requests = len(server.requests)
    assert (
        code == 2 and requests == 2
    )  # the preflight and its one retry, not minutes of retries per sample
    line = one_error_line(output)
    assert (
        "judge judge-x at" in line
        and "test request failed: HTTP 500: boom (gave up after 2 attempts)" in line
    )


def test_a_judge_answering_garbage_fails(judged):
    tmp_path, data, predictions = judged
    with OpenAIStub(
        lambda body: (200, {"hello": "world"}), model="judge-x", answer_test_requests=False
    ) as server:
        code, output = invoke(*judge_args(tmp_path, data, predictions, server.base_url))
        requests = len(server.requests)
    assert code == 2 and requests == 1
    assert "test request failed: bad response" in one_error_line(output)


def test_a_missing_key_is_named(judged):
    tmp_path, data, predictions = judged

    def needs_key(body: dict):
        return (401, {"error": {"message": "Incorrect API key provided"}})

    with OpenAIStub(needs_key, model="judge-x", answer_test_requests=False) as server:
        code, output = invoke(*judge_args(tmp_path, data, predictions, server.base_url))
    line = one_error_line(output)
    assert (
        code == 2
        and "HTTP 401: Incorrect API key provided" in line
        and "$LB_TEST_KEY is not set" in line
    )


def test_an_unknown_model_is_named_with_what_the_server_lists(judged):
    tmp_path, data, predictions = judged

    def strict(body: dict):
        if body["model"] != "served-model":
            return 404, {"error": {"message": f"model {body['model']} does not exist"}}
        return good_judge(body)

    with OpenAIStub(strict, model="served-model", answer_test_requests=False) as server:
        code, output = invoke(*judge_args(tmp_path, data, predictions, server.base_url))
    line = one_error_line(output)
    assert (
        code == 2
        and "HTTP 404" in line
        and "does not list model 'judge-x' (it lists: served-model)" in line
    )


def test_a_server_without_models_route_or_listing_is_still_used(judged):
    tmp_path, data, predictions = judged
    with OpenAIStub(good_judge, model="whatever-name") as server:
        code, output = invoke(*judge_args(tmp_path, data, predictions, server.base_url))
        assert code == 0, output
        assert (
            "does not list model 'judge-x' (it lists: whatever-name), but it answered a test request"
            in output
        )
        server.list_models = False
        (tmp_path / "cache").rename(tmp_path / "old-cache")  # ask again
        code, output = invoke(*judge_args(tmp_path, data, predictions, server.base_url))
        assert code == 0, output
        assert "note:" not in output
        assert json.loads((tmp_path / "results.json").read_text())["ungraded"] == 0


# ---- ungraded samples stop the run unless allowed ----------------------------------------------------


def sloppy(body: dict) -> str:
    """A judge that gives no verdict for the right QA answer."""
    prompt = prompt_text(body)
    if "impartial grader" in prompt and "<<<ANSWER\nApril 25, 2018\nANSWER>>>" in prompt:
        return "This answer looks great, top marks!"
    return good_judge(body)


def test_ungraded_samples_exit_non_zero_with_reasons_and_results_to_inspect(judged):
    tmp_path, data, predictions = judged
    out = tmp_path / "results.json"
    with OpenAIStub(sloppy, model="judge-x") as server:
        code, output = invoke(
            *judge_args(tmp_path, data, predictions, server.base_url, "--qa-filter", "off")
        )
    assert code == 2
    assert (
        "8 samples could not be graded by the judge (8 invalid reply; score null, left out of the means)"
        in output
    )
    assert output.strip().splitlines()[-1] == (
        f"error: 8 samples could not be graded by the judge (8 invalid reply); results written to {out} for "
        "inspection (samples[].judge_reply); fix the judge and rerun, or pass --allow-ungraded to accept them"
    )
    results = json.loads(out.read_text())
    assert results["ungraded_by_reason"] == {"invalid reply": 8}
    sample = next(s for s in results["samples"] if s["id"] == "single_doc_qa-4k-0000")
    assert sample["score"] is None and sample["ungraded_reason"] == "invalid reply"
    assert (
        sample["judge_reply"] == "This answer looks great, top marks!" and sample["parts"] is None
    )


def test_allow_ungraded_exits_zero(judged):
    tmp_path, data, predictions = judged
    with OpenAIStub(sloppy, model="judge-x") as server:
        code, output = invoke(
            *judge_args(tmp_path, data, predictions, server.base_url, "--allow-ungraded")
        )
    assert code == 0, output
    assert "could not be graded by the judge (8 invalid reply;" in output


def test_judge_failing_mid_run_is_reported_by_reason(judged):
    tmp_path, data, predictions = judged
    calls = []

    def dies_after_preflight(body: dict):
        calls.append(1)
        return (
            good_judge(body)
            if len(calls) == 1
            else (400, {"error": {"message": "context length exceeded"}})
        )

    with OpenAIStub(dies_after_preflight, model="judge-x", answer_test_requests=False) as server:
        code, output = invoke(
            *judge_args(tmp_path, data, predictions, server.base_url, "--qa-filter", "off")
        )
    assert code == 2
    assert "failed calls (4 HTTP 400)" in output
    assert "16 samples could not be graded by the judge (16 request failed (HTTP 400)" in output


# ---- per-sample log, settings, permissions --------------------------------------------------------------


def test_judged_samples_log_prediction_answers_parts_depth_and_source(judged):
    tmp_path, data, predictions = judged
    out = tmp_path / "results.json"
    with OpenAIStub(good_judge, model="judge-x") as server:
        code, output = invoke(*judge_args(tmp_path, data, predictions, server.base_url))
        base_url = server.base_url
    assert code == 0, output
    results = json.loads(out.read_text())
    samples = {s["id"]: s for s in results["samples"]}
    qa = samples["single_doc_qa-2k-0000"]
    assert qa["prediction"] == RIGHT["single_doc_qa"] and qa["answers"] == GOLD["single_doc_qa"]
    assert qa["depth"] == 0.5 and qa["judge_reply"] is None and qa["ungraded_reason"] is None
    assert qa["parts"]["fluency"] == 2 and qa["parts"]["correctness"] == 3
    assert '"correctness": 3' in qa["parts"]["reasoning"]
    summary = samples["single_doc_sum-6k-0001"]["parts"]
    assert {key: summary[key] for key in ("fluency", "supported", "n_sentences")} == {
        "fluency": 1,
        "supported": 2,
        "n_sentences": 2,
    }
    assert samples["kv_retrieval-2k-0000"]["parts"] is None
    assert results["settings"]["judge"] == {"model": "judge-x", "base_url": base_url}
    assert results["settings"]["metrics"]["single_doc_qa"] == "qa_judge"
    text = out.read_text()
    assert text.count('\n  {"id": ') == len(samples)  # one sample per line
    umask = os.umask(0o022)
    os.umask(umask)
    assert (
        stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    )  # readable like the data files (0644 under umask 022)


def test_sample_source_comes_from_gold(tmp_path):
    data = write_dataset(tmp_path / "data", tasks=("single_doc_qa",), labels=("2k",), rows=1)
    path = data / "single_doc_qa" / "2k.jsonl"
    record = json.loads(path.read_text())
    record["gold"] = {"sources": ["my_source", "other"], "depth": 0.25}
    path.write_text(json.dumps(record) + "\n")
    seal(data)
    predictions = write_predictions(tmp_path / "p", data)
    out = tmp_path / "r.json"
    code, output = invoke(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--base-lengths",
        "2k",
    )
    assert code == 0, output
    sample = json.loads(out.read_text())["samples"][0]
    assert sample["source"] == "my_source" and sample["depth"] == 0.25


# ---- --limit, dry-run cost, --rouge-variant, --out -------------------------------------------------


def test_limit_scores_the_first_rows_of_each_task_and_length(tmp_path):
    data = write_dataset(
        tmp_path / "data", tasks=("kv_retrieval", "passage_count"), labels=("2k", "4k"), rows=3
    )
    predictions = write_predictions(tmp_path / "p", data)
    (predictions / "kv_retrieval" / "2k.jsonl").write_text(
        (predictions / "kv_retrieval" / "2k.jsonl").read_text().splitlines()[0]
        + "\n"  # only row 0 answered
    )
    out = tmp_path / "r.json"
    code, output = invoke(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--limit",
        "1",
        "--base-lengths",
        "2k",
    )
    assert code == 0, output
    results = json.loads(out.read_text())
    assert sorted(s["id"] for s in results["samples"]) == [
        "kv_retrieval-2k-0000",
        "kv_retrieval-4k-0000",
        "passage_count-2k-0000",
        "passage_count-4k-0000",
    ]
    assert results["limit"] == 1 and "--limit 1: scored only the first 1 rows" in output
    code, output = invoke(
        "--data", str(data), "--predictions", str(predictions), "--out", str(out), "--limit", "0"
    )
    assert code == 2 and "--limit" in output


def test_dry_run_prints_the_estimated_cost(judged):
    tmp_path, data, predictions = judged
    with OpenAIStub(good_judge, model="judge-x") as server:
        code, output = invoke(
            *judge_args(
                tmp_path,
                data,
                predictions,
                server.base_url,
                "--dry-run",
                "--price-in",
                "2.5",
                "--price-out",
                "10",
                "--judge-max-tokens",
                "500",
            )
        )
        assert server.requests == []
    assert code == 0, output
    calls, tokens = map(
        int,
        re.search(
            r"dry run: (\d+) judge calls needed .* carrying (\d+) prompt tokens", output
        ).groups(),
    )
    expected = tokens / 1e6 * 2.5 + calls * 500 / 1e6 * 10
    assert (
        calls > 0
        and f"estimated judge cost: at most ${expected:.2f} ({tokens} prompt tokens at $2.5/M, "
        f"up to {calls * 500} output tokens at $10/M assuming every reply uses --judge-max-tokens 500)"
        in output
    )
    assert not (tmp_path / "results.json").exists()
    code, output = invoke(
        *judge_args(tmp_path, data, predictions, server.base_url, "--dry-run", "--price-in", "1")
    )
    assert code == 2 and "--price-in and --price-out go together" in output


def test_rouge_variant_is_checked_and_recorded(tmp_path):
    data = write_dataset(tmp_path / "data", tasks=("single_doc_sum",), labels=("2k",), rows=1)
    predictions = write_predictions(tmp_path / "p", data)
    out = tmp_path / "r.json"
    code, output = invoke(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--base-lengths",
        "2k",
        "--rouge-variant",
        "rouge-score",
    )
    assert code == 0, output
    assert json.loads(out.read_text())["settings"]["rouge_variant"] == "rouge-score"
    code, output = invoke(
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--rouge-variant",
        "nope",
    )
    assert code == 2 and "--rouge-variant" in output


def test_out_that_is_a_folder_fails_before_any_work(tmp_path):
    from longbench100 import ScoreOptions, run_score
    from longbench100.core.errors import UserError

    data = write_dataset(tmp_path / "data", tasks=("kv_retrieval",), labels=("2k",), rows=1)
    predictions = write_predictions(tmp_path / "p", data)
    with pytest.raises(UserError, match="is a folder"):
        run_score(
            ScoreOptions(data_dir=data, predictions=predictions, out=tmp_path),
            echo=print,
            progress=False,
        )


# ---- the library API ----------------------------------------------------------------------------------


def test_run_score_is_the_library_entry(tmp_path):
    from longbench100 import ScoreOptions, run_score

    data = write_dataset(
        tmp_path / "data", tasks=("kv_retrieval", "single_doc_qa"), labels=("2k", "4k"), rows=2
    )
    predictions = write_predictions(tmp_path / "p", data)
    lines: list[str] = []
    options = ScoreOptions(
        data_dir=data,
        predictions=predictions,
        out=tmp_path / "r.json",
        base_lengths=("2k",),
        n_boot=0,
        model_name="lib",
    )
    results = run_score(options, echo=lines.append, progress=False)
    assert results == json.loads((tmp_path / "r.json").read_text())
    assert (
        results["model"] == "lib"
        and results["aggregates"]["tasks"]["kv_retrieval"]["base_ability"] == 100.0
    )
    assert lines[-1] == f"wrote {tmp_path / 'r.json'}"
