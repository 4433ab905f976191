"""Where source files come from: the Hugging Face hub, a local mirror in hub layout, or the demo pack.

A mirror folder holds a file that lives at ``<path>`` inside hub repo ``<owner>/<name>`` at
``DIR/<owner>/<name>/<path>``. ``--sources`` (or ``LONGBENCH100_SOURCES``) picks the location:
``demo``, ``hub``, or a folder.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from longbench100.core.errors import HubUnreachable, SourceAbsent, UserError
from longbench100.core.hub_reach import hub_problem
from longbench100.core.atomic import write_json_atomic
from longbench100.core.paths import DEMO_DIR, SOURCES_ENV, cache_dir, packaged_dir
from longbench100.sources.readers import is_tar_archive
from longbench100.sources.registry import FileSpec, SourceEntry, load_registry

MIRROR_HINT = f"point --sources (or {SOURCES_ENV}) at a local mirror folder laid out as DIR/<repo id>/<path in repo>"


@dataclass(frozen=True)
class SourceLocation:
    """A place to read source files from, with the registry that describes them."""

    kind: str  # "hub" | "mirror" | "demo"
    root: Path | None
    registry_dir: Path

    def describe(self) -> str:
        """A short human description (``mirror /data/sources``)."""
        return self.kind if self.root is None else f"{self.kind} {self.root}"

    def registry(self) -> dict[str, SourceEntry]:
        """The registered sources for this location."""
        return load_registry(self.registry_dir)

    def local_path(self, entry: SourceEntry, spec: FileSpec) -> Path | None:
        """The file on disk if it is already there (mirror, demo, or the hub's local cache), else ``None``."""
        if self.root is not None:
            path = self.root / entry.repo_id / spec.path
            return path if path.is_file() else None
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(entry.repo_id, spec.path, revision=entry.revision, repo_type="dataset")
        return Path(cached) if isinstance(cached, str) else None

    def fetch(self, entry: SourceEntry, spec: FileSpec) -> Path:
        """Return a local path to ``spec``'s file, downloading it from the hub when that is the location."""
        local = self.local_path(entry, spec)
        if local is not None:
            return local
        if self.root is not None:
            raise UserError(f"source {entry.name}: {self.root / entry.repo_id / spec.path} is missing from the mirror")
        return _download(entry, spec)

    def fetch_all(self, entry: SourceEntry, spec: FileSpec) -> dict[str, Path]:
        """Every file ``spec`` names, as {path in the repository: local path}: one file, or for a ``path``
        with wildcards (``distractor/train-*.parquet``) every match, in name order."""
        if not spec.is_pattern:
            return {spec.display: self.fetch(entry, spec)}
        names = self.pattern_matches(entry, spec)
        if not names:
            where = self.root / entry.repo_id if self.root is not None else f"{entry.repo_id}@{entry.revision}"
            raise SourceAbsent(f"source {entry.name}: no file matches {spec.path} in {where}")
        return {name: self.fetch(entry, replace(spec, path=name)) for name in names}

    def pattern_matches(self, entry: SourceEntry, spec: FileSpec) -> list[str]:
        """The repository paths matching ``spec.path``'s wildcards: in the mirror folder, or listed by the hub."""
        if self.root is not None:
            folder = self.root / entry.repo_id
            return sorted(path.relative_to(folder).as_posix() for path in folder.glob(spec.path) if path.is_file())
        return sorted(name for name in _hub_files(entry) if fnmatch.fnmatchcase(name, spec.path))

    def is_available(self, entry: SourceEntry) -> bool:
        """Whether every file (and zip member) of ``entry`` can be read here without a download."""
        for spec in entry.files:
            if spec.is_pattern:
                if self.root is None or not self.pattern_matches(entry, spec):
                    return False
                continue
            path = self.local_path(entry, spec)
            if path is None or (spec.member is not None and not archive_has_member(path, spec.member)):
                return False
        return True


def archive_has_member(path: Path, member: str) -> bool:
    """Whether the archive at ``path`` holds ``member`` (an unreadable archive counts as present, to fail loudly later).
    A tar archive's member list is read once (decompressing it all) and kept in the cache folder per file version."""
    if is_tar_archive(path):
        members = tar_members(path)
        return members is None or member.lstrip("/") in members
    try:
        with zipfile.ZipFile(path) as archive:
            return member in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return True


def tar_members(path: Path) -> frozenset[str] | None:
    """The regular files a tar archive holds (names without a leading ``./``), or ``None`` when it cannot be read.
    Listed once per version of the file (path, size, modification time) and kept under the cache folder's ``tar_members/``."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = json.dumps([str(path.resolve()), stat.st_size, stat.st_mtime_ns])
    cached = cache_dir() / "tar_members" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    try:
        return frozenset(json.loads(cached.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    try:
        with tarfile.open(path, mode="r|*") as archive:
            names = sorted(info.name.removeprefix("./") for info in archive if info.isfile())
    except (OSError, tarfile.TarError, EOFError):
        return None
    try:
        write_json_atomic(cached, names)
    except OSError:
        pass  # a read-only cache: the list is read again next time
    return frozenset(names)


def _hub_files(entry: SourceEntry) -> list[str]:
    """The files of the entry's hub repository at its revision (for wildcard paths)."""
    with _hub_call(entry, "the repository's file list", listing=True):
        from huggingface_hub import HfApi

        return HfApi().list_repo_files(entry.repo_id, repo_type="dataset", revision=entry.revision)


def _download(entry: SourceEntry, spec: FileSpec) -> Path:
    """Download one file with huggingface_hub (datasets' loading scripts are deliberately not used)."""
    with _hub_call(entry, spec.path):
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(entry.repo_id, spec.path, repo_type="dataset", revision=entry.revision))


