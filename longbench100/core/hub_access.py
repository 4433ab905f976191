"""Reaching the Hugging Face hub: downloads, pinned file lists, and one-line messages for what goes
wrong.

huggingface_hub does the talking (its endpoint, cache, token and the proxy settings of the
environment: ``HTTPS_PROXY``, ``NO_PROXY``); nothing here opens a connection of its own. What this
module adds:

* every failure becomes one line naming its cause: rate limit (HTTP 429, with the hub's wait),
  server error (5xx), proxy, no connection, offline mode, full disk, gated, missing repository,
  revision or file;
* a hub that does not answer, or trickles, stops the request within a set time
  (:mod:`longbench100.core.hub_timeouts`, ``LONGBENCH100_HUB_TIMEOUT``);
* the client's silent retries are bounded and said: the first busy answer (429 or 5xx) prints one
  ``hub:`` line on stderr, and after :data:`BUSY_ANSWERS` busy answers, or when the hub asks to wait
  longer than :data:`LONGEST_WAIT_S`, the request stops with the message;
* the file list of a repository at a pinned commit is fetched once and kept beside its downloads in
  the hub cache, so wildcard paths resolve offline (``HF_HUB_OFFLINE=1``) once their files are
  cached.
"""

from __future__ import annotations

import contextvars
import errno
import json
import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from longbench100.core.atomic import write_json_atomic
from longbench100.core.errors import HubUnreachable, SourceAbsent, UserError, out_of_room
from longbench100.core.hub_timeouts import WAIT_ENV, HubSilent, guarded, install

BUSY_ANSWERS = (
    3  # busy answers (429, 5xx) one request may get before it stops (the client retries in between)
)
LONGEST_WAIT_S = 30  # a hub that asks to wait longer than this stops the request at once
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "HTTP_PROXY",
    "http_proxy",
)
_LISTINGS: dict[
    tuple[str, str, str], dict[str, int]
] = {}  # (endpoint, repo, revision) -> listing, this process


def is_commit(revision: str) -> bool:
    """Whether ``revision`` is a full commit hash (40 hex digits), not a branch or tag."""
    return bool(_COMMIT.match(revision))


def hub_offline() -> bool:
    """Whether huggingface_hub is in offline mode (``HF_HUB_OFFLINE``)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def hub_cache_folder() -> str:
    """The folder huggingface_hub keeps downloads in (``HF_HUB_CACHE``, under ``HF_HOME``)."""
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def human_size(size: int) -> str:
    """``11.3 GB`` style (decimal units, as the hub shows them)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def cached_file(repo_id: str, revision: str, path: str) -> Path | None:
    """The file in the local hub cache, if it is there (no network)."""
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(repo_id, path, revision=revision, repo_type="dataset")
    return Path(cached) if isinstance(cached, str) else None


def cached_commit(repo_id: str, revision: str) -> str | None:
    """The commit the cache holds for ``revision``: the revision itself when it is a commit, else
    the commit the branch or tag pointed to at the last download (``None`` when nothing was
    downloaded)."""
    if is_commit(revision):
        return revision
    ref = _repo_cache_folder(repo_id) / "refs" / revision
    try:
        return ref.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def download(where: str, repo_id: str, revision: str, path: str) -> Path:
    """Download one file of a dataset repository into the hub cache (or find it there); ``where``
    opens every error message (``source qmsum``)."""
    with hub_call(where, repo_id, revision, path):
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo_id, path, repo_type="dataset", revision=revision))


