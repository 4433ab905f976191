"""``longbench100 predict`` end to end against the local stub server: records, closed book, errors, resume."""

import json
import threading

import pytest
from click.testing import CliRunner

from longbench100.catalog.task_info import TASKS
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.predict.options import PredictOptions
from longbench100.predict.run import run_predictions
from tests.support.openai_stub import DROP, OpenAIStub, prompt_text
from tests.support.predict_helpers import read_predictions, sample_id_of, write_data

LAYOUT = {("kv_retrieval", "2k"): 3, ("single_doc_qa", "2k"): 2, ("single_doc_sum", "4k"): 1}
SCHEMA_KEYS = ["id", "prediction", "closed_book_prediction", "error"]


def echo(body: dict) -> str:
    """Answer with the sample id and whether the prompt was the closed-book one."""
    prompt = prompt_text(body)
    return f"{'closed' if 'closed book' in prompt else 'answer'} {sample_id_of(prompt)}"


def predict(server: OpenAIStub, data, out, *extra: str, env: dict | None = None):
    """Run the CLI in-process and return click's result."""
    args = ["predict", "--data", str(data), "--out", str(out), "--model", server.model]
    args += ["--base-url", server.base_url, *extra]
    return CliRunner().invoke(main, args, env=env)


def test_records_for_every_sample(tmp_path):
    data = write_data(tmp_path / "data", LAYOUT)
    with OpenAIStub(echo) as server:
        result = predict(server, data, tmp_path / "pred", "--temperature", "0.5")
    assert result.exit_code == 0, result.output
    assert "6 selected, 6 done, 0 failed, 0 skipped" in result.output
    assert sorted(
        p.relative_to(tmp_path / "pred").as_posix() for p in (tmp_path / "pred").glob("*/*")
    ) == ["kv_retrieval/2k.jsonl", "single_doc_qa/2k.jsonl", "single_doc_sum/4k.jsonl"]
    records = {r["id"]: r for r in read_predictions(tmp_path / "pred")}
    assert len(records) == 6
    for sample_id, record in records.items():
        assert list(record)[:4] == SCHEMA_KEYS
        assert record["prediction"] == f"answer {sample_id}" and record["error"] is None
        assert (
            record["model"] == "stub-model"
            and record["finish_reason"] == "stop"
            and record["attempts"] == 1
        )
        assert record["completion_tokens"] == 2 and record["prompt_tokens"] == 6
        qa = record["task"] == "single_doc_qa"
        assert record["closed_book_prediction"] == (f"closed {sample_id}" if qa else None)
        assert (record["closed_book_attempts"] == 1) == qa
    # 6 prompts + 2 closed-book prompts, each with its task's default answer length
    assert len(server.bodies) == 8
    for body in server.bodies:
        task = sample_id_of(prompt_text(body)).rsplit("-", 2)[0]
        assert body["max_tokens"] == TASKS[task].max_new_tokens and body["temperature"] == 0.5
        assert body["messages"][0]["role"] == "user"


def test_rerun_skips_finished_samples(tmp_path):
    data = write_data(tmp_path / "data", LAYOUT)
    with OpenAIStub(echo) as server:
        assert predict(server, data, tmp_path / "pred").exit_code == 0
        before = {p: p.read_bytes() for p in (tmp_path / "pred").glob("*/*.jsonl")}
        result = predict(server, data, tmp_path / "pred")
    assert result.exit_code == 0, result.output
    assert "6 selected, 0 done, 0 failed, 6 skipped" in result.output
    assert len(server.requests) == 8  # nothing sent the second time
    assert {p: p.read_bytes() for p in (tmp_path / "pred").glob("*/*.jsonl")} == before


