"""A headless chromium driven over the DevTools protocol on a pipe: no driver, no websocket library.

Chromium started with ``--remote-debugging-pipe`` reads JSON commands on file descriptor 3 and
writes replies and events on descriptor 4, each message ended by a NUL byte.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TIMEOUT_S = 60


class Browser:
    """One chromium process with one page; :meth:`close` (or ``with``) ends it."""

    def __init__(self, profile: Path) -> None:
        assert CHROMIUM is not None, "no chromium on PATH"
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def on_descriptors_3_and_4() -> None:  # in the child, before chromium starts
            reading, writing = (
                os.dup(to_browser_read),
                os.dup(from_browser_write),
            )  # neither is 3 or 4 now
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        self._process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=on_descriptors_3_and_4,  # noqa: PLW1509 - no thread forks here
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._events: list[dict] = []
        self._next_id = 0
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.call("Page.enable")

    def __enter__(self) -> Browser:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """End the browser process."""
        self._process.kill()
        self._process.wait(timeout=TIMEOUT_S)
        os.close(self._to_browser)
        os.close(self._from_browser)

    def call(self, method: str, params: dict | None = None) -> dict:
        """Send one command to the page and return its result."""
        return self._call(method, params or {}, self._session)

    def size(self, width: int, height: int, mobile: bool) -> None:
        """Emulate a window; with ``mobile`` a phone, laid out as the viewport meta says."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )

    def open(self, url: str) -> None:
        """Load ``url`` afresh (even when only its #fragment differs from the page shown) and wait
        for its load event."""
        for address in ("about:blank", url):
            self._events.clear()
            self.call("Page.navigate", {"url": address})
            self._wait_event("Page.loadEventFired")

    def reload(self) -> None:
        """Reload the page and wait for its load event."""
        self._events.clear()
        self.call("Page.reload")
        self._wait_event("Page.loadEventFired")

    def js(self, expression: str) -> object:
        """The value of a JavaScript expression (promises awaited); a script error fails."""
        reply = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise AssertionError(f"{expression!r} raised: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def settle(self) -> None:
        """Let the page handle what was just dispatched (hash changes arrive asynchronously)."""
        self.js("new Promise((done) => setTimeout(done, 50))")

    def screenshot(self, path: Path) -> None:
        """Save what the window shows as a PNG."""
        path.write_bytes(
            base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
        )

    def _call(self, method: str, params: dict, session: str | None = None) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply["result"]
            if "method" in reply:
                self._events.append(reply)

    def _wait_event(self, name: str) -> None:
        while not any(event["method"] == name for event in self._events):
            message = self._read()
            if "method" in message:
                self._events.append(message)

    def _read(self) -> dict:
        """The next message from the browser (a test failure after :data:`TIMEOUT_S` of silence)."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._from_browser, selectors.EVENT_READ)
            while b"\0" not in self._buffer:
                if not selector.select(TIMEOUT_S):
                    raise AssertionError(f"chromium sent nothing for {TIMEOUT_S} s")
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise AssertionError("chromium closed the pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)
