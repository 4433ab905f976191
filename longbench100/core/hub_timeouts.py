"""Time limits on the hub's connections: a hub that does not answer, or sends too slowly, stops the
request within :func:`wait_limit` seconds instead of leaving the user in silence.

huggingface_hub passes no time-out on some requests (its file listings) and retries a request that
timed out with a longer one. The shared HTTP client it makes is given a network layer
(:func:`install`) that, while a request is guarded (:func:`guarded`), bounds

* the connection: ``wait_limit()`` seconds at most (a shorter time-out of the client stays);
* the pace: each waiting window of a request (``wait_limit()`` seconds, or the client's own shorter
  read time-out) must bring :data:`SLOWEST_RATE` bytes per second, so an answer that never comes,
  stalls, or trickles (headers or body) stops at the end of a window.

A request over a limit raises :class:`HubSilent`, which huggingface_hub does not retry. Requests
made outside :func:`guarded` are left as the client makes them.
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from longbench100.core.errors import UserError

WAIT_ENV = "LONGBENCH100_HUB_TIMEOUT"
DEFAULT_WAIT_S = 20.0
SLOWEST_RATE = 1000  # bytes per second a guarded answer must average over each waiting window

_GUARDED: contextvars.ContextVar[bool] = contextvars.ContextVar("hub_guarded", default=False)


class HubSilent(Exception):
    """A guarded hub request got no connection, no answer, or too slow an answer in time."""

    def __init__(
        self, host: str, stage: str, seconds: float, received: int = 0, answered: bool = False
    ) -> None:
        super().__init__(f"{stage} from {host} in {seconds:g} s")
        self.host, self.stage, self.seconds = host, stage, seconds
        self.received, self.answered = received, answered  # bytes in the last window; any before

    def describe(self) -> str:
        """``does not answer (no reply within 20 s)`` style phrase."""
        if self.stage == "connect":
            return f"does not accept a connection (none within {self.seconds:g} s)"
        if self.received == 0:
            verb = "stopped answering" if self.answered else "does not answer"
            return f"{verb} (no reply within {self.seconds:g} s)"
        return f"sends too slowly ({self.received} bytes in {self.seconds:g} s)"


def wait_limit() -> float:
    """The longest wait for the hub, in seconds: ``LONGBENCH100_HUB_TIMEOUT``, else 20."""
    value = os.environ.get(WAIT_ENV, "").strip()
    if not value:
        return DEFAULT_WAIT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise UserError(f"{WAIT_ENV}={value}: give the longest wait for the hub in seconds (> 0)")
    return seconds


@contextmanager
def guarded() -> Iterator[None]:
    """Apply the time limits to the hub requests made inside."""
    token = _GUARDED.set(True)
    try:
        yield
    finally:
        _GUARDED.reset(token)


def _capped(timeout: float | None, limit: float) -> float:
    """``timeout`` no longer than ``limit`` (``None``, no time-out, becomes ``limit``)."""
    return limit if timeout is None else min(timeout, limit)


class _TimedStream:
    """A network stream whose reads, while guarded, keep to the wait limit and the slowest pace."""

    def __init__(self, stream, host: str) -> None:
        self._stream, self._host = stream, host
        self._window_start, self._window_bytes, self._received = time.monotonic(), 0, 0

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Send (a request starts: its waiting window with it)."""
        self._window_start, self._window_bytes, self._received = time.monotonic(), 0, 0
        self._stream.write(buffer, timeout)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Receive, within the limits when guarded (the client's own shorter time-out, where it
        gives one, is the waiting window)."""
        if not _GUARDED.get():
            return self._stream.read(max_bytes, timeout)
        import httpcore2

        window = _capped(timeout, wait_limit())
        while True:
            left = self._window_start + window - time.monotonic()
            if left <= 0:
                self._next_window(window)
                continue
            try:
                data = self._stream.read(max_bytes, left)
            except httpcore2.ReadTimeout:
                continue  # the window is over: the next turn judges its pace
            self._window_bytes += len(data)
            self._received += len(data)
            return data

    def _next_window(self, window: float) -> None:
        """Close a waiting window: stop when it brought too little, else open the next."""
        if self._window_bytes < SLOWEST_RATE * window:
            raise HubSilent(self._host, "read", window, self._window_bytes, self._received > 0)
        self._window_start, self._window_bytes = time.monotonic(), 0

    def start_tls(
        self, ssl_context, server_hostname: str | None = None, timeout: float | None = None
    ) -> _TimedStream:
        """TLS over this stream, within the wait limit when guarded."""
        if _GUARDED.get():
            timeout = _capped(timeout, wait_limit())
        return _TimedStream(
            self._stream.start_tls(ssl_context, server_hostname, timeout), self._host
        )

    def close(self) -> None:
        """Close the connection."""
        self._stream.close()

    def get_extra_info(self, info: str):
        """As the wrapped stream answers."""
        return self._stream.get_extra_info(info)


class _TimedBackend:
    """httpcore's network backend, with connections made by :class:`_TimedStream`."""

    def __init__(self, backend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options=None,
    ) -> _TimedStream:
        """Connect, within the wait limit when guarded."""
        import httpcore2

        where = f"{host}:{port}"
        if not _GUARDED.get():
            stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
            return _TimedStream(stream, where)
        limit = _capped(timeout, wait_limit())
        try:
            stream = self._backend.connect_tcp(host, port, limit, local_address, socket_options)
        except (httpcore2.ConnectTimeout, TimeoutError):  # socket.timeout is TimeoutError
            raise HubSilent(where, "connect", limit) from None
        return _TimedStream(stream, where)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options=None):
        """Unchanged: no hub is reached through a Unix socket."""
        return self._backend.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        """As the wrapped backend sleeps."""
        self._backend.sleep(seconds)


def _timed_client():
    """huggingface_hub's default client, its connection pools (direct and through proxies) given the
    timed network layer."""
    from huggingface_hub.utils._http import default_client_factory

    client = default_client_factory()
    transports = [client._transport, *(t for t in client._mounts.values() if t is not None)]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if pool is not None and hasattr(pool, "_network_backend"):
            pool._network_backend = _TimedBackend(pool._network_backend)
    return client


def install() -> None:
    """Make huggingface_hub's shared client with the timed network layer (once per process)."""
    from huggingface_hub.utils import _http

    if _http._GLOBAL_CLIENT_FACTORY is not _timed_client:
        _http.set_client_factory(_timed_client)