def test_context_overflow_is_recorded_and_retry_failed_redoes_it(tmp_path):
    data = write_data(tmp_path / "data", {("passage_count", "8k"): 2}, prompt_words=50)
    write_data(tmp_path / "data", {("passage_count", "2k"): 3})
    limit = {"words": 20}
    message = "This model's maximum context length is 20 tokens."

    def responder(body):
        if len(prompt_text(body).split()) > limit["words"]:
            return 400, {
                "object": "error",
                "message": message,
                "type": "BadRequestError",
                "code": 400,
            }
        return echo(body)

    with OpenAIStub(responder) as server:
        result = predict(server, data, tmp_path / "pred")
        assert result.exit_code == 1, result.output  # samples that failed for good fail the run
        assert "5 selected, 3 done, 2 failed" in result.output
        assert "failed:   HTTP 400: 2" in result.output and "--max-model-len" in result.output
        assert (
            "error: 2 of 5 samples failed: HTTP 400 x 2; rerun with --retry-failed" in result.output
        )
        assert len(server.requests) == 5  # a length rejection is not retried
        failed = [r for r in read_predictions(tmp_path / "pred") if r["error"]]
        assert sorted(r["id"] for r in failed) == ["passage_count-8k-0000", "passage_count-8k-0001"]
        assert all(r["prediction"] is None and r["error"] == f"HTTP 400: {message}" for r in failed)

        result = predict(
            server, data, tmp_path / "pred"
        )  # failed-for-good counts as finished, still failed
        assert result.exit_code == 1 and "5 skipped" in result.output
        assert (
            "error: 2 of 5 samples failed: HTTP 400 x 2; rerun with --retry-failed" in result.output
        )
        assert len(server.requests) == 5

        limit["words"] = 1000  # a server with a longer context
        result = predict(server, data, tmp_path / "pred", "--retry-failed")
        assert result.exit_code == 0, result.output
        assert "5 selected, 2 done, 0 failed, 3 skipped" in result.output
    records = read_predictions(tmp_path / "pred")
    assert sorted(r["id"] for r in records) == sorted({r["id"] for r in records})
    assert len(records) == 5 and all(r["error"] is None for r in records)


def test_rate_limits_are_retried(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 4})
    lock, seen = threading.Lock(), set()

    def responder(body):
        prompt = prompt_text(body)
        with lock:
            first = prompt not in seen
            seen.add(prompt)
        if first:
            return 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}
        return echo(body)

    with OpenAIStub(responder) as server:
        result = predict(server, data, tmp_path / "pred")
    assert result.exit_code == 0, result.output
    assert "4 done, 0 failed" in result.output and "8 requests" in result.output
    assert all(
        r["attempts"] == 2 and r["error"] is None for r in read_predictions(tmp_path / "pred")
    )


def test_server_errors_retried_then_recorded(tmp_path):
    data = write_data(tmp_path / "data", {("counting_stars", "4k"): 3})

    def responder(body):
        if sample_id_of(prompt_text(body)).endswith("0001"):
            return 503, {"error": {"message": "overloaded"}}
        return echo(body)

    with OpenAIStub(responder) as server:
        summary = run_predictions(
            PredictOptions(
                data_dir=data,
                out_dir=tmp_path / "pred",
                model=server.model,
                base_url=server.base_url,
                max_retries=2,
                backoff_base_s=0.001,
                progress=False,
            )
        )
    assert (summary.done, dict(summary.failed), summary.requests) == (2, {"HTTP 503": 1}, 5)
    failed = [r for r in read_predictions(tmp_path / "pred") if r["error"]]
    assert [(r["id"], r["attempts"]) for r in failed] == [("counting_stars-4k-0001", 3)]
    assert failed[0]["error"] == "HTTP 503: overloaded (gave up after 3 attempts)"


def test_closed_book_failure_marks_the_record(tmp_path):
    data = write_data(tmp_path / "data", {("multi_doc_qa", "2k"): 2})

    def responder(body):
        if "closed book" in prompt_text(body):
            return 400, {"error": {"message": "no"}}
        return echo(body)

    with OpenAIStub(responder) as server:
        result = predict(server, data, tmp_path / "pred")
    assert "failed:   closed book HTTP 400: 2" in result.output
    for record in read_predictions(tmp_path / "pred"):
        assert (
            record["prediction"] == f"answer {record['id']}"
            and record["closed_book_prediction"] is None
        )
        assert (
            record["error"] == "closed book HTTP 400: no"
            and record["closed_book_error"] == "HTTP 400: no"
        )


def test_enabling_closed_book_later_redoes_only_qa(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 2, ("single_doc_qa", "2k"): 2})
    with OpenAIStub(echo) as server:
        result = predict(server, data, tmp_path / "pred", "--no-closed-book")
        assert result.exit_code == 0 and len(server.requests) == 4
        assert all(r["closed_book_prediction"] is None for r in read_predictions(tmp_path / "pred"))
        result = predict(server, data, tmp_path / "pred")
    assert result.exit_code == 0, result.output
    assert "4 selected, 2 done, 0 failed, 2 skipped" in result.output
    assert len(server.requests) == 8
    records = read_predictions(tmp_path / "pred")
    assert sorted(r["id"] for r in records) == sorted(
        [
            "kv_retrieval-2k-0000",
            "kv_retrieval-2k-0001",
            "single_doc_qa-2k-0000",
            "single_doc_qa-2k-0001",
        ]
    )
    assert all(
        r["closed_book_prediction"] == f"closed {r['id']}"
        for r in records
        if r["task"] == "single_doc_qa"
    )


