"""Crash safety: kill -9 a running ``predict`` process, rerun it, and lose or duplicate nothing."""

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from tests.support.openai_stub import OpenAIStub, prompt_text
from tests.support.predict_helpers import read_predictions, sample_id_of, write_data

REPO = Path(__file__).resolve().parents[2]
LAYOUT = {("kv_retrieval", "2k"): 6, ("single_doc_qa", "2k"): 6, ("passage_count", "4k"): 6}
TOTAL = 18
CONCURRENCY = 4
ANSWER_FIRST = 5  # requests answered at once; later ones wait until released


def _wait_for(condition, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _complete_lines(out: Path) -> int:
    return sum(path.read_bytes().count(b"\n") for path in out.glob("*/*.jsonl"))


def _command(server: OpenAIStub, data: Path, out: Path) -> list[str]:
    code = "from longbench100.cli import main; main()"
    return [
        sys.executable,
        "-c",
        code,
        "predict",
        "--data",
        str(data),
        "--out",
        str(out),
        "--model",
        server.model,
        "--base-url",
        server.base_url,
        "--concurrency",
        str(CONCURRENCY),
        "--no-progress",
    ]


def test_kill_9_then_resume_loses_and_duplicates_nothing(tmp_path):
    data = write_data(tmp_path / "data", LAYOUT)
    out = tmp_path / "pred"
    release = threading.Event()
    lock = threading.Lock()
    answered = []

    def responder(body):
        with lock:
            answered.append(1)
            hold = len(answered) > ANSWER_FIRST
        if hold:
            release.wait(60)
        return "answer " + sample_id_of(prompt_text(body))

    with OpenAIStub(responder) as server:
        process = subprocess.Popen(
            _command(server, data, out), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        try:
            # Wait until some samples are saved and the next requests hang in flight, then kill -9.
            _wait_for(
                lambda: len(server.requests) >= ANSWER_FIRST + CONCURRENCY, "requests in flight"
            )
            _wait_for(lambda: _complete_lines(out) >= 1, "a saved prediction")
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
            release.set()
        saved_before = {r["id"] for r in read_predictions(out)}
        assert 1 <= len(saved_before) < TOTAL
        sent_first_run = len(server.requests)

        rerun = subprocess.run(
            _command(server, data, out), cwd=REPO, capture_output=True, text=True, timeout=120
        )
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert (
            f"{TOTAL - len(saved_before)} done, 0 failed, {len(saved_before)} skipped"
            in rerun.stdout
        )

    records = read_predictions(out)
    counts = Counter(r["id"] for r in records)
    assert len(counts) == TOTAL and set(counts.values()) == {1}
    assert all(r["prediction"] == f"answer {r['id']}" and r["error"] is None for r in records)
    qa = [r for r in records if r["task"] == "single_doc_qa"]
    assert len(qa) == 6 and all(r["closed_book_prediction"] == f"answer {r['id']}" for r in qa)
    # The rerun asked again only for samples that had not been saved.
    resent = {sample_id_of(prompt_text(body)) for body in server.bodies[sent_first_run:]}
    assert resent.isdisjoint(saved_before) and resent | saved_before == set(counts)
