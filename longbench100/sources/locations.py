"""Where source files come from: the Hugging Face hub, a local mirror in hub layout, or the demo pack.

A mirror folder holds a file that lives at ``<path>`` inside hub repo ``<owner>/<name>`` at
``DIR/<owner>/<name>/<path>``. ``--sources`` (or ``LONGBENCH100_SOURCES``) picks the location:
``demo``, ``hub``, or a folder.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from longbench100.core.errors import SourceAbsent, UserError
from longbench100.core.hub_access import (
    cached_commit,
    cached_file,
    download,
    hub_offline,
    human_size,
    kept_listing,
    listing,
)
from longbench100.core.paths import DEMO_DIR, SOURCES_ENV, packaged_dir
from longbench100.sources.readers import is_tar_archive, tar_member_verdict
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

    def repo_folder(self, entry: SourceEntry) -> Path:
        """The entry's repository folder in the mirror: under its id, or under a former id
        (``aliases``) that the mirror still holds."""
        assert self.root is not None
        for repo_id in (entry.repo_id, *entry.aliases):
            if (self.root / repo_id).is_dir():
                return self.root / repo_id
        return self.root / entry.repo_id

    def local_path(self, entry: SourceEntry, spec: FileSpec) -> Path | None:
        """The file on disk if it is already there (mirror, demo, or the hub's local cache), else ``None``."""
        if self.root is not None:
            path = self.repo_folder(entry) / spec.path
            return path if path.is_file() else None
        return cached_file(entry.repo_id, entry.revision, spec.path)

    def fetch(self, entry: SourceEntry, spec: FileSpec) -> Path:
        """Return a local path to ``spec``'s file, downloading it from the hub when that is the location."""
        local = self.local_path(entry, spec)
        if local is not None:
            return local
        if self.root is not None:
            missing = self.repo_folder(entry) / spec.path
            raise UserError(f"source {entry.name}: {missing} is missing from the mirror")
        size = (kept_listing(entry.repo_id, entry.revision) or {}).get(spec.path)
        print(
            f"hub: downloading {entry.repo_id}@{entry.revision[:12]} {spec.path}"
            + (f" ({human_size(size)})" if size is not None else ""),
            file=sys.stderr,
            flush=True,
        )
        return download(f"source {entry.name}", entry.repo_id, entry.revision, spec.path)

    def fetch_all(self, entry: SourceEntry, spec: FileSpec) -> dict[str, Path]:
        """Every file ``spec`` names, as {path in the repository: local path}: one file, or for a ``path``
        with wildcards (``distractor/train-*.parquet``) every match, in name order."""
        if not spec.is_pattern:
            return {spec.display: self.fetch(entry, spec)}
        names = self.pattern_matches(entry, spec)
        if not names:
            where = (
                self.repo_folder(entry)
                if self.root is not None
                else f"{entry.repo_id}@{entry.revision}"
            )
            raise SourceAbsent(f"source {entry.name}: no file matches {spec.path} in {where}")
        return {name: self.fetch(entry, replace(spec, path=name)) for name in names}

    def pattern_matches(self, entry: SourceEntry, spec: FileSpec) -> list[str]:
        """The repository paths matching ``spec.path``'s wildcards: in the mirror folder, or in the
        hub's file list of the entry's revision (kept once fetched at a pinned commit)."""
        if self.root is not None:
            folder = self.repo_folder(entry)
            return sorted(
                path.relative_to(folder).as_posix()
                for path in folder.glob(spec.path)
                if path.is_file()
            )
        return _matching(listing(f"source {entry.name}", entry.repo_id, entry.revision), spec.path)

    def is_available(self, entry: SourceEntry) -> bool:
        """Whether every file (and archive member) of ``entry`` can be read here without a download;
        a wildcard path on the hub needs its kept file list and every matching file cached."""
        for spec in entry.files:
            if spec.is_pattern:
                names = self._local_matches(entry, spec)
                if not names or any(
                    self.local_path(entry, replace(spec, path=name)) is None for name in names
                ):
                    return False
                continue
            path = self.local_path(entry, spec)
            if path is None or (
                spec.member is not None and not archive_has_member(path, spec.member)
            ):
                return False
        return True

    def _local_matches(self, entry: SourceEntry, spec: FileSpec) -> list[str]:
        """The matches of a wildcard path known without a download (the hub's kept file list)."""
        if self.root is not None:
            return self.pattern_matches(entry, spec)
        kept = kept_listing(entry.repo_id, entry.revision)
        return _matching(kept, spec.path) if kept is not None else []

    def absence(self, entry: SourceEntry) -> str | None:
        """Why ``entry`` cannot be used here (one phrase), or ``None`` when it can. On the hub an
        entry that is not cached is looked up in the repository's file list (one request per
        repository and revision)."""
        if self.root is not None:
            return None if self.is_available(entry) else self._missing_from_mirror(entry)
        if entry.not_on_hub:
            return f"not read from the hub: {entry.not_on_hub}"
        if self.is_available(entry):
            return None
        for spec in entry.files:  # a downloaded archive without the member settles it
            path = None if spec.member is None else self.local_path(entry, spec)
            if (
                path is not None
                and spec.member is not None
                and not archive_has_member(path, spec.member)
            ):
                return f"{entry.repo_id}@{entry.revision}: {spec.path} has no member {spec.member}"
        if hub_offline():
            return "not in the local hub cache (HF_HUB_OFFLINE is set)"
        try:
            files = listing(f"source {entry.name}", entry.repo_id, entry.revision)
        except SourceAbsent as error:
            return str(error).removeprefix(f"source {entry.name}: ")
        for spec in entry.files:
            if not (_matching(files, spec.path) if spec.is_pattern else spec.path in files):
                matches = "matches " if spec.is_pattern else ""
                return f"{entry.repo_id}@{entry.revision}: no file {matches}{spec.path}"
        return None

    def unavailable_hint(self, names: list[str]) -> str:
        """Why the first of the unavailable sources ``names`` is missing here and, offline on the
        hub, how to get them (a tail for a message: ``" (x: ...); run ..."``)."""
        registry = self.registry()
        reason = self.absence(registry[names[0]]) if names[0] in registry else None
        why = f" ({names[0]}: {reason})" if reason else ""
        if self.kind != "hub" or not hub_offline():
            return why
        return (
            f"{why}; run `longbench100 sources fetch --sources-list {','.join(names)}` online "
            "first (or unset HF_HUB_OFFLINE), or point --sources at a local mirror"
        )

    def _missing_from_mirror(self, entry: SourceEntry) -> str:
        """The first file (or archive member) of ``entry`` that the mirror lacks."""
        for spec in entry.files:
            names = self._local_matches(entry, spec) if spec.is_pattern else [spec.path]
            if not names:
                return f"no file matches {spec.path} in {self.repo_folder(entry)}"
            path = self.local_path(entry, replace(spec, path=names[0]))
            if path is None:
                return f"{self.repo_folder(entry) / spec.path} is missing"
            if spec.member is not None and not archive_has_member(path, spec.member):
                return f"{path} has no member {spec.member}"
        return "unavailable"

    def commit(self, entry: SourceEntry) -> str | None:
        """The upstream commit the entry's files come from: on the hub, the pinned revision (or the
        commit its branch pointed to at download); ``None`` for a mirror or the demo pack, whose
        files carry none."""
        return cached_commit(entry.repo_id, entry.revision) if self.root is None else None

    def download_plan(self, entries: Iterable[SourceEntry]) -> list[PlannedFile]:
        """Every hub file the entries read, once each (entries share files), with its size and
        whether it is cached already; the file lists are fetched (and kept) on the way."""
        planned: dict[tuple[str, str, str], PlannedFile] = {}
        for entry in entries:
            files = listing(f"source {entry.name}", entry.repo_id, entry.revision)
            for spec in entry.files:
                for name in _matching(files, spec.path) if spec.is_pattern else [spec.path]:
                    key = (entry.repo_id, entry.revision, name)
                    if key not in planned:
                        cached = cached_file(entry.repo_id, entry.revision, name) is not None
                        planned[key] = PlannedFile(entry, name, files.get(name), cached)
        return list(planned.values())


@dataclass(frozen=True)
class PlannedFile:
    """One hub file a download plan names: the (first) entry reading it, its path, size and cache
    state."""

    entry: SourceEntry
    path: str
    size: int | None  # bytes, from the repository's file list (None: the list does not name it)
    cached: bool


def _matching(files: Iterable[str], pattern: str) -> list[str]:
    """The paths among ``files`` that match a wildcard ``pattern``, in name order."""
    return sorted(name for name in files if fnmatch.fnmatchcase(name, pattern))


def archive_has_member(path: Path, member: str) -> bool:
    """Whether the archive at ``path`` holds ``member`` (an unreadable archive counts as present, to
    fail loudly later). A tar archive is never listed (a compressed one would be decompressed
    whole): it counts as holding the member until a read streamed through it without finding it,
    which is remembered per file version."""
    if is_tar_archive(path):
        return tar_member_verdict(path, member) is not False
    try:
        with zipfile.ZipFile(path) as archive:
            return member in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return True


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
        raise UserError(
            f"{given} {value}: is a file, not a folder (use 'demo', 'hub', or a mirror folder)"
        )
    if not root.is_dir():
        raise UserError(f"{given} {value}: no such folder (use 'demo', 'hub', or a mirror folder)")
    return SourceLocation("mirror", root.resolve(), packaged_dir("sources"))


def active_entries(
    location: SourceLocation, entries: dict[str, SourceEntry], *, ask_hub: bool = True
) -> dict[str, SourceEntry]:
    """The entries to use: every available entry, with stand-ins only where their primary is
    unavailable. On the hub an entry not cached yet is looked up upstream (``ask_hub`` False:
    counted as available unless the registry says it cannot be read from the hub, or when offline
    it is not cached)."""
    available = {
        name: entry for name, entry in entries.items() if _usable(location, entry, ask_hub)
    }
    return {
        name: entry
        for name, entry in available.items()
        if not entry.stand_in_for or entry.stand_in_for not in available
    }


def _usable(location: SourceLocation, entry: SourceEntry, ask_hub: bool) -> bool:
    """Whether ``entry`` can be read at ``location`` (see :func:`active_entries`)."""
    if location.kind == "hub" and not ask_hub and not hub_offline():
        return not entry.not_on_hub
    return location.absence(entry) is None


def stand_in_notes(
    location: SourceLocation,
    entries: dict[str, SourceEntry],
    active: dict[str, SourceEntry],
    tasks: Iterable[str],
) -> list[str]:
    """One line per unavailable primary whose stand-ins serve one of ``tasks``, and why."""
    tasks = list(tasks)
    stand_ins: dict[str, list[str]] = {}  # primary -> the stand-ins used in its place
    for name, entry in active.items():
        primary = entry.stand_in_for
        serves = any(entry.has_role(task, "real") for task in tasks)
        if primary in entries and primary not in active and serves:
            stand_ins.setdefault(primary, []).append(name)
    notes = []
    for primary, names in stand_ins.items():
        reason = location.absence(entries[primary]) or "unavailable"
        used = (
            f"its stand-in {names[0]} is"
            if len(names) == 1
            else f"its stand-ins {', '.join(names)} are"
        )
        notes.append(f"note: source {primary} is not available ({reason}); {used} used")
    return notes