def test_selection_tokens_mode_and_api_key(tmp_path):
    data = write_data(
        tmp_path / "data",
        {
            ("kv_retrieval", "2k"): 1,
            ("kv_retrieval", "8k"): 2,
            ("single_doc_qa", "8k"): 1,
            ("passage_count", "8k"): 1,
        },
    )
    with OpenAIStub(echo) as server:
        result = predict(
            server,
            data,
            tmp_path / "pred",
            "--tasks",
            "single_doc_qa,kv_retrieval",
            "--lengths",
            "8192",
            "--max-new-tokens",
            "5",
            "--mode",
            "completion",
            "--api-key-env",
            "MY_KEY",
            env={"MY_KEY": "sk-123"},
        )
    assert result.exit_code == 0, result.output
    assert "3 selected, 3 done" in result.output
    assert {r["id"] for r in read_predictions(tmp_path / "pred")} == {
        "kv_retrieval-8k-0000",
        "kv_retrieval-8k-0001",
        "single_doc_qa-8k-0000",
    }
    assert len(server.requests) == 4
    for request in server.requests:
        assert request.path == "/v1/completions" and request.body["max_tokens"] == 5
        assert request.headers["authorization"] == "Bearer sk-123"


def test_openai_environment_variables_are_read_and_explicit_options_win(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(echo) as from_env, OpenAIStub(echo) as given:
        env = {
            "OPENAI_BASE_URL": from_env.base_url,
            "OPENAI_API_KEY": "sk-env",
            "MY_KEY": "sk-mine",
        }
        args = ["predict", "--data", str(data), "--model", from_env.model]
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "a")], env=env)
        assert result.exit_code == 0, result.output
        result = CliRunner().invoke(
            main,
            [
                *args,
                "--out",
                str(tmp_path / "b"),
                "--base-url",
                given.base_url,
                "--api-key-env",
                "MY_KEY",
            ],
            env=env,
        )
        assert result.exit_code == 0, result.output
    assert [request.headers["authorization"] for request in from_env.requests] == ["Bearer sk-env"]
    assert [request.headers["authorization"] for request in given.requests] == ["Bearer sk-mine"]


def test_concurrency_limit_holds_for_a_run(tmp_path):
    # Requests pass only in groups of 4: a run with --concurrency 4 fills every group (peak 4) and
    # never exceeds it. 6 QA samples (12 requests) + 4 others = 16 requests.
    data = write_data(
        tmp_path / "data", {("single_doc_qa", "2k"): 6, ("passage_retrieval", "2k"): 4}
    )
    barrier = threading.Barrier(4, timeout=30)

    def responder(body):
        barrier.wait()
        return echo(body)

    with OpenAIStub(responder) as server:
        result = predict(server, data, tmp_path / "pred", "--concurrency", "4")
    assert result.exit_code == 0, result.output
    assert "10 done, 0 failed" in result.output
    assert len(server.requests) == 16 and server.peak_concurrency == 4


def test_other_models_predictions_are_not_mixed(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(echo) as server:
        assert predict(server, data, tmp_path / "pred").exit_code == 0
    with OpenAIStub(echo, model="other-model") as server:
        result = predict(server, data, tmp_path / "pred")
    assert result.exit_code == 2
    assert "holds predictions of model 'stub-model', not 'other-model'" in result.output
    assert (
        json.loads((tmp_path / "pred/kv_retrieval/2k.jsonl").read_text())["model"] == "stub-model"
    )


def test_lost_server_stops_the_run_without_recording_blame(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 6})
    config = dict(
        data_dir=data,
        out_dir=tmp_path / "pred",
        model="stub-model",
        concurrency=1,
        max_retries=1,
        backoff_base_s=0.001,
        progress=False,
    )

    def responder(body):
        if sample_id_of(prompt_text(body)).endswith("0002"):  # the server goes away mid-request
            server.stop()
            return DROP
        return echo(body)

    server = OpenAIStub(responder)
    with server:
        with pytest.raises(
            UserError, match=r"lost the server at .*ConnectError.*2 samples were saved"
        ):
            run_predictions(PredictOptions(base_url=server.base_url, **config))
    assert [r["id"] for r in read_predictions(tmp_path / "pred")] == [
        "kv_retrieval-2k-0000",
        "kv_retrieval-2k-0001",
    ]
    with OpenAIStub(echo) as server:
        summary = run_predictions(PredictOptions(base_url=server.base_url, **config))
    assert (summary.done, summary.skipped, sum(summary.failed.values())) == (4, 2, 0)
    assert len(read_predictions(tmp_path / "pred")) == 6
