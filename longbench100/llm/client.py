"""An asynchronous client for OpenAI-compatible servers (vLLM, SGLang, hosted APIs).

One :class:`LLMClient` sends prompts to ``{base_url}/chat/completions`` (one user message, after an
optional system message) or ``{base_url}/completions``, with at most ``concurrency`` requests in
flight. Transient failures (HTTP 408/409/425/429, any 5xx, connection errors, timeouts) are retried
with exponential backoff and full jitter, honouring ``Retry-After``; other 4xx answers (for example
HTTP 400 when the prompt does not fit the model's context) fail at once. :meth:`LLMClient.complete`
never raises for HTTP or network failures: it returns a :class:`CompletionResult` whose ``error`` says what went wrong.

Every request is bounded three ways: connecting (:data:`CONNECT_TIMEOUT_S` at most), waiting for
each byte of the answer, the first included (``timeout_s``), and the whole request (``timeout_s``
again, as a deadline that a server trickling its answer one byte at a time cannot stretch).
Before real work, :func:`send_test_request` sends one one-token prompt with a short deadline and no
retry after a time-out, so a hung or trickling server is told within seconds, not minutes.

Error texts start with a short reason followed by a colon (``HTTP 400: ...``, ``ConnectError: ...``,
``bad response: ...``, ``HTML reply: ...``); :func:`error_reason` extracts it, for summaries that
count failures by reason.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import random
import ssl
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from longbench100.core.errors import UserError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
RATE_LIMITED = frozenset(
    f"HTTP {status}" for status in RETRYABLE_STATUS
)  # busy, not broken: never stops a run early
MAX_BACKOFF_S = 60.0
MAX_RETRY_AFTER_S = 300.0
_MESSAGE_LIMIT = 500
CONNECT_TIMEOUT_S = 10.0
"""The longest wait for a connection to open (a dropped SYN, a firewall), whatever the request's
time-out."""
PROBE_TIMEOUT_S = 10.0
"""The whole ``GET /models`` server check, answer included: a server that accepts the connection and
never answers is reported after this, not after the long time-out a completion may need."""
TEST_REQUEST_TIMEOUT_S = 20.0
"""The whole one-token test request sent before real work, answer included, never retried on a
time-out: a server that lists its models but never answers a completion is reported after this."""
TEST_PROMPT = "Reply with the single word OK."
TOTAL_TIMEOUT = "TotalTimeout"
"""The reason of a request that got no complete answer before its deadline (a hung or trickling
server)."""


@dataclass
class CompletionResult:
    """The outcome of one prompt.

    ``text`` is the model's answer, or ``None`` when the request failed for good (then ``error`` holds
    the reason and the server's message). An answer whose content the server sent as ``null`` or ``""``
    (e.g. a reasoning model that spent ``max_tokens`` on its reasoning) is a success with ``text`` ``""``
    and the server's ``finish_reason``; callers that care (``predict`` counts them) check for it.
    Token counts are the server's ``usage`` figures (``None`` when it reports none). ``latency_s`` is
    the duration of the last attempt, from sending the request to reading the whole answer (backoff
    sleeps and waiting for a concurrency slot are excluded);
    ``attempts`` counts every request sent, retries included.
    """

    text: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    attempts: int
    error: str | None
    logprobs: list[dict] | None = None
    """The answer's tokens with their log-probabilities and alternatives (``choices[0].logprobs.content``), when
    they were asked for and the server sent them."""


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """Return one verifying SSL context for the whole process (loading the CA bundle takes ~0.1 s)."""
    return httpx.create_ssl_context()


def error_reason(error: str) -> str:
    """Return the reason part of an error text: ``"HTTP 400"`` for ``"HTTP 400: context too long"``."""
    return error.split(":", 1)[0].strip()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Return the delay in seconds that a ``Retry-After`` header asks for, or ``None`` if absent or unreadable.

    Accepts delta-seconds (``"3"``, ``"0.5"``) and HTTP dates; the result is clamped to
    ``[0, MAX_RETRY_AFTER_S]``.
    """
    if value is None or not value.strip():
        return None
    try:
        delay = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        delay = moment.timestamp() - (time.time() if now is None else now)
    if delay != delay:  # NaN
        return None
    return min(max(delay, 0.0), MAX_RETRY_AFTER_S)


