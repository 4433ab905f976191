"""Several servers of one model (vLLM or SGLang replicas): each request goes to the least busy one.

A server that stops accepting connections, or fails its first attempts all the same way, is dropped
with one line on stderr, and its request is sent again to another server; the run stops only when
every server is gone.
"""

from __future__ import annotations

import sys

from longbench100.llm.client import LLMClient


class ServerPool:
    """The clients of a run's servers with their requests in flight."""

    def __init__(self, clients: list[LLMClient], urls: tuple[str, ...]) -> None:
        self.urls = dict(zip(map(id, clients), urls))
        self._alive = list(clients)
        self._in_flight = {id(client): 0 for client in clients}
        self.size = len(clients)
        self.dropped: list[tuple[str, str]] = []  # (url, reason), in the order they went

    def pick(self) -> LLMClient | None:
        """The live server with the fewest requests in flight (the first listed on a tie), or ``None``."""
        return min(self._alive, key=lambda client: self._in_flight[id(client)], default=None)

    def start(self, client: LLMClient) -> None:
        """Count a request sent to ``client``."""
        self._in_flight[id(client)] += 1

    def finish(self, client: LLMClient) -> None:
        """Count a request of ``client`` as done."""
        self._in_flight[id(client)] -= 1

    def drop(self, client: LLMClient, reason: str) -> None:
        """Stop sending to ``client`` (once), saying so in one line on stderr."""
        if client not in self._alive:
            return
        self._alive.remove(client)
        url = self.urls[id(client)]
        self.dropped.append((url, reason))
        left = len(self._alive)
        print(
            f"warning: dropped the server at {url} ({reason}); "
            + (
                f"its requests go to the {left} other{'s' if left > 1 else ''}"
                if left
                else "no server is left"
            ),
            file=sys.stderr,
            flush=True,
        )
