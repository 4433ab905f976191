"""A fake OpenAI-compatible server for tests: real HTTP on 127.0.0.1, behaviour set by a Python callable.

Import it from any test as ``from tests.support.openai_stub import OpenAIStub`` (``tests/`` is a package,
so pytest puts the repository root on ``sys.path``)::

    def responder(body: dict):
        if "too long" in prompt_text(body):
            return 400, {"error": {"message": "context length exceeded", "type": "BadRequestError"}}
        return "the answer"

    with OpenAIStub(responder) as server:
        client = LLMClient(server.base_url, model="stub")   # base_url ends in /v1
        ...
        assert server.peak_concurrency <= 8
        assert server.bodies[0]["max_tokens"] == 32

The server answers ``POST /v1/chat/completions`` and ``POST /v1/completions``, and ``GET /v1/models``
lists the one model named ``model`` (``"stub-model"`` unless given; set ``list_models`` to False for a
server without that route). For every POST request it
calls ``responder(body)`` with the parsed JSON body, in the request's own thread (so a responder may
``time.sleep`` or wait on a ``threading.Event`` to delay its answer). The responder returns:

- a ``str``: a successful answer with that text, realistic ``usage`` (whitespace-separated words
  count as tokens) and ``finish_reason`` ``"stop"``, or ``"length"`` when the text has more words than
  ``max_tokens`` (the text is then cut to ``max_tokens`` words);
- ``(status_code, json_body)`` or ``(status_code, json_body, headers)``: that HTTP answer verbatim,
  e.g. ``(429, {...}, {"Retry-After": "0"})``; a ``str`` body is sent as it is, as ``text/html`` unless
  the headers name another ``Content-Type`` (a web page, or a body that is not valid JSON);
- :data:`DROP`: the connection is closed without an answer (the client sees a connection error).

Every request is recorded in :attr:`OpenAIStub.requests` before the responder runs;
:attr:`OpenAIStub.peak_concurrency` is the largest number of requests that were being handled at once.
Run ``python -m tests.support.openai_stub --port 8000`` for a standalone server that answers instantly.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

from longbench100.llm.client import TEST_PROMPT

DROP = object()
"""Return this from a responder to close the connection without answering."""

Reply = Union[str, tuple[int, dict], tuple[int, dict, dict], object]
Responder = Callable[[dict], Reply]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the stub received: URL path, headers (lower-case names) and parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict


def prompt_text(body: dict) -> str:
    """Return the prompt of a request body: ``prompt`` for completions, the joined message contents for chat."""
    if "messages" in body:
        return "\n".join(str(message.get("content", "")) for message in body["messages"])
    return str(body.get("prompt", ""))


def _is_test_request(body: dict) -> bool:
    """Whether a request is the one-token test request sent before real work."""
    return prompt_text(body).endswith(TEST_PROMPT) and body.get("max_tokens") == 1


def default_responder(body: dict) -> Reply:
    """Answer every request with ``"stub answer"``."""
    return "stub answer"


class _Server(ThreadingHTTPServer):
    """The threaded server, quiet about clients that hung up (a timed-out or killed client is normal here)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore connection resets and broken pipes; report anything else as usual."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class OpenAIStub:
    """A threaded HTTP server on 127.0.0.1 speaking the OpenAI completions protocol.

    ``port`` 0 (the default) picks a free port. Use it as a context manager: the server starts on
    entry and stops on exit. :attr:`base_url` is ``http://127.0.0.1:<port>/v1``.
    """

    def __init__(
        self,
        responder: Responder = default_responder,
        model: str = "stub-model",
        port: int = 0,
        answer_test_requests: bool = True,
    ) -> None:
        self.responder = responder
        self.model = model
        self.list_models = True
        self.answer_test_requests = answer_test_requests
        """Answer the one-token test request a command sends before its work ``"OK"`` at once,
        without the responder and without recording it in :attr:`requests` (it goes to
        :attr:`test_bodies`); False: treat it as any other request."""
        self.test_bodies: list[dict] = []
        self.requests: list[RecordedRequest] = []
        self.peak_concurrency = 0
        self._active = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _make_handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="openai-stub",
            daemon=True,
        )

    @property
    def base_url(self) -> str:
        """The API root to give a client, ending in ``/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def bodies(self) -> list[dict]:
        """The JSON bodies of all requests received so far, in arrival order."""
        with self._lock:
            return [request.body for request in self.requests]

    def __enter__(self) -> OpenAIStub:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop serving (see :meth:`stop`)."""
        self.stop()

    def stop(self) -> None:
        """Stop accepting connections and close the listening socket; later connects are refused.

        Safe to call twice, and from inside a responder (to simulate a server that goes away mid-run):
        requests already being handled still finish.
        """
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _enter_request(self, request: RecordedRequest) -> None:
        """Record a request and count it as in flight."""
        with self._lock:
            self.requests.append(request)
            self._active += 1
            self.peak_concurrency = max(self.peak_concurrency, self._active)

    def _leave_request(self) -> None:
        """Count a request as finished."""
        with self._lock:
            self._active -= 1

    def success_body(self, body: dict, text: str, chat: bool) -> dict:
        """Return an OpenAI-style success body for ``text`` answering ``body``."""
        words = text.split()
        max_tokens = body.get("max_tokens")
        finish_reason = "stop"
        if isinstance(max_tokens, int) and len(words) > max_tokens:
            text, finish_reason = " ".join(words[:max_tokens]), "length"
        prompt_tokens = len(prompt_text(body).split())
        completion_tokens = len(text.split())
        choice: dict[str, Any] = {"index": 0, "finish_reason": finish_reason}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        return {
            "id": f"stub-{len(self.requests)}",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _make_handler(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    """Return a request-handler class bound to ``stub``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
        disable_nagle_algorithm = (
            True  # headers and body go out in two writes: avoid the 40 ms delayed-ACK stall
        )

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            """Stay quiet."""

        def _send(self, status: int, body: dict | str, headers: dict | None = None) -> None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            headers = {
                "Content-Type": "text/html" if isinstance(body, str) else "application/json",
                **(headers or {}),
            }
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, str(value))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            if stub.list_models and self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": stub.model, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFound"}})

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            chat = self.path.rstrip("/") == "/v1/chat/completions"
            if not chat and self.path.rstrip("/") != "/v1/completions":
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFound"}})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(
                    400, {"error": {"message": "body is not JSON", "type": "BadRequestError"}}
                )
                return
            if stub.answer_test_requests and _is_test_request(body):
                stub.test_bodies.append(body)
                self._send(200, stub.success_body(body, "OK", chat))
                return
            stub._enter_request(
                RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            try:
                reply = stub.responder(body)
            finally:
                stub._leave_request()
            if reply is DROP:
                self.close_connection = True
                return
            if isinstance(reply, str):
                self._send(200, stub.success_body(body, reply, chat))
            else:
                self._send(*reply)

    return Handler


def main() -> None:
    """Serve the stub standalone (instant ``"stub answer"`` replies) until interrupted."""
    parser = argparse.ArgumentParser(
        description="A fake OpenAI-compatible server answering instantly."
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free port)"
    )
    with OpenAIStub(port=parser.parse_args().port) as stub:
        print(f"serving on {stub.base_url}", flush=True)
        try:
            stub._thread.join()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