def _server_message(response: httpx.Response) -> str:
    """Return the error message an OpenAI-compatible server put in its answer (``error.message``), else its text."""
    try:
        data = response.json()
    except ValueError:
        data = None
    message = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message")
        elif isinstance(error, str):
            message = error
        message = message or data.get("message") or data.get("detail")
    text = str(message) if message else response.text.strip()
    text = " ".join(text.split())
    return text[:_MESSAGE_LIMIT] or response.reason_phrase or "no message"


def _timeouts(timeout_s: float) -> httpx.Timeout:
    """Connect within :data:`CONNECT_TIMEOUT_S` (or ``timeout_s`` when shorter); every other wait
    within ``timeout_s``."""
    return httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S))


def get_models(
    base_url: str, api_key: str | None, timeout_s: float | None = None
) -> httpx.Response:
    """``GET {base_url}/models`` with the key as a bearer token, the whole answer within
    ``timeout_s`` (default :data:`PROBE_TIMEOUT_S`; httpx errors propagate to the caller, a trickle
    past the deadline is an ``httpx.ReadTimeout``)."""
    timeout_s = PROBE_TIMEOUT_S if timeout_s is None else timeout_s
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=_timeouts(timeout_s), verify=shared_ssl_context()) as client:
        with client.stream("GET", base_url.rstrip("/") + "/models", headers=headers) as response:
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(
                        f"no complete answer within {timeout_s:g} s", request=response.request
                    )
    kept = {
        key: value
        for key, value in response.headers.items()
        if key.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    }
    return httpx.Response(
        response.status_code, headers=kept, content=body, request=response.request
    )


def is_hung(error: Exception) -> bool:
    """Whether a failed request reached the server but got no complete answer in time (not a failed
    connect)."""
    return isinstance(error, httpx.TimeoutException) and not isinstance(error, httpx.ConnectTimeout)


def hung_server(who: str, base_url: str) -> UserError:
    """The one-line error for a server that accepts connections but does not answer ``GET /models``
    in time."""
    return UserError(
        f"{who} at {base_url} accepted the connection but gave no complete answer to "
        f"GET /models in time ({PROBE_TIMEOUT_S:g} s): is it hung, or busy with an "
        "earlier request? check it, then rerun"
    )


def refuse_hung_server(base_url: str, model: str, api_key: str | None, who: str) -> None:
    """Before slow work: refuse a server that accepts connections but does not answer
    ``GET /models`` (:func:`hung_server`) or a one-token test request (:func:`send_test_request`);
    any other outcome, an unreachable server included, is left to the full check that comes
    later."""
    try:
        get_models(base_url, api_key)
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        if is_hung(error):
            raise hung_server(who, base_url) from None
        return
    send_test_request(base_url, model, api_key, who)


def is_timeout(error: str) -> bool:
    """Whether a failed request's error says the server gave no (complete) answer in time."""
    return error_reason(error) in (TOTAL_TIMEOUT, "ReadTimeout", "WriteTimeout", "PoolTimeout")


async def _ask_once(client_args: dict, mode: str, extras: RequestExtras) -> CompletionResult:
    """Send :data:`TEST_PROMPT` for one token, within :data:`TEST_REQUEST_TIMEOUT_S` in all."""
    async with LLMClient(
        **client_args,
        mode=mode,
        extras=extras,
        concurrency=1,
        timeout_s=TEST_REQUEST_TIMEOUT_S,
        max_retries=1,
        backoff_base_s=0.5,
        retry_timeouts=False,
    ) as client:
        return await client.complete(TEST_PROMPT, max_tokens=1, temperature=0.0)


