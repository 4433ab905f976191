"""``predict`` never loses a recorded prediction, stops when the server no longer answers, reports empty answers."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.llm.client import CompletionResult, LLMClient
from longbench100.predict.options import PredictOptions
from longbench100.predict.run import LOST_AFTER_DROPS, run_predictions
from longbench100.predict.store import PredictionStore
from tests.support.generate_helpers import terminal_signals
from tests.support.openai_stub import DROP, OpenAIStub, prompt_text
from tests.support.predict_helpers import read_predictions, sample_id_of, write_data


def echo(body: dict) -> str:
    prompt = prompt_text(body)
    return f"{'closed' if 'closed book' in prompt else 'answer'} {sample_id_of(prompt)}"


def predict(base_url: str, data, out, *extra: str, model: str = "stub-model"):
    args = [
        "predict",
        "--data",
        str(data),
        "--out",
        str(out),
        "--model",
        model,
        "--base-url",
        base_url,
        "--max-retries",
        "0",
        "--no-progress",
        *extra,
    ]
    return CliRunner().invoke(main, args)


def closed_port_url() -> str:
    with socket.socket() as sock:  # free a moment ago, nothing listens on it now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def snapshot(out) -> dict:
    return {
        path.relative_to(out).as_posix(): path.read_bytes()
        for path in sorted(out.glob("*/*.jsonl"))
    }


def config(data, out, base_url: str, **overrides) -> PredictOptions:
    settings = dict(
        data_dir=data,
        out_dir=out,
        model="stub-model",
        base_url=base_url,
        concurrency=1,
        max_retries=1,
        backoff_base_s=0.001,
        progress=False,
    )
    return PredictOptions(**{**settings, **overrides})


# 1. A rerun never drops records before their replacement is written


def test_rerun_against_an_unreachable_server_keeps_every_record(tmp_path):
    data = write_data(tmp_path / "data", {("single_doc_qa", "2k"): 3, ("kv_retrieval", "2k"): 2})
    out = tmp_path / "pred"
    with OpenAIStub(echo) as server:
        assert predict(server.base_url, data, out, "--no-closed-book").exit_code == 0
    before = snapshot(out)
    assert sum(data.count(b"\n") for data in before.values()) == 5

    result = predict(closed_port_url(), data, out)  # closed book now wanted: 3 QA samples to redo
    assert result.exit_code == 2 and "cannot reach the server" in result.output
    assert snapshot(out) == before


def test_redo_stopped_midway_keeps_the_samples_not_yet_redone(tmp_path):
    data = write_data(tmp_path / "data", {("single_doc_qa", "2k"): 5})
    out = tmp_path / "pred"
    with OpenAIStub(echo) as server:
        run_predictions(config(data, out, server.base_url, closed_book=False))

    def responder(body):
        if sample_id_of(prompt_text(body)).endswith("0002"):  # the server goes away mid-run
            server.stop()
            return DROP
        return echo(body)

    server = OpenAIStub(responder)
    with (
        server,
        pytest.raises(UserError, match=r"lost the server .*ConnectError.*2 samples were saved"),
    ):
        run_predictions(config(data, out, server.base_url))
    records = read_predictions(
        out
    )  # compacted: one record per sample, the new one where it was redone
    assert [r["id"] for r in records] == [f"single_doc_qa-2k-{row:04d}" for row in range(5)]
    assert [r["closed_book_prediction"] for r in records] == [
        "closed single_doc_qa-2k-0000",
        "closed single_doc_qa-2k-0001",
        None,
        None,
        None,
    ]
    assert all(r["prediction"] == f"answer {r['id']}" for r in records)

    with OpenAIStub(echo) as server:
        summary = run_predictions(config(data, out, server.base_url))
    assert (summary.done, summary.skipped) == (3, 2)
    records = read_predictions(out)
    assert len(records) == 5 and all(
        r["closed_book_prediction"] == f"closed {r['id']}" for r in records
    )


def test_other_model_is_refused_before_any_file_changes(tmp_path):
    data = write_data(tmp_path / "data", {("single_doc_qa", "2k"): 2, ("single_doc_sum", "2k"): 1})
    out = tmp_path / "pred"
    with OpenAIStub(echo) as server:
        assert predict(server.base_url, data, out, "--no-closed-book").exit_code == 0
        other = out / "single_doc_sum/2k.jsonl"  # a later file holds another model's prediction
        record = json.loads(other.read_text())
        other.write_text(json.dumps({**record, "model": "other-model"}) + "\n")
        before = snapshot(out)
        result = predict(server.base_url, data, out)  # would redo the QA samples of the first file
        sent = len(server.requests)
    assert result.exit_code == 2 and "holds predictions of model 'other-model'" in result.output
    assert snapshot(out) == before and sent == 3


def test_duplicates_left_by_a_killed_redo_are_compacted_last_one_winning(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 2})
    out = tmp_path / "pred"
    store = PredictionStore(out)
    old = {
        "id": "kv_retrieval-2k-0000",
        "prediction": None,
        "error": "HTTP 500: x",
        "model": "stub-model",
    }
    new = {
        "id": "kv_retrieval-2k-0000",
        "prediction": "fixed",
        "error": None,
        "model": "stub-model",
    }
    store.append("kv_retrieval", "2k", old)
    store.append("kv_retrieval", "2k", new)
    store.close()
    with OpenAIStub(echo) as server:
        summary = run_predictions(config(data, out, server.base_url))
    assert (summary.done, summary.skipped) == (1, 1)
    records = read_predictions(out)
    assert [(r["id"], r["prediction"]) for r in records] == [
        ("kv_retrieval-2k-0000", "fixed"),
        ("kv_retrieval-2k-0001", "answer kv_retrieval-2k-0001"),
    ]


def test_store_compact(tmp_path):
    store = PredictionStore(tmp_path)
    for name, value in [("a", 1), ("b", 2), ("a", 3)]:
        store.append("kv_retrieval", "2k", {"id": name, "prediction": value})
    assert store.compact("kv_retrieval", "2k") is True
    assert store.load("kv_retrieval", "2k") == [
        {"id": "a", "prediction": 3},
        {"id": "b", "prediction": 2},
    ]
    before = store.path("kv_retrieval", "2k").stat().st_mtime_ns
    assert store.compact("kv_retrieval", "2k") is False
    assert store.path("kv_retrieval", "2k").stat().st_mtime_ns == before
    store.append(
        "kv_retrieval", "2k", {"id": "c", "prediction": 4}
    )  # appending still works after a rewrite
    store.close()
    assert [r["id"] for r in store.load("kv_retrieval", "2k")] == ["a", "b", "c"]
    assert not list(tmp_path.rglob("*.tmp"))


# 2. A server that stops answering stops the run; nothing is blamed on the samples


def test_server_dropping_every_connection_stops_the_run(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 8})
    out = tmp_path / "pred"

    def responder(body):
        row = int(sample_id_of(prompt_text(body))[-4:])
        return echo(body) if row < 2 else DROP  # accepts connections, then closes them unanswered

    with OpenAIStub(responder) as server:
        with pytest.raises(
            UserError,
            match=rf"lost the server .*{LOST_AFTER_DROPS} samples in a row got no "
            r"answer.*RemoteProtocolError.*2 samples were saved",
        ):
            run_predictions(config(data, out, server.base_url))
        assert len(server.requests) == 2 + 2 * LOST_AFTER_DROPS  # each dropped request tried twice
    assert [r["id"] for r in read_predictions(out)] == [
        "kv_retrieval-2k-0000",
        "kv_retrieval-2k-0001",
    ]
    with OpenAIStub(echo) as server:
        summary = run_predictions(config(data, out, server.base_url))
    assert (summary.done, summary.skipped, sum(summary.failed.values())) == (6, 2, 0)


def test_a_few_dropped_connections_are_the_samples_own_failures(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 6})
    out = tmp_path / "pred"
    dropped = {"kv_retrieval-2k-0001", "kv_retrieval-2k-0002", "kv_retrieval-2k-0005"}

    def responder(body):
        return DROP if sample_id_of(prompt_text(body)) in dropped else echo(body)

    with OpenAIStub(responder) as server:
        summary = run_predictions(config(data, out, server.base_url))
    assert (summary.done, dict(summary.failed)) == (3, {"RemoteProtocolError": 3})
    records = read_predictions(out)
    assert sorted(r["id"] for r in records) == [f"kv_retrieval-2k-{row:04d}" for row in range(6)]
    assert {r["id"] for r in records if r["error"]} == dropped


def test_connect_timeout_means_the_server_is_gone(tmp_path, monkeypatch):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 4})
    out = tmp_path / "pred"
    real_complete = LLMClient.complete

    async def complete(self, prompt, **kwargs):
        if prompt.startswith("[") and sample_id_of(prompt).endswith(
            "0001"
        ):  # drops new connections
            error = "ConnectTimeout: timed out (gave up after 2 attempts)"
            return CompletionResult(None, None, None, None, 5.0, 2, error)
        return await real_complete(self, prompt, **kwargs)

    monkeypatch.setattr(LLMClient, "complete", complete)
    with OpenAIStub(echo) as server:
        with pytest.raises(
            UserError, match=r"lost the server .*ConnectTimeout.*1 samples were saved"
        ):
            run_predictions(config(data, out, server.base_url))
    assert [r["id"] for r in read_predictions(out)] == ["kv_retrieval-2k-0000"]


# 3. Empty answers are kept, score 0, and are counted in the summary


def test_empty_answers_are_recorded_and_counted(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 3, ("single_doc_qa", "2k"): 1})
    out = tmp_path / "pred"
    null_content = {
        "choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 6, "completion_tokens": 64},
    }

    def responder(body):
        prompt = prompt_text(body)
        if sample_id_of(prompt) == "kv_retrieval-2k-0000":
            return 200, null_content
        if sample_id_of(prompt) == "single_doc_qa-2k-0000" and "closed book" in prompt:
            return ""
        return echo(body)

    with OpenAIStub(responder) as server:
        result = predict(server.base_url, data, out)
    assert result.exit_code == 0, result.output
    assert "4 selected, 4 done, 0 failed" in result.output
    assert (
        "empty:    2 answers were empty (finish_reason length: 1, finish_reason stop: 1)"
        in result.output
    )
    assert "raise --max-new-tokens" in result.output
    records = {r["id"]: r for r in read_predictions(out)}
    empty = records["kv_retrieval-2k-0000"]
    assert (empty["prediction"], empty["error"], empty["finish_reason"]) == ("", None, "length")
    qa = records["single_doc_qa-2k-0000"]
    assert (qa["prediction"], qa["closed_book_prediction"], qa["error"]) == (
        "answer single_doc_qa-2k-0000",
        "",
        None,
    )


def test_no_empty_line_without_empty_answers(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(echo) as server:
        result = predict(server.base_url, data, tmp_path / "pred")
    assert result.exit_code == 0 and "empty:" not in result.output


# 4. A whole last record without its newline is kept


def test_store_keeps_a_complete_last_record_without_newline(tmp_path):
    store = PredictionStore(tmp_path)
    path = store.path("kv_retrieval", "2k")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"id": "a", "prediction": "1"}\n{"id": "b", "prediction": "2"}')
    assert [r["id"] for r in store.load("kv_retrieval", "2k")] == ["a", "b"]
    assert path.read_bytes() == b'{"id": "a", "prediction": "1"}\n{"id": "b", "prediction": "2"}\n'
    store.append("kv_retrieval", "2k", {"id": "c", "prediction": "3"})
    store.close()
    assert [r["id"] for r in store.load("kv_retrieval", "2k")] == ["a", "b", "c"]


@pytest.mark.parametrize("tail", [b'{"id": "b", "pred', b'{"id": "b"', b"{", b"  ", b"\xff\xfe"])
def test_store_cuts_a_torn_last_line(tmp_path, tail):
    store = PredictionStore(tmp_path)
    path = store.path("kv_retrieval", "2k")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"id": "a", "prediction": "1"}\n' + tail)
    assert [r["id"] for r in store.load("kv_retrieval", "2k")] == ["a"]
    assert path.read_bytes() == b'{"id": "a", "prediction": "1"}\n'


def test_store_reports_a_whole_last_line_that_is_not_a_record(tmp_path):
    store = PredictionStore(tmp_path)
    path = store.path("kv_retrieval", "2k")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"id": "a", "prediction": "1"}\n{"prediction": "2"}')
    with pytest.raises(UserError, match=r"2k.jsonl:2: not a prediction record"):
        store.load("kv_retrieval", "2k")
    assert b'{"prediction": "2"}' in path.read_bytes()


@pytest.mark.parametrize(
    ("stop", "code", "word"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
)
def test_sigterm_and_ctrl_c_stop_predict_with_the_resume_hint(tmp_path, stop, code, word):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 3})
    release = threading.Event()
    asked = threading.Event()

    def hang(body: dict) -> str:
        asked.set()
        release.wait(60)
        return "late"

    with OpenAIStub(hang) as server:
        command = [
            sys.executable,
            "-m",
            "longbench100",
            "predict",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "preds"),
            "--model",
            "stub-model",
            "--base-url",
            server.base_url,
            "--no-progress",
            "--concurrency",
            "1",
        ]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=terminal_signals,
        )
        try:
            assert asked.wait(60), "no request arrived"
            process.send_signal(stop)
            _, stderr = process.communicate(timeout=60)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == code, stderr
    told = [line for line in stderr.strip().splitlines() if "one-token test request" not in line]
    assert told == [f"{word}: finished samples are saved; rerun the same command to resume"]
