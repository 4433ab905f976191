"""A tiny fake Hugging Face hub that serves a mirror folder (``DIR/<owner>/<name>/<path>``) on 127.0.0.1.

It answers the requests ``huggingface_hub.hf_hub_download(..., repo_type="dataset")`` makes (checked
against huggingface_hub 2.4):

* ``HEAD /datasets/<owner>/<name>/resolve/<revision>/<path>`` (metadata, redirects not followed
  off-origin) and then ``GET`` on the URL it settled on;
* a regular (git) file answers ``200`` with ``ETag`` (its git blob sha1), ``X-Repo-Commit`` and
  ``Content-Length``; the GET carries the bytes;
* an LFS file (by default ``.zip``, ``.parquet`` and ``.gz``) answers ``302`` with ``Location`` on
  a second "CDN" origin, ``X-Linked-Etag`` (the sha256), ``X-Linked-Size`` and ``X-Repo-Commit``: the client
  takes its metadata from the redirect and GETs the CDN URL directly, as with the real hub;
* ``GET /api/datasets/<owner>/<name>/tree/<revision>`` (``HfApi.list_repo_tree``, recursive: the
  file lists of wildcard paths and of ``sources fetch``) answers every file with its size, one page;
* an unknown repository answers ``404`` with ``X-Error-Code: RepoNotFound``, an unknown revision
  ``404 RevisionNotFound``, a missing file ``404 EntryNotFound`` (with ``X-Repo-Commit``, so the
  client caches the absence under ``.no_exist``).

A repository answers to its branches (``main`` by default) and to its pinned commit: by default
the revision each packaged registry entry pins (``commits`` overrides), else a made-up stable
hash. A failure can be asked for (:meth:`HubStub.fail`): every request whose path holds a text
answers a given status (429 with ``Retry-After``, 5xx, gated, 404) until it is cleared; a request
can also get no answer at all (:meth:`HubStub.hang`) or an answer sent a byte at a time
(:meth:`HubStub.trickle`: the whole answer, or only its body).

No ``X-Xet-*`` headers are sent, so the plain HTTP download path is used even with ``hf_xet``
installed. Every request is recorded in :attr:`HubStub.requests` as ``(origin, method, path)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

_RESOLVE = re.compile(
    r"^/datasets/(?P<owner>[^/]+)/(?P<name>[^/]+)/resolve/(?P<revision>[^/]+)/(?P<file>.+)$"
)
_TREE = re.compile(r"^/api/datasets/(?P<owner>[^/]+)/(?P<name>[^/]+)/tree/(?P<revision>[^/]+)$")
_CDN = re.compile(r"^/lfs/(?P<sha256>[0-9a-f]{64})$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
SLOW_FOR_S = 60  # a hanging or trickling answer ends (its connection closed) after this long


def _registry_commits() -> dict[str, str]:
    """repo id -> the commit the packaged registry pins it to."""
    from longbench100.core.paths import packaged_dir
    from longbench100.sources.registry import load_registry

    return {
        entry.repo_id: entry.revision
        for entry in load_registry(packaged_dir("sources")).values()
        if _COMMIT.match(entry.revision)
    }


class HubStub:
    """Serve ``root`` as a hub of dataset repositories; use as a context manager.

    ``endpoint`` is the value for ``HF_ENDPOINT``; ``requests`` lists every request received.
    """

    def __init__(
        self,
        root: Path,
        *,
        lfs_suffixes: tuple[str, ...] = (".zip", ".parquet", ".gz"),
        branches: tuple[str, ...] = ("main",),
        commits: dict[str, str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.commits = _registry_commits() if commits is None else commits
        self.failures: list[
            tuple[str, int, dict[str, str]]
        ] = []  # (text in the path, status, headers)
        # (text in the path, "hang" | "trickle" | "body", seconds between bytes)
        self.silences: list[tuple[str, str, float]] = []
        self._closing = threading.Event()  # releases the requests left hanging
        self.lfs_suffixes = lfs_suffixes
        self.branches = (
            branches  # the revision names every repository answers to (besides its commit)
        )
        self.requests: list[tuple[str, str, str]] = []
        self._lock = threading.Lock()
        self._blobs: dict[str, Path] = {}  # sha256 -> file, for the CDN origin
        self._servers: list[ThreadingHTTPServer] = []
        self._threads: list[threading.Thread] = []
        self.endpoint = ""
        self.cdn = ""

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> HubStub:
        hub = self._serve("hub")
        cdn = self._serve("cdn")
        self.endpoint = f"http://127.0.0.1:{hub.server_address[1]}"
        self.cdn = f"http://127.0.0.1:{cdn.server_address[1]}"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._closing.set()
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def _serve(self, origin: str) -> ThreadingHTTPServer:
        stub = self

        class Handler(_Handler):
            pass

        Handler.stub, Handler.origin = stub, origin
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name=f"hub-stub-{origin}", daemon=True
        )
        thread.start()
        self._servers.append(server)
        self._threads.append(thread)
        return server

    # -- inspection ----------------------------------------------------------------------------
    def calls(self, method: str | None = None, origin: str | None = None) -> list[str]:
        """The paths requested so far, optionally only those of one method and/or origin."""
        with self._lock:
            return [
                path
                for o, m, path in self.requests
                if (method is None or m == method) and (origin is None or o == origin)
            ]

    def file_requests(self, method: str | None = None) -> list[str]:
        """The requests for repository files: ``/resolve/`` on the hub and ``/lfs/`` on the CDN.

        huggingface_hub also asks the hub for ``/api/agent-harnesses`` (a user-agent detail it
        fetches at most once a day); that and any other request are left out here.
        """
        return [
            path for path in self.calls(method) if "/resolve/" in path or path.startswith("/lfs/")
        ]

    def commit(self, repo_id: str) -> str:
        """The commit this stub reports for ``repo_id``'s branches: the registry's pin, else a made-up hash."""
        return self.commits.get(repo_id) or hashlib.sha1(f"commit:{repo_id}".encode()).hexdigest()

    def fail(self, status: int, within: str = "", headers: dict[str, str] | None = None) -> None:
        """Answer ``status`` (with ``headers``) to every request whose path holds ``within``, until cleared."""
        with self._lock:
            self.failures.append((within, status, dict(headers or {})))

    def hang(self, within: str = "") -> None:
        """Accept every request whose path holds ``within`` and never answer it (the connection
        is closed when the stub closes, or after :data:`SLOW_FOR_S`, so a client that waits forever
        fails instead of hanging its test)."""
        with self._lock:
            self.silences.append((within, "hang", 0.0))

    def trickle(self, within: str = "", pause: float = 0.05, body_only: bool = False) -> None:
        """Send the answers to requests whose path holds ``within`` one byte every ``pause``
        seconds: the whole answer, or (``body_only``) the status and headers at once and then the body."""
        with self._lock:
            self.silences.append((within, "body" if body_only else "trickle", pause))

    def clear_failures(self) -> None:
        """Answer normally again."""
        with self._lock:
            self.failures.clear()
            self.silences.clear()

    def _silence(self, path: str) -> tuple[str, float] | None:
        with self._lock:
            matches = ((mode, pause) for within, mode, pause in self.silences if within in path)
            return next(matches, None)

    def _failure(self, path: str) -> tuple[int, dict[str, str]] | None:
        with self._lock:
            return next(
                ((status, headers) for within, status, headers in self.failures if within in path),
                None,
            )

    def _record(self, origin: str, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((origin, method, path))

    def _register_blob(self, sha256: str, path: Path) -> None:
        with self._lock:
            self._blobs[sha256] = path

    def _blob(self, sha256: str) -> Path | None:
        with self._lock:
            return self._blobs.get(sha256)


class _Handler(BaseHTTPRequestHandler):
    stub: HubStub
    origin: str
    _slow: tuple[str, float] | None = None  # how this request is answered slowly (HubStub.trickle)
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - silence the default stderr log
        return

    def do_HEAD(self) -> None:  # noqa: N802 - http.server naming
        self._answer(send_body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(send_body=True)

    def _answer(self, send_body: bool) -> None:
        raw_path = urlsplit(self.path).path
        self.stub._record(self.origin, self.command, raw_path)
        self._slow = self.stub._silence(unquote(raw_path))
        if self._slow is not None and self._slow[0] == "hang":
            self.stub._closing.wait(SLOW_FOR_S)
            self.close_connection = True
            return None
        failure = self.stub._failure(unquote(raw_path))
        if failure is not None:
            status, headers = failure
            code = {401: "GatedRepo", 403: "GatedRepo", 404: "RepoNotFound"}.get(status)
            return self._error(status, code, f"stub answers {status}", send_body, headers)
        if self.origin == "cdn":
            self._cdn(raw_path, send_body)
        elif _TREE.match(raw_path):
            self._tree(_TREE.match(raw_path), send_body)
        else:
            self._resolve(raw_path, send_body)

    # -- the hub's file listing (HfApi.list_repo_tree asks for the whole tree, recursively) -----------
    def _tree(self, match: re.Match, send_body: bool) -> None:
        owner, name, revision = (
            unquote(match["owner"]),
            unquote(match["name"]),
            unquote(match["revision"]),
        )
        repo_dir = self.stub.root / owner / name
        if not repo_dir.is_dir():
            return self._error(404, "RepoNotFound", "Repository not found", send_body)
        if revision not in (*self.stub.branches, self.stub.commit(f"{owner}/{name}")):
            return self._error(404, "RevisionNotFound", "Invalid rev id: " + revision, send_body)
        entries = [
            {
                "type": "file",
                "path": path.relative_to(repo_dir).as_posix(),
                "size": path.stat().st_size,
                "oid": hashlib.sha1(
                    b"blob %d\0" % path.stat().st_size + path.read_bytes()
                ).hexdigest(),
            }
            for path in sorted(repo_dir.rglob("*"))
            if path.is_file()
        ]
        body = json.dumps(entries).encode()
        self._send(200, body if send_body else b"", len(body), {"Content-Type": "application/json"})

    # -- the hub's /resolve endpoint ---------------------------------------------------------------
    def _resolve(self, raw_path: str, send_body: bool) -> None:
        match = _RESOLVE.match(raw_path)
        if match is None:
            return self._error(404, None, "Not Found", send_body)
        owner, name = unquote(match["owner"]), unquote(match["name"])
        revision, filename = unquote(match["revision"]), unquote(match["file"])
        repo_id = f"{owner}/{name}"
        repo_dir = self.stub.root / owner / name
        if not repo_dir.is_dir():
            return self._error(404, "RepoNotFound", "Repository not found", send_body)
        commit = self.stub.commit(repo_id)
        if revision not in (*self.stub.branches, commit):
            return self._error(404, "RevisionNotFound", "Invalid rev id: " + revision, send_body)
        path = repo_dir / filename
        if ".." in Path(filename).parts or not path.is_file():
            return self._error(
                404, "EntryNotFound", "Entry not found", send_body, {"X-Repo-Commit": commit}
            )
        data = path.read_bytes()
        git_sha1 = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        if path.suffix in self.stub.lfs_suffixes:
            sha256 = hashlib.sha256(data).hexdigest()
            self.stub._register_blob(sha256, path)
            body = b"Found. Redirecting"
            self._send(
                302,
                body if send_body else b"",
                len(body),
                {
                    "Location": f"{self.stub.cdn}/lfs/{sha256}",
                    "ETag": f'"{git_sha1}"',  # the pointer file's sha1; the client prefers X-Linked-Etag
                    "X-Linked-Etag": f'"{sha256}"',
                    "X-Linked-Size": str(len(data)),
                    "X-Repo-Commit": commit,
                    "Content-Type": "text/plain; charset=utf-8",
                },
            )
            return
        self._send(
            200,
            data if send_body else b"",
            len(data),
            {
                "ETag": f'"{git_sha1}"',
                "X-Repo-Commit": commit,
                "Content-Type": "application/octet-stream",
            },
        )

    # -- the "CDN" origin that LFS redirects point to ------------------------------------------------
    def _cdn(self, raw_path: str, send_body: bool) -> None:
        match = _CDN.match(raw_path)
        path = self.stub._blob(match["sha256"]) if match else None
        if path is None:
            return self._error(404, None, "NoSuchKey", send_body)
        data = path.read_bytes()
        self._send(
            200,
            data if send_body else b"",
            len(data),
            {
                "ETag": f'"{match["sha256"]}"',
                "Content-Type": "application/octet-stream",
            },
        )

    # -- helpers -----------------------------------------------------------------------------------
    def _error(
        self,
        status: int,
        code: str | None,
        message: str,
        send_body: bool,
        extra: dict[str, str] | None = None,
    ) -> None:
        body = ('{"error":"%s"}' % message).encode()
        headers = {"Content-Type": "application/json", **(extra or {})}
        if code is not None:
            headers["X-Error-Code"] = code
            headers["X-Error-Message"] = message
        self._send(status, body if send_body else b"", len(body), headers)

    def _send(self, status: int, body: bytes, length: int, headers: dict[str, str]) -> None:
        if self._slow is not None:
            return self._send_slowly(status, body, length, headers)
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header(
            "Content-Length", str(length)
        )  # a HEAD reports the length its GET would have
        # No keep-alive: a pooled connection must never outlive its stub (a later stub may get the same port).
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _send_slowly(self, status: int, body: bytes, length: int, headers: dict[str, str]) -> None:
        """The answer a byte at a time (the head at once when only the body trickles)."""
        mode, pause = self._slow
        fields = {**headers, "Content-Length": str(length)}
        head = "".join(f"{key}: {value}\r\n" for key, value in fields.items())
        raw_head = f"HTTP/1.1 {status} Slow\r\n{head}Connection: close\r\n\r\n".encode()
        self.close_connection = True
        if mode == "body":
            self.wfile.write(raw_head)
            self.wfile.flush()
        give_up = time.monotonic() + SLOW_FOR_S
        for byte in body if mode == "body" else raw_head + body:
            if self.stub._closing.wait(pause) or time.monotonic() > give_up:
                return
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:  # the client gave up
                return
