"""No wait without end: a server that accepts connections and never answers, or trickles its answer
one byte at a time, is reported in one line within the server check's time (predict, judge,
annotator, coverage evaluator), and no single request outlives its time-out.

The servers are raw sockets on 127.0.0.1; the checks run with short time-outs so the tests stay
fast, and each asserts an upper bound on the time the command took.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.llm import client as llm_client
from longbench100.llm.client import (
    CONNECT_TIMEOUT_S,
    PROBE_TIMEOUT_S,
    TEST_REQUEST_TIMEOUT_S,
    LLMClient,
)
from tests.support.generate_helpers import generate_from_demo

PROBE_S = 1.0  # the server check's time-out in these tests (PROBE_TIMEOUT_S in real runs)
TEST_S = 1.5  # the test request's deadline in these tests (TEST_REQUEST_TIMEOUT_S in real runs)


class SilentServer:
    """Accepts connections on 127.0.0.1 and then, per ``mode``: ``"hung"`` never answers;
    ``"trickle"`` sends an HTTP 200 head and then its body one byte every ``interval`` seconds;
    ``"hangpost"`` and ``"tricklepost"`` answer ``GET /models`` at once and do the same to a POST."""

    def __init__(self, mode: str, interval: float = 0.2) -> None:
        self.mode, self.interval = mode, interval
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self.base_url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> SilentServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._listener.close()
        for connection in self._held:
            connection.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            request = connection.recv(65536)
        except OSError:
            return
        if self.mode.endswith("post") and request.startswith(b"GET"):
            body = json.dumps({"data": [{"id": "m"}]}).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            connection.sendall(head.encode() + body)
            connection.close()
        elif self.mode.startswith("trickle"):
            self._trickle(connection)

    def _trickle(self, connection: socket.socket) -> None:
        body = json.dumps({"data": [{"id": "m"}], "padding": "x" * 2000}).encode()
        try:
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            for byte in body:
                if self._stop.wait(self.interval):
                    return
                connection.sendall(bytes([byte]))
        except OSError:
            return


@pytest.fixture
def short_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_client, "PROBE_TIMEOUT_S", PROBE_S)
    monkeypatch.setattr(llm_client, "TEST_REQUEST_TIMEOUT_S", TEST_S)


def test_the_real_bounds_report_a_hung_server_within_30_seconds():
    assert PROBE_TIMEOUT_S + CONNECT_TIMEOUT_S <= 30
    assert TEST_REQUEST_TIMEOUT_S <= 30  # a server that lists its models at once, then hangs


@pytest.mark.parametrize("mode", ["hangpost", "tricklepost"])
def test_the_test_request_is_not_retried_after_a_time_out(mode: str, short_probe):
    with SilentServer(mode) as server:
        started = time.monotonic()
        with pytest.raises(UserError, match="no complete answer to a one-token test request"):
            llm_client.send_test_request(server.base_url, "m", None, "the server")
    assert time.monotonic() - started < 2 * TEST_S


@pytest.mark.parametrize("mode", ["hung", "trickle"])
def test_one_request_never_outlives_its_time_out(mode: str):
    async def ask(url: str):
        async with LLMClient(url, "m", timeout_s=1.0, max_retries=0) as client:
            return await client.complete("hello", max_tokens=4)

    with SilentServer(mode) as server:
        started = time.monotonic()
        result = asyncio.run(ask(server.base_url))
    assert time.monotonic() - started < 4 and result.text is None
    assert result.error.startswith(("TotalTimeout", "ReadTimeout")), result.error


@pytest.mark.parametrize("mode", ["hung", "trickle"])
def test_the_models_check_is_bounded_as_a_whole(mode: str, short_probe):
    import httpx

    with SilentServer(mode) as server:
        started = time.monotonic()
        with pytest.raises(httpx.TimeoutException):
            llm_client.get_models(server.base_url, None)
    assert time.monotonic() - started < PROBE_S + 3


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hung") / "data"
    generate_from_demo(out, ("single_doc_qa",), (("2k", 2048),), rows=1)
    return out


def _predictions(data: Path, folder: Path) -> Path:
    for path in data.glob("*/*.jsonl"):
        target = folder / path.relative_to(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        target.write_text(
            "".join(
                json.dumps({"id": r["id"], "prediction": "x", "closed_book_prediction": "y"}) + "\n"
                for r in rows
            )
        )
    return folder


COMMANDS = {
    "predict": lambda d, t, url: [
        "predict",
        "--data",
        d,
        "--model",
        "m",
        "--base-url",
        url,
        "--out",
        t / "p",
    ],
    "score --judge-model": lambda d, t, url: [
        "score",
        "--data",
        d,
        "--predictions",
        _predictions(d, t / "preds"),
        "--judge-model",
        "m",
        "--judge-base-url",
        url,
        "--out",
        t / "r.json",
    ],
    "coverage --evaluator-model": lambda d, t, url: [
        "coverage",
        "--data",
        d,
        "--evaluator-model",
        "m",
        "--evaluator-base-url",
        url,
    ],
    "generate --annotator-model": lambda d, t, url: [
        "generate",
        "--suite",
        "ethic",
        "--tasks",
        "recalling",
        "--sources",
        "demo",
        "--lengths",
        "8k",
        "--rows",
        "1",
        "--out",
        t / "g",
        "--annotator-model",
        "m",
        "--annotator-base-url",
        url,
    ],
}


@pytest.mark.parametrize("mode", ["hung", "trickle", "hangpost", "tricklepost"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_hung_server_is_one_line_within_the_check(
    data: Path,
    tmp_path: Path,
    command: str,
    mode: str,
    short_probe,
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    with SilentServer(mode) as server:
        started = time.monotonic()
        result = CliRunner().invoke(
            main, [str(arg) for arg in COMMANDS[command](data, tmp_path, server.base_url)]
        )
        elapsed = time.monotonic() - started
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, (
        result.output
    )
    asked = "GET /models" if mode in ("hung", "trickle") else "a one-token test request"
    assert f"accepted the connection but gave no complete answer to {asked}" in errors[0], errors[0]
    assert elapsed < PROBE_S + TEST_S + 15, elapsed  # the checks' time, plus loading a tokenizer
    assert not (tmp_path / "g").exists() and not (tmp_path / "r.json").exists()
