"""Download ahead of time what a suite (or a list of sources) reads from the hub, saying the size
first.

``longbench100 sources fetch`` runs these two steps: :func:`plan_fetch` picks the entries and their
files (from the repositories' file lists, kept per pinned commit) and :func:`fetch_planned`
downloads the files not cached yet, one line per file. The hub cache left behind is what
``generate`` reads offline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from longbench100.catalog.suites import load_suite
from longbench100.core.errors import UserError
from longbench100.core.hub_access import download, human_size, is_commit
from longbench100.sources.locations import PlannedFile, SourceLocation, active_entries
from longbench100.sources.registry import SourceEntry


@dataclass(frozen=True)
class FetchPlan:
    """The entries to fetch, their files (each once), one line per entry left out, with why, and
    the entries left out that nothing fetched replaces (``unmet``)."""

    entries: tuple[SourceEntry, ...]
    files: tuple[PlannedFile, ...]
    notes: tuple[str, ...]
    unmet: tuple[str, ...] = ()

    def summary(self) -> str:
        """``fetch: 12 files of 9 sources: 3 to download, 11.3 GB; 9 cached already`` (and files of
        unknown size, and the repositories not pinned to a commit)."""
        missing = [planned for planned in self.files if not planned.cached]
        total = sum(planned.size or 0 for planned in missing)
        unknown = sum(1 for planned in missing if planned.size is None)
        unpinned = sorted(
            {entry.repo_id for entry in self.entries if not is_commit(entry.revision)}
        )
        return (
            f"fetch: {self.counted()}: {len(missing)} to download, {human_size(total)}"
            + (f" (and {unknown} of unknown size)" if unknown else "")
            + f"; {len(self.files) - len(missing)} cached already"
            + (f"; not pinned to a commit: {', '.join(unpinned)}" if unpinned else "")
        )

    def counted(self) -> str:
        """``12 files of 9 sources`` (``1 file of 1 source``)."""
        files, sources = len(self.files), len(self.entries)
        return f"{files} file{'s' * (files != 1)} of {sources} source{'s' * (sources != 1)}"


def plan_fetch(
    location: SourceLocation, *, suite_name: str | None = None, names: list[str] | None = None
) -> FetchPlan:
    """The files that the sources of suite ``suite_name``'s tasks (or the sources ``names``) read on
    the hub.

    A stand-in is planned only where its primary is not on the hub; an entry the hub lacks is left
    out with a note. One request per repository lists its files (kept once fetched at a pinned
    commit)."""
    registry = location.registry()
    if names is not None:
        unknown = [name for name in names if name not in registry]
        if unknown or not names:
            raise UserError(
                f"sources fetch: unknown source {', '.join(unknown) or '(none named)'}: "
                f"use {', '.join(registry)}"
            )
        wanted = {name: registry[name] for name in names}
    else:
        tasks = load_suite(suite_name or "").tasks
        wanted = {
            name: entry
            for name, entry in registry.items()
            if any(role.partition(":")[0] in tasks for role in entry.roles)
        }
    related = {
        name: entry
        for name, entry in registry.items()
        if name in wanted
        or entry.stand_in_for in wanted
        or any(e.stand_in_for == name for e in wanted.values())
    }
    active = active_entries(location, related)
    chosen = tuple(entry for name, entry in active.items() if name in wanted)
    reasons = {
        name: location.absence(entry) for name, entry in wanted.items() if name not in active
    }
    left_out = {name: reason for name, reason in reasons.items() if reason is not None}
    notes = tuple(f"left out: source {name}: {reason}" for name, reason in left_out.items())
    unmet = tuple(name for name in left_out if not _replaced(registry[name], chosen))
    return FetchPlan(chosen, tuple(location.download_plan(chosen)), notes, unmet)


def _replaced(entry: SourceEntry, chosen: tuple[SourceEntry, ...]) -> bool:
    """Whether a source left out is not needed after all: one the registry never reads from the
    hub, a stand-in whose primary is fetched, or a primary whose stand-in is."""
    names = {other.name for other in chosen}
    return (
        bool(entry.not_on_hub)
        or entry.stand_in_for in names
        or any(other.stand_in_for == entry.name for other in chosen)
    )


def fetch_planned(files: tuple[PlannedFile, ...], echo: Callable[[str], None]) -> None:
    """Download the planned files not cached yet, one line per file before it starts
    (huggingface_hub shows a progress bar on a terminal)."""
    missing = [planned for planned in files if not planned.cached]
    for number, planned in enumerate(missing, start=1):
        entry = planned.entry
        size = human_size(planned.size) if planned.size is not None else "size unknown"
        echo(
            f"[{number}/{len(missing)}] {entry.repo_id}@{entry.revision[:12]} "
            f"{planned.path} ({size})"
        )
        download(f"source {entry.name}", entry.repo_id, entry.revision, planned.path)
