"""LLMClient against the local OpenAI-compatible stub: request shape, retries, errors, concurrency."""

import asyncio
import email.utils
import socket
import threading

import pytest

from longbench100.llm.client import LLMClient, error_reason, parse_retry_after
from tests.support.openai_stub import DROP, OpenAIStub, prompt_text


def _run(coro):
    return asyncio.run(coro)


async def _complete(base_url: str, prompt: str = "hello there", *, max_tokens: int = 16, **kwargs):
    kwargs.setdefault("backoff_base_s", 0.001)
    async with LLMClient(base_url, "m", **kwargs) as client:
        return await client.complete(prompt, max_tokens=max_tokens)


def test_chat_request_and_answer():
    with OpenAIStub(lambda body: "four words of answer") as server:
        result = _run(_complete(server.base_url, "one two three", max_tokens=9, api_key="sk-test"))
    assert result.text == "four words of answer"
    assert (result.finish_reason, result.prompt_tokens, result.completion_tokens) == ("stop", 3, 4)
    assert result.attempts == 1 and result.error is None and result.latency_s >= 0
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "m",
        "max_tokens": 9,
        "temperature": 0.0,
        "messages": [{"role": "user", "content": "one two three"}],
    }


def test_completion_mode_and_length_finish():
    with OpenAIStub(lambda body: "a b c d e") as server:
        result = _run(_complete(server.base_url, "p", max_tokens=2, mode="completion"))
    assert (result.text, result.finish_reason, result.completion_tokens) == ("a b", "length", 2)
    (request,) = server.requests
    assert request.path == "/v1/completions" and request.body["prompt"] == "p"
    assert "authorization" not in request.headers


def _fail_first(n: int, status: int, headers: dict | None = None):
    lock, seen = threading.Lock(), []

    def responder(body):
        with lock:
            seen.append(1)
            if len(seen) <= n:
                return (status, {"error": {"message": f"try again {len(seen)}"}}, headers or {})
        return "ok"

    return responder


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retries_transient_status_then_succeeds(status):
    with OpenAIStub(_fail_first(2, status)) as server:
        result = _run(_complete(server.base_url))
    assert result.text == "ok" and result.attempts == 3 and result.error is None
    assert len(server.requests) == 3


def test_retry_after_is_honoured():
    # Retry-After: 0 means "now", so the backoff base (an hour) must not be used.
    with OpenAIStub(_fail_first(1, 429, {"Retry-After": "0"})) as server:
        result = _run(_complete(server.base_url, backoff_base_s=3600.0))
    assert result.text == "ok" and result.attempts == 2


def test_gives_up_after_max_retries():
    with OpenAIStub(lambda body: (500, {"error": {"message": "boom"}})) as server:
        result = _run(_complete(server.base_url, max_retries=3))
    assert result.text is None and result.attempts == 4 and len(server.requests) == 4
    assert result.error == "HTTP 500: boom (gave up after 4 attempts)"
    assert error_reason(result.error) == "HTTP 500"


def test_context_overflow_is_not_retried():
    message = (
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    )

    def responder(body):
        if len(prompt_text(body).split()) > 5:
            return 400, {
                "object": "error",
                "message": message,
                "type": "BadRequestError",
                "code": 400,
            }
        return "fits"

    with OpenAIStub(responder) as server:
        long = _run(_complete(server.base_url, "w " * 10))
        short = _run(_complete(server.base_url, "w"))
    assert long.text is None and long.attempts == 1 and long.error == f"HTTP 400: {message}"
    assert short.text == "fits"
    assert len(server.requests) == 2


def test_dropped_connection_is_retried():
    lock, seen = threading.Lock(), []

    def responder(body):
        with lock:
            seen.append(1)
            return DROP if len(seen) == 1 else "back"

    with OpenAIStub(responder) as server:
        result = _run(_complete(server.base_url))
    assert result.text == "back" and result.attempts == 2


def test_connection_refused_gives_up_with_reason():
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = _run(_complete(f"http://127.0.0.1:{port}/v1", max_retries=2))
    assert result.text is None and result.attempts == 3
    assert error_reason(result.error) == "ConnectError"


def test_bad_url_scheme_is_not_retried():
    result = _run(_complete("ftp://127.0.0.1:1/v1"))
    assert result.text is None and result.attempts == 1
    assert error_reason(result.error) == "UnsupportedProtocol"


def test_timeout_is_retried_then_reported():
    release = threading.Event()

    def responder(body):
        release.wait(30)
        return "late"

    with OpenAIStub(responder) as server:
        try:
            result = _run(_complete(server.base_url, timeout_s=0.2, max_retries=1))
        finally:
            release.set()
    assert result.text is None and result.attempts == 2
    # no first byte: whichever bound ends first
    assert error_reason(result.error) in ("ReadTimeout", "TotalTimeout")


def test_malformed_success_body_is_an_error():
    with OpenAIStub(lambda body: (200, {"choices": []})) as server:
        result = _run(_complete(server.base_url))
    assert result.text is None and result.attempts == 1
    assert error_reason(result.error) == "bad response"


def test_null_chat_content_is_empty_text():
    answer = {
        "choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "length"}]
    }
    with OpenAIStub(lambda body: (200, answer)) as server:
        result = _run(_complete(server.base_url))
    assert result.text == "" and result.finish_reason == "length" and result.prompt_tokens is None


def test_concurrency_is_bounded_and_used():
    # The responder lets requests through only in groups of 3, so with a limit of 3 every group
    # fills up (peak == 3) and a client allowing more would show a higher peak.
    barrier = threading.Barrier(3, timeout=30)

    def responder(body):
        barrier.wait()
        return prompt_text(body)

    async def main(base_url):
        async with LLMClient(base_url, "m", concurrency=3) as client:
            return await asyncio.gather(
                *(client.complete(f"p{i}", max_tokens=4) for i in range(21))
            )

    with OpenAIStub(responder) as server:
        results = _run(main(server.base_url))
    assert [r.text for r in results] == [f"p{i}" for i in range(21)]
    assert server.peak_concurrency == 3


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("2", 2.0),
        ("0.5", 0.5),
        ("-3", 0.0),
        ("1e9", 300.0),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
    ],
)
def test_parse_retry_after(value, expected):
    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2015 07:28:00 GMT").timestamp()
    assert parse_retry_after(value, now=now) == expected


def test_bad_arguments():
    with pytest.raises(ValueError):
        LLMClient("http://127.0.0.1:1/v1", "m", mode="embeddings")