def send_test_request(
    base_url: str,
    model: str,
    api_key: str | None,
    who: str,
    *,
    mode: str = "chat",
    extras: RequestExtras | None = None,
) -> CompletionResult:
    """Before real work: send one one-token test request, telling on stderr what is waited for, and
    raise the one-line :class:`UserError` when the server gives no complete answer within
    :data:`TEST_REQUEST_TIMEOUT_S` (a hung or trickling server; never retried). Any other outcome is
    returned for the caller to judge."""
    print(
        f"{who}: one-token test request to {base_url} (up to {TEST_REQUEST_TIMEOUT_S:g} s)",
        file=sys.stderr,
        flush=True,
    )
    client_args = {"base_url": base_url, "model": model, "api_key": api_key}
    result = asyncio.run(_ask_once(client_args, mode, extras or RequestExtras()))
    if result.error is not None and is_timeout(result.error):
        raise UserError(
            f"{who} at {base_url} accepted the connection but gave no complete "
            f"answer to a one-token test request within {TEST_REQUEST_TIMEOUT_S:g} s: "
            "is it hung, or busy with an earlier request? check it, then rerun"
        )
    return result


def served_model_ids(response: httpx.Response) -> list[str] | None:
    """The model ids a ``/models`` answer lists, or ``None`` when it is not the OpenAI list shape."""
    try:
        return [str(entry["id"]) for entry in response.json()["data"]]
    except (ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class RequestExtras:
    """Request fields beyond model, prompt, ``max_tokens`` and ``temperature``, sent with every prompt.

    ``system_prompt`` (chat mode only) becomes a system message before the user message; ``top_p``
    and ``stop`` are sent when set; ``extra_body`` is merged into the body last (its keys must not be
    ones the client sets itself, see :data:`OWN_KEYS`).
    """

    system_prompt: str | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    extra_body: dict[str, Any] = field(default_factory=dict)

    def apply(self, body: dict) -> dict:
        """Return ``body`` with these fields added (a system message goes first in ``messages``)."""
        if self.system_prompt is not None:
            body["messages"] = [
                {"role": "system", "content": self.system_prompt},
                *body["messages"],
            ]
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if self.stop:
            body["stop"] = list(self.stop)
        return {**body, **self.extra_body}


OWN_KEYS = frozenset({"model", "messages", "prompt", "max_tokens", "temperature", "top_p", "stop"})
"""Request-body keys the client sets itself (from its own settings), which ``extra_body`` may not override."""


class ClientSettings(Protocol):
    """What a run's config carries about its endpoint (the predictor's and the judge's configs both do)."""

    @property
    def base_url(self) -> str:
        """The server's OpenAI-compatible base URL."""

    @property
    def model(self) -> str:
        """The model name sent with each request."""

    @property
    def api_key(self) -> str | None:
        """The API key (``None``: none sent)."""

    @property
    def concurrency(self) -> int:
        """Requests in flight at once."""

    @property
    def timeout_s(self) -> float:
        """Seconds one request may take."""

    @property
    def max_retries(self) -> int:
        """Retries of a failed request."""

    @property
    def backoff_base_s(self) -> float:
        """The base of the exponential wait before each retry."""


BROKEN_AFTER = 5
"""Attempts that all failed in the same way, before the server ever answered, that mean it is broken."""


class ServerBroken(UserError):
    """The server failed every attempt so far in the same way: retrying each request would only cost time.

    ``error`` is that repeated error."""

    def __init__(self, message: str, error: str) -> None:
        super().__init__(message)
        self.error = error


class LLMClient:
    """Send prompts to one model on an OpenAI-compatible server, with bounded concurrency and retries.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8000/v1``. ``mode`` is ``"chat"`` (the
    server applies the model's chat template to one user message) or ``"completion"`` (the prompt is
    sent verbatim). ``extras`` adds a system prompt, ``top_p``, ``stop`` or other body fields to every
    request (a system prompt needs chat mode). A request is tried at most ``max_retries + 1`` times;
    retry ``n`` (from 0) waits a random time in ``[0, min(60, backoff_base_s * 2**n)]`` unless the
    server sent ``Retry-After``.
    Use as ``async with LLMClient(...) as client`` or call :meth:`aclose` when done.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        mode: str = "chat",
        concurrency: int = 8,
        timeout_s: float = 600.0,
        max_retries: int = 6,
        backoff_base_s: float = 1.0,
        extras: RequestExtras = RequestExtras(),
        retry_unreachable: bool = True,
        retry_timeouts: bool = True,
    ) -> None:
        if mode not in ("chat", "completion"):
            raise ValueError(f"mode must be 'chat' or 'completion', not {mode!r}")
        if extras.system_prompt is not None and mode != "chat":
            raise ValueError("a system prompt needs chat mode")
        if OWN_KEYS & set(extras.extra_body):
            raise ValueError(
                f"extra_body may not set {', '.join(sorted(OWN_KEYS & set(extras.extra_body)))}"
            )
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.model = model
        self.mode = mode
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.extras = extras
        self.timeout_s = timeout_s
        self.retry_unreachable = retry_unreachable  # False: a refused connection fails at once (another server can take it)
        self.retry_timeouts = retry_timeouts  # False: no answer in time fails at once
        self.url = base_url.rstrip("/") + (
            "/chat/completions" if mode == "chat" else "/completions"
        )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._semaphore = asyncio.Semaphore(concurrency)
        self._answered = False  # whether any attempt got a 200 answer
        self._early_errors: list[str] = []  # the errors of the attempts made before that
        self._http = httpx.AsyncClient(
            headers=headers,
            verify=shared_ssl_context(),
            timeout=_timeouts(timeout_s),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )

    @classmethod
    def from_settings(
        cls,
        settings: ClientSettings,
        *,
        mode: str = "chat",
        extras: RequestExtras = RequestExtras(),
        retry_unreachable: bool = True,
    ) -> LLMClient:
        """A client for the endpoint, model, key, concurrency, timeout and retry settings of a run's config."""
        return cls(
            settings.base_url,
            settings.model,
            settings.api_key,
            mode=mode,
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            backoff_base_s=settings.backoff_base_s,
            extras=extras,
            retry_unreachable=retry_unreachable,
        )

    async def __aenter__(self) -> LLMClient:
        """Return the client itself."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the connection pool."""
        await self.aclose()

    async def aclose(self) -> None:
        """Close the underlying connection pool; the client cannot be used afterwards."""
        await self._http.aclose()

    def _body(
        self, prompt: str, max_tokens: int, temperature: float, top_logprobs: int | None = None
    ) -> dict:
        """Return the JSON request body for one prompt (asking for token log-probabilities with ``top_logprobs``)."""
        body: dict = {"model": self.model, "max_tokens": max_tokens, "temperature": temperature}
        if top_logprobs and self.mode == "chat":
            body.update(logprobs=True, top_logprobs=top_logprobs)
        if self.mode == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        return self.extras.apply(body)

    def _parse(self, response: httpx.Response, latency_s: float, attempts: int) -> CompletionResult:
        """Turn a 200 answer into a result; a body without a usable first choice becomes an error result."""
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") if self.mode == "chat" else choice["text"]
            finish_reason = choice.get("finish_reason")
            usage = data.get("usage") or {}
            logprobs = (
                (choice.get("logprobs") or {}).get("content")
                if isinstance(choice.get("logprobs"), dict)
                else None
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            snippet = " ".join(response.text.split())[:200]
            if snippet.startswith(
                "<"
            ):  # a web page (a proxy, a login wall, the wrong port), not an API answer
                return self._failure(f"HTML reply: {snippet!r}", latency_s, attempts)
            return self._failure(
                f"bad response: {type(exc).__name__} reading {snippet!r}", latency_s, attempts
            )
        return CompletionResult(
            text="" if text is None else str(text),
            finish_reason=finish_reason,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency_s=latency_s,
            attempts=attempts,
            error=None,
            logprobs=logprobs if isinstance(logprobs, list) else None,
        )

    @staticmethod
    def _failure(error: str, latency_s: float, attempts: int) -> CompletionResult:
        """Return a failed-for-good result."""
        return CompletionResult(None, None, None, None, latency_s, attempts, error)

    def _check_broken(self, error: str) -> None:
        """Stop early (:class:`ServerBroken`) when the first :data:`BROKEN_AFTER` attempts, before any answer,
        all failed with the same error: a server that answers 500 to everything would otherwise cost every
        request its full retries. A request-specific failure (a prompt too long) differs from one prompt
        to the next and does not stop anything; neither does any failure once the server has answered,
        nor a rate limit (429 and the like, or any answer with Retry-After: the caller is asked to wait)."""
        if self._answered:
            return
        self._early_errors.append(error)
        if len(self._early_errors) >= BROKEN_AFTER and len(set(self._early_errors)) == 1:
            raise ServerBroken(
                f"the server at {self.url} failed the first {len(self._early_errors)} attempts the same "
                f"way ({error}); stopped instead of retrying every request: check the server and the "
                "model name, then rerun the same command (finished work is kept)",
                error,
            )

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        """Return how long to wait before retry number ``retry`` (0-based): Retry-After, else full jitter."""
        if retry_after is not None:
            return retry_after
        return random.uniform(0.0, min(MAX_BACKOFF_S, self.backoff_base_s * 2**retry))

    async def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float = 0.0,
        top_logprobs: int | None = None,
        frequency_penalty: float = 0.0,
    ) -> CompletionResult:
        """Send one prompt and return the answer, or a result with ``error`` set if it failed for good
        (``top_logprobs``: ask for that many alternatives per answer token, in chat mode; ``frequency_penalty``:
        OpenAI's, sent only when not 0)."""
        body = self._body(prompt, max_tokens, temperature, top_logprobs)
        if frequency_penalty:
            body["frequency_penalty"] = frequency_penalty
        attempts = 0
        while True:
            attempts += 1
            retry_after: float | None = None
            async with self._semaphore:
                started = time.perf_counter()
                try:
                    request = self._http.post(self.url, json=body)
                    response = await asyncio.wait_for(request, self.timeout_s)
                except asyncio.TimeoutError:  # no whole answer in time (a trickle resets httpx's)
                    error = f"{TOTAL_TIMEOUT}: no complete answer within {self.timeout_s:g} s"
                    retryable = self.retry_timeouts
                except (
                    httpx.TransportError
                ) as exc:  # connection errors and timeouts, but not a bad URL scheme
                    error = f"{type(exc).__name__}: {str(exc) or 'no detail'}"
                    unreachable = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
                    retryable = not isinstance(exc, httpx.UnsupportedProtocol) and (
                        self.retry_unreachable or not unreachable
                    )
                    retryable = retryable and (self.retry_timeouts or not is_hung(exc))
                except (httpx.HTTPError, httpx.InvalidURL) as exc:  # retrying cannot help
                    error = f"{type(exc).__name__}: {str(exc) or 'no detail'}"
                    retryable = False
                else:
                    latency_s = time.perf_counter() - started
                    if response.status_code == 200:
                        self._answered = True
                        return self._parse(response, latency_s, attempts)
                    error = f"HTTP {response.status_code}: {_server_message(response)}"
                    retryable = (
                        response.status_code in RETRYABLE_STATUS or response.status_code >= 500
                    )
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
            latency_s = time.perf_counter() - started
            if not (retry_after is not None or error.split(":")[0] in RATE_LIMITED):
                self._check_broken(error)
            if not retryable:
                return self._failure(error, latency_s, attempts)
            if attempts > self.max_retries:
                return self._failure(
                    f"{error} (gave up after {attempts} attempts)", latency_s, attempts
                )
            await asyncio.sleep(self._backoff(attempts - 1, retry_after))
