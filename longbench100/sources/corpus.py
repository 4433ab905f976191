"""Load every active source once, with token counts, into one in-memory corpus for the builders."""

from __future__ import annotations

import gc
import json
from collections.abc import Collection, Iterator
from concurrent.futures import as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

from longbench100.core.progress import progress_bar
from longbench100.core.workers import worker_pool
from longbench100.sources.drawn_pool import DrawnPool
from longbench100.sources.loader import (
    RawDocument,
    cached_checksums,
    load_raw_documents,
    load_source,
    records_identity,
    sharing_cleaned_texts,
)
from longbench100.sources.locations import SourceLocation, active_entries
from longbench100.sources.near_duplicates import NearDuplicates, find_near_duplicates
from longbench100.sources.readers import load_readers
from longbench100.sources.records import Document, Item, SourceData, draws_little_of
from longbench100.sources.registry import SourceEntry
from longbench100.sources.source_shingles import shingles_by_source, source_key
from longbench100.sources.token_cache import TextCounts, attach_token_counts, cache_path
from longbench100.text.tokenization import Tokenizer


@dataclass
class Corpus:
    """All loaded sources, their registry entries, and lookups by id."""

    entries: dict[str, SourceEntry]
    sources: dict[str, SourceData]
    missing: list[str] = field(default_factory=list)
    documents: dict[str, Document] = field(default_factory=dict)
    left_out: dict[str, frozenset[str]] = field(
        default_factory=dict
    )  # task -> sources giving it no ground truth (a suite's stand_ins = false)
    commits: dict[str, str | None] = field(
        default_factory=dict
    )  # source -> its files' upstream commit
    draws_little: bool | None = None  # the rows draw little of the sources (counted when read);
    # None: not estimated (the run's tasks read whole pools' counts)
    raw: dict[str, list[RawDocument]] = field(
        default_factory=dict
    )  # source -> its documents before cleaning, for pools that clean what they draw
    raw_files: dict[str, dict[str, str]] = field(default_factory=dict)  # their files' checksums
    count_drawn: TextCounts | None = None  # counts a drawn pool's document when read
    _drawn_pools: dict[tuple[str, ...], DrawnPool] = field(
        default_factory=dict, init=False, repr=False
    )  # made when first asked for (drawn_pool)

    def __post_init__(self) -> None:
        for data in self.sources.values():
            self.documents.update(data.documents)

    def sources_with_role(self, task: str, kind: str) -> list[str]:
        """Names of loaded sources that play ``kind`` ("real" or "noisy") in ``task``, in registry order (a source
        ``left_out`` of the task's ground truth plays no "real" role in it)."""
        excluded = self.left_out.get(task, frozenset()) if kind == "real" else frozenset()
        return [
            name
            for name in self.sources
            if self.entries[name].has_role(task, kind) and name not in excluded
        ]

    def drawn_with_role(self, task: str, kind: str) -> list[str]:
        """Names of the sources read before cleaning (``raw``) that play ``kind`` in ``task``, in
        registry order."""
        return [name for name in self.raw if self.entries[name].has_role(task, kind)]

    def drawn_only(self) -> list[str]:
        """The sources read before cleaning only (``raw``), not loaded whole, in registry order."""
        return [name for name in self.raw if name not in self.sources]

    def drawn_pool(self, names: list[str]) -> DrawnPool:
        """The pool of the named sources' raw documents, each cleaned when first read (one per
        set of sources: tasks that share it clean a document once)."""
        key = tuple(names)
        if key not in self._drawn_pools:
            assert self.count_drawn is not None, "load_corpus sets the counter with raw sources"
            self._drawn_pools[key] = DrawnPool(
                [self.entries[name] for name in names], self.raw, self.raw_files, self.count_drawn
            )
        return self._drawn_pools[key]

    def unavailable_with_role(self, task: str, kind: str) -> list[str]:
        """Names of the registry's sources that play ``kind`` in ``task`` but this run could not
        load (``missing``), in registry order."""
        return [name for name in self.missing if self.entries[name].has_role(task, kind)]

    @cached_property
    def near_duplicates(self) -> NearDuplicates:
        """Near-duplicate groups over every loaded document, computed once (and cached on disk,
        keyed by :meth:`content_key` where there is one, and then with each source's shingles
        kept per source)."""
        documents = list(self.documents.values())
        key = self.content_key()
        if key is None:
            return find_near_duplicates(documents)
        keys = {name: source_key(self.entries[name], data) for name, data in self.sources.items()}
        return find_near_duplicates(
            documents, content_key=key, source_shingles=shingles_by_source(keys)
        )

    def content_key(self) -> str | None:
        """What fixes every loaded document's id, source and text, in order: each source's name,
        registry fingerprint, file checksums and the records' format (a source's mapped records
        are cached under the same key); ``None`` where a source was not read from files or the
        corpus holds other documents too."""
        from_sources = sum(len(data.documents) for data in self.sources.values())
        if (
            not self.sources
            or not all(data.files for data in self.sources.values())
            or len(self.documents) != from_sources
        ):
            return None
        return json.dumps(
            [
                records_identity(self.entries[name], data.files)
                for name, data in self.sources.items()
            ]
        )

    def documents_of(self, source_names: list[str]) -> list[Document]:
        """All documents of the named sources, in a stable order."""
        return [doc for name in source_names for doc in self.sources[name].documents.values()]

    def items_of(self, source_names: list[str]) -> list[Item]:
        """All items of the named sources, in a stable order."""
        return [item for name in source_names for item in self.sources[name].items]