@contextmanager
def _hub_call(entry: SourceEntry, what: str, *, listing: bool = False) -> Iterator[None]:
    """Run a hub request for ``what`` (a file path, or the file list when ``listing``), turning its failures
    into one-line errors: unreachable, gated, absent (repository, revision or file) or refused."""
    problem = hub_problem()
    if problem:
        raise HubUnreachable(f"source {entry.name}: the Hugging Face hub is unreachable ({problem}); {MIRROR_HINT}")
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.set_verbosity_error()  # our one-line message replaces its retry chatter
    where = f"source {entry.name}: {entry.repo_id}@{entry.revision}"
    absent = f"{where}: repository not found (or private: log in with HF_TOKEN)" + ("" if listing else f" for {what}")
    try:
        yield
    except LocalEntryNotFoundError:  # offline mode, or no connection and nothing cached
        raise HubUnreachable(f"source {entry.name}: the Hugging Face hub is unreachable (offline, nothing cached); {MIRROR_HINT}") from None
    except GatedRepoError:
        raise UserError(f"{where}: the repository is gated: accept its terms on the hub and log in (HF_TOKEN or `hf auth login`)") from None
    except RepositoryNotFoundError:
        raise SourceAbsent(absent) from None
    except RevisionNotFoundError:
        raise SourceAbsent(f"{where}: no such revision") from None
    except EntryNotFoundError:
        raise SourceAbsent(f"{where}: no file {what}") from None
    except HfHubHTTPError as error:
        status = error.response.status_code if error.response is not None else "?"
        if listing and status == 404:  # the listing route answers 404 for a repository it does not know
            raise SourceAbsent(absent) from None
        raise UserError(f"{where}: the hub refused {what} (HTTP {status})") from None
    except Exception as error:  # connection failures surface as several exception types
        raise HubUnreachable(
            f"source {entry.name}: the Hugging Face hub is unreachable ({type(error).__name__}); {MIRROR_HINT}"
        ) from None


def resolve_location(option: str | None) -> SourceLocation:
    """Turn a ``--sources`` value (or the environment variable, or the hub default) into a location."""
    value = option or os.environ.get(SOURCES_ENV) or "hub"
    given = "--sources" if option else SOURCES_ENV
    if value == "demo":
        return SourceLocation("demo", DEMO_DIR / "data", DEMO_DIR / "sources")
    if value == "hub":
        return SourceLocation("hub", None, packaged_dir("sources"))
    root = Path(value).expanduser()
    if root.exists() and not root.is_dir():
        raise UserError(f"{given} {value}: is a file, not a folder (use 'demo', 'hub', or a mirror folder)")
    if not root.is_dir():
        raise UserError(f"{given} {value}: no such folder (use 'demo', 'hub', or a mirror folder)")
    return SourceLocation("mirror", root.resolve(), packaged_dir("sources"))


def active_entries(location: SourceLocation, entries: dict[str, SourceEntry]) -> dict[str, SourceEntry]:
    """The entries to use: every available entry, with stand-ins only where their primary is unavailable."""
    available = {name: entry for name, entry in entries.items() if location.kind == "hub" or location.is_available(entry)}
    return {
        name: entry
        for name, entry in available.items()
        if not entry.stand_in_for or entry.stand_in_for not in available
    }