def kept_listing(repo_id: str, revision: str) -> dict[str, int] | None:
    """The file list (path -> size in bytes) kept for a pinned commit, or fetched earlier in this
    process; ``None`` when there is none (no network)."""
    from huggingface_hub import constants

    known = _LISTINGS.get((constants.ENDPOINT, repo_id, revision))
    if known is not None or not is_commit(revision):
        return known
    try:
        stored = json.loads(_listing_path(repo_id, revision).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or not all(isinstance(size, int) for size in stored.values()):
        return None
    _LISTINGS[(constants.ENDPOINT, repo_id, revision)] = stored
    return stored


def listing(where: str, repo_id: str, revision: str) -> dict[str, int]:
    """Every file of the repository at ``revision`` with its size; at a pinned commit fetched once
    and kept in the hub cache (a branch is listed once per process)."""
    from huggingface_hub import constants

    kept = kept_listing(repo_id, revision)
    if kept is not None:
        return kept
    if hub_offline():
        raise HubUnreachable(
            f"{where}: {repo_id}@{revision}: its file list was never fetched and HF_HUB_OFFLINE "
            "is set: run `longbench100 sources fetch` online first"
        )
    with hub_call(where, repo_id, revision, "the repository's file list", listing=True):
        from huggingface_hub import HfApi
        from huggingface_hub.hf_api import RepoFile

        tree = HfApi().list_repo_tree(
            repo_id, repo_type="dataset", revision=revision, recursive=True
        )
        files = {item.path: item.size for item in tree if isinstance(item, RepoFile)}
    _LISTINGS[(constants.ENDPOINT, repo_id, revision)] = files
    if is_commit(revision):
        try:
            write_json_atomic(_listing_path(repo_id, revision), files)
        except OSError:
            pass  # a read-only cache folder: listed again next time
    return files


def _listing_path(repo_id: str, revision: str) -> Path:
    """Where the file list of ``repo_id`` at commit ``revision`` is kept: beside the repository's
    downloads in the hub cache, so the two are kept (and deleted) together."""
    return _repo_cache_folder(repo_id) / "longbench100-file-lists" / f"{revision}.json"


def _repo_cache_folder(repo_id: str) -> Path:
    """huggingface_hub's cache folder of a dataset repository."""
    return Path(hub_cache_folder()) / f"datasets--{repo_id.replace('/', '--')}"


@dataclass
class _Watch:
    """The busy answers (429, 5xx) one hub request has had so far."""

    where: str
    answers: list[tuple[int, int | None]] = field(
        default_factory=list
    )  # (status, seconds the hub asks to wait)


class HubBusy(Exception):
    """The hub kept answering 429 or 5xx (or asked for a long wait): raised from the response hook
    to stop the client's retries."""

    def __init__(self, status: int, wait: int | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.wait = status, wait


_WATCH: contextvars.ContextVar[_Watch | None] = contextvars.ContextVar("hub_watch", default=None)


def _asked_wait(headers) -> int | None:
    """The seconds a busy answer asks to wait: ``Retry-After`` or the rate-limit headers' reset
    time."""
    from huggingface_hub.utils._http import _parse_retry_after, parse_ratelimit_headers

    limit = parse_ratelimit_headers(headers)
    if limit is not None and limit.remaining == 0:
        return limit.reset_in_seconds
    return _parse_retry_after(headers)


def _on_response(response) -> None:
    """httpx response hook: say the first busy answer of a watched request, stop after too many or a
    long wait."""
    watch = _WATCH.get()
    status = response.status_code
    if watch is None or not (status == 429 or 500 <= status < 600):
        return
    wait = _asked_wait(response.headers)
    watch.answers.append((status, wait))
    if len(watch.answers) >= BUSY_ANSWERS or (wait is not None and wait > LONGEST_WAIT_S):
        raise HubBusy(status, wait)
    if len(watch.answers) == 1:
        what = "rate limited" if status == 429 else "server error"
        print(
            f"hub: {watch.where}: HTTP {status} ({what}); trying again a few times",
            file=sys.stderr,
            flush=True,
        )


class HubNoAnswer(Exception):
    """A request got no answer (no connection, proxy failure, time-out): raised in place of the
    client's retries of it, which on a machine without network only delay the same message."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _StopConnectionRetries(logging.Filter):
    """A filter on huggingface_hub's HTTP logger: while a request is watched, the warning it logs
    before retrying a failed connection stops the request instead (the failure is being handled when
    it logs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from huggingface_hub.utils._http import _DEFAULT_RETRY_ON_EXCEPTIONS as retried

        failure = sys.exc_info()[1]
        if _WATCH.get() is not None and isinstance(failure, retried):
            raise HubNoAnswer(failure)
        return _WATCH.get() is None  # the retry chatter of watched requests is said by the watch


_HTTP_LOGGER = "huggingface_hub.utils._http"
_STOPPER = _StopConnectionRetries()


@contextmanager
def bounded_retries(where: str) -> Iterator[None]:
    """Watch the hub requests made inside: the first busy answer is said on stderr (``where`` names
    the request), and the client's retries stop after a few busy answers, a long asked wait, or a
    connection that failed (:class:`HubBusy`, :class:`HubNoAnswer`); no answer in time stops them
    too (:class:`HubSilent`)."""
    from huggingface_hub.utils import get_session

    install()
    hooks = get_session().event_hooks["response"]
    if _on_response not in hooks:
        hooks.append(_on_response)
    http_logger = logging.getLogger(_HTTP_LOGGER)
    if _STOPPER not in http_logger.filters:
        http_logger.addFilter(_STOPPER)
    http_logger.setLevel(logging.WARNING)  # its retry warnings must reach the filter
    token = _WATCH.set(_Watch(where))
    try:
        with guarded():
            yield
    finally:
        _WATCH.reset(token)


@contextmanager
def hub_call(
    where: str, repo_id: str, revision: str, what: str, *, listing: bool = False
) -> Iterator[None]:
    """Run one hub request for ``what`` (a file path, or the file list when ``listing``), with its
    retries bounded (:func:`bounded_retries`) and every failure turned into a one-line
    :class:`UserError`."""
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.set_verbosity_error()  # the watch says what the client's own warnings would
    try:
        with bounded_retries(f"{repo_id}@{revision} {what}"):
            yield
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - huggingface_hub and httpx raise many types
        raise hub_error(error, f"{where}: {repo_id}@{revision}", what, listing) from None


def hub_error(error: BaseException, where: str, what: str, listing: bool = False) -> UserError:
    """The one-line error for a failed hub request (``where``: ``source x: repo@revision``)."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    cause = _root_cause(error)
    if isinstance(cause, HubNoAnswer):
        cause = cause.error
    absent_repo = f"{where}: repository not found (or private: log in with HF_TOKEN)" + (
        "" if listing else f" for {what}"
    )
    if isinstance(cause, HubSilent):
        return HubUnreachable(_silence_message(where, what, cause))
    if isinstance(cause, HubBusy):
        return _busy_error(where, what, cause.status, cause.wait)
    if isinstance(cause, GatedRepoError):
        return UserError(
            f"{where}: the repository is gated: accept its terms on the hub and log in "
            "(HF_TOKEN or `hf auth login`)"
        )
    if isinstance(cause, RepositoryNotFoundError):
        return SourceAbsent(absent_repo)
    if isinstance(cause, RevisionNotFoundError):
        return SourceAbsent(f"{where}: no such revision")
    if isinstance(cause, RemoteEntryNotFoundError):
        return SourceAbsent(f"{where}: no file {what}")
    if isinstance(cause, HfHubHTTPError) and cause.response is not None:
        status = cause.response.status_code
        if status == 429 or status >= 500:
            return _busy_error(where, what, status, _asked_wait(cause.response.headers))
        if (
            listing and status == 404
        ):  # the listing route answers 404 for a repository it does not know
            return SourceAbsent(absent_repo)
        if status == 401:
            return UserError(
                f"{where}: the hub refused {what} (HTTP 401): "
                "log in with HF_TOKEN or `hf auth login`"
            )
        return UserError(f"{where}: the hub refused {what} (HTTP {status})")
    if isinstance(
        cause, (OfflineModeIsEnabled, LocalEntryNotFoundError)
    ):  # the latter: offline, nothing cached
        return HubUnreachable(
            f"{where}: {what} is not in the local hub cache and HF_HUB_OFFLINE is set: "
            "run `longbench100 sources fetch` online first, or point --sources at a local mirror"
        )
    if isinstance(cause, OSError) and (room := out_of_room(cause)) is not None:
        happened, remedy = room
        elsewhere = ", or set HF_HOME (or HF_HUB_CACHE) to a folder on a larger disk"
        return UserError(
            f"{where}: {happened} while downloading {what} into {hub_cache_folder()}: "
            f"{remedy}{'' if cause.errno == errno.EFBIG else elsewhere}"
        )
    if isinstance(cause, OSError) and not _is_network_error(cause):
        return UserError(
            f"{where}: cannot write {what} into the hub cache {hub_cache_folder()} "
            f"({cause.strerror or type(cause).__name__})"
        )
    return HubUnreachable(_connection_message(where, what, cause))


def _busy_error(where: str, what: str, status: int, wait: int | None) -> UserError:
    """The message for a hub that kept answering 429 (rate limit) or 5xx (server error)."""
    asks = f"; the hub asks to wait {wait} s" if wait is not None else ""
    if status == 429:
        return UserError(
            f"{where}: the Hugging Face hub rate-limited the requests for {what} (HTTP 429{asks}): "
            "log in with HF_TOKEN (or `hf auth login`) for a higher limit, or wait and run again"
        )
    return UserError(
        f"{where}: the Hugging Face hub answered HTTP {status} (a server error) for {what}{asks}: "
        "the hub is having trouble; try again later"
    )


def _silence_message(where: str, what: str, silence: HubSilent) -> str:
    """A hub (or its file host, or the proxy) that did not answer in time, or too slowly."""
    from huggingface_hub import constants

    host = "" if silence.host in constants.ENDPOINT else f" (its host {silence.host})"
    proxy = next((os.environ[name] for name in _PROXY_VARIABLES if os.environ.get(name)), None)
    through = f" through the proxy {proxy}" if proxy else ""
    return (
        f"{where}: the Hugging Face hub at {constants.ENDPOINT}{host}{through} "
        f"{silence.describe()} for {what}: check HF_ENDPOINT and the connection, set {WAIT_ENV} "
        "to wait longer, or point --sources at a local mirror"
    )


def _connection_message(where: str, what: str, cause: BaseException) -> str:
    """No answer at all: a proxy that failed, or no connection to the hub's host."""
    from huggingface_hub import constants

    reason = (
        str(cause).strip().splitlines()[0][:160] if str(cause).strip() else type(cause).__name__
    )
    proxy = next((os.environ[name] for name in _PROXY_VARIABLES if os.environ.get(name)), None)
    if type(cause).__name__ == "ProxyError":
        return (
            f"{where}: the proxy {proxy or '(from the environment)'} failed for {what} ({reason}): "
            "check HTTPS_PROXY / NO_PROXY"
        )
    through = f" through the proxy {proxy}" if proxy else ""
    return (
        f"{where}: cannot reach the Hugging Face hub at {constants.ENDPOINT}{through} "
        f"for {what} ({reason}): check the connection (and HTTPS_PROXY where a proxy is needed), "
        "or point --sources at a local mirror"
    )


def _root_cause(error: BaseException) -> BaseException:
    """``error`` without huggingface_hub's wrapper for a failed look-up (LocalEntryNotFoundError,
    whose cause is the request's own failure)."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    while isinstance(error, LocalEntryNotFoundError) and error.__cause__ is not None:
        error = error.__cause__
    return error


def _is_network_error(error: OSError) -> bool:
    """Whether an OSError is about the connection (refused, unreachable, timed out), not a disk."""
    return isinstance(error, (ConnectionError, TimeoutError)) or error.errno in (
        errno.ECONNREFUSED,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ETIMEDOUT,
        errno.ECONNRESET,
    )