def load_corpus(
    location: SourceLocation,
    tokenizer: Tokenizer,
    *,
    only: set[str] | None = None,
    progress: bool = True,
    workers: int = 1,
    tokens_drawn: int | None = None,
    drawn: Collection[str] = (),
) -> Corpus:
    """Load the active sources at ``location`` (optionally only those named) and attach token counts.

    With ``workers`` above 1, the sources whose records or token counts are not cached yet are first
    parsed, cleaned and counted in that many processes (each writes its caches), then every source is
    read back here as from a warm cache; the corpus is the same either way.

    ``tokens_drawn``, for a run whose rows read the token counts of the documents they draw only (at
    most this many tokens): where that is a small part of the sources (:func:`draws_little_of`) and
    their counts are not cached, each document is counted when its count is first read; the
    corpus's ``draws_little`` keeps what was estimated.
    """
    registry = location.registry()
    active = active_entries(location, registry)
    missing = [
        name for name, entry in registry.items() if name not in active and not entry.stand_in_for
    ]
    chosen = {name: entry for name, entry in active.items() if only is None or name in only}
    if workers > 1:  # a run that may count when read leaves the counting to the rows
        _fill_caches(
            location, tokenizer if tokens_drawn is None else None, chosen, workers, progress
        )
    sources: dict[str, SourceData] = {}
    with (
        progress_bar(len(chosen), "loading sources", "source", progress, leave=False) as bar,
        _collection_paused(),
    ):
        for name, entry in chosen.items():
            sources[name] = load_source(location, entry)
            bar.update()
        when_read = tokens_drawn is not None and draws_little_of(
            tokens_drawn,
            (document for data in sources.values() for document in data.documents.values()),
        )
        for name, entry in chosen.items():
            attach_token_counts(tokenizer, entry, sources[name], when_read)
    commits = {name: location.commit(entry) for name, entry in chosen.items()}
    draws_little = None if tokens_drawn is None else when_read
    raw = {
        name: load_raw_documents(location, entry) for name, entry in active.items() if name in drawn
    }
    commits.update((name, location.commit(active[name])) for name in raw)
    return Corpus(
        registry,
        sources,
        missing,
        commits=commits,
        draws_little=draws_little,
        raw={name: documents for name, (documents, _) in raw.items()},
        raw_files={name: files for name, (_, files) in raw.items()},
        count_drawn=TextCounts(tokenizer),
    )


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Hold back Python's cyclic garbage collector while the corpus is read (tens of thousands of lasting objects,
    which its full passes would walk again and again, for nothing); then restore it as it was, with
    what is loaded by then moved out of its reach (``gc.freeze``: the corpus lasts the whole run, so
    the collections the rows' work sets off need not walk it either)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


_worker_tokenizer: Tokenizer | None = None
"""What a cache-filling worker counts with (``None``: it only maps records), set by the pool
initializer (forked: inherited)."""


def _set_worker_tokenizer(tokenizer: Tokenizer | None) -> None:
    """Pool initializer: keep the tokenizer this worker counts with (``None``: none)."""
    global _worker_tokenizer
    _worker_tokenizer = tokenizer


def _uncached(
    location: SourceLocation, tokenizer: Tokenizer | None, entries: dict[str, SourceEntry]
) -> list[list[SourceEntry]]:
    """The entries whose mapped records or token counts (by ``tokenizer``; ``None``: records only)
    are not in the cache yet, grouped by the files they read and how they clean them (a group is
    read in one process, cleaning each text once)."""
    groups: dict[tuple, list[SourceEntry]] = {}
    members = tokenizer.members if tokenizer is not None else ()
    for entry in entries.values():
        checksums = cached_checksums(location, entry)
        counted = checksums is not None and all(
            cache_path(member, entry, checksums).is_file() for member in members
        )
        if not counted:
            key = (
                entry.repo_id,
                entry.revision,
                tuple(spec.display for spec in entry.files),
                entry.clean,
            )
            groups.setdefault(key, []).append(entry)
    return list(groups.values())


def _fill_caches(
    location: SourceLocation,
    tokenizer: Tokenizer | None,
    entries: dict[str, SourceEntry],
    workers: int,
    progress: bool,
) -> None:
    """Parse, clean and count (by ``tokenizer``; ``None``: no counting) the uncached sources in
    ``workers`` processes, each writing its caches."""
    groups = _uncached(location, tokenizer, entries)
    if len(groups) < 2:
        return
    # loaded once here, not in each worker: the vocabulary, and the Parquet reader
    for member in tokenizer.members if tokenizer is not None else ():
        member.load()
    load_readers(spec for group in groups for entry in group for spec in entry.files)
    pool_size = min(workers, len(groups))
    with (
        worker_pool(pool_size, "fork", _set_worker_tokenizer, (tokenizer,)) as pool,
        progress_bar(
            sum(map(len, groups)), "reading new sources", "source", progress, leave=False
        ) as bar,
    ):
        futures = [pool.submit(_fill_cache, location, group) for group in groups]
        for future in as_completed(futures):
            bar.update(
                future.result()
            )  # a source's error stops the run here, as it would in the serial load


def _fill_cache(location: SourceLocation, group: list[SourceEntry]) -> int:
    """Worker: map the sources of ``group`` and count their documents (when the worker has a
    tokenizer), which leaves both in the cache; how many."""
    with sharing_cleaned_texts():
        for entry in group:
            data = load_source(location, entry)
            if _worker_tokenizer is not None:
                attach_token_counts(_worker_tokenizer, entry, data)
    return len(group)
