"""A pool of padding documents read as their sources' rows give them, each cleaned when a prompt
first draws it.

An essay haystack (RULER's niah tasks) draws whole documents from its padding sources in a random
order until its budget is reached; a short run draws a small part of them. Its pool is therefore
the sources' documents before cleaning (:func:`~longbench100.sources.loader.load_raw_documents`),
and a document is cleaned by its source's own steps (as a whole load cleans it, so its text and id
are the same) and counted when first read. What was cleaned is kept in the cache folder for the
next run, under a key that fixes the raw pool.

Which cleaned documents are near-copies of which is worked out when a prompt first asks, for
every document cleaned by then: the first time in one vectorised pass, so a run cleans ahead
what its rows' first passes read at least (:meth:`DrawnPool.read_ahead`).
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

from longbench100.core.checked_files import write_checked
from longbench100.core.paths import cache_dir
from longbench100.sources.loader import (
    RAW_FORMAT,
    RECORDS_FORMAT,
    RawDocument,
    clean_once,
    document_from_raw,
    read_pickled,
)
from longbench100.sources.near_duplicates import ShingleIndex
from longbench100.sources.records import Document
from longbench100.sources.registry import SourceEntry
from longbench100.sources.token_cache import MemberCounts, TextCounts

Cleaned = tuple[str, str, str | None]
"""A cleaned document as kept: its id, text and title."""


class DrawnPool:
    """The raw documents of some sources (registry order, each source's in row order), each
    cleaned when first read; :attr:`documents` holds one :class:`DrawnDocument` per raw one."""

    def __init__(
        self,
        entries: Sequence[SourceEntry],
        raw: dict[str, list[RawDocument]],
        files: dict[str, dict[str, str]],
        counts: TextCounts,
    ) -> None:
        self._entries = {entry.name: entry for entry in entries}
        self.raw = [document for entry in entries for document in raw[entry.name]]
        self._counts = counts
        self.key = hashlib.sha256(
            json.dumps(
                [
                    [RECORDS_FORMAT, RAW_FORMAT, entry.name, entry.fingerprint()]
                    + [sorted(files[entry.name].items())]
                    for entry in entries
                ]
            ).encode()
        ).hexdigest()[:32]
        self._kept, self._near = _read_kept(self._path)
        self._new: dict[int, Cleaned] = {}  # read in this run, in the order first read
        self._new_counts: dict[int, MemberCounts] = {}
        self._ahead: dict[int, Cleaned] = {}  # cleaned ahead of being read (:meth:`read_ahead`)
        self._unrelated: list[int] = []  # cleaned, their near-copies not yet worked out
        self._index: ShingleIndex | None = None  # the cleaned texts' shingles, when one is new
        self._numbers: list[int] = []  # the document of each text of the index
        self._first_read: dict[str, int] | None = None  # each text's first document read
        self.documents: list[Document] = [
            DrawnDocument(self, index) for index in range(len(self.raw))
        ]

    @property
    def _path(self) -> Path:
        return cache_dir() / "drawn_documents" / f"{self.key}.pickle"

    @property
    def _counts_path(self) -> Path:
        return cache_dir() / "drawn_documents" / f"{self.key}-counts-{self._counts.key}.pickle"

    @cached_property
    def _kept_counts(self) -> dict[int, MemberCounts]:
        """The token counts an earlier run kept, by document (empty when absent or damaged)."""
        kept = read_pickled(self._counts_path)
        return kept if isinstance(kept, dict) else {}

    def tokens(self, index: int) -> int:
        """The tokens of document ``index``'s cleaned text (:meth:`_tokens_of`)."""
        return self._tokens_of(index, self.cleaned(index)[1])

    def _tokens_of(self, index: int, text: str) -> int:
        """The tokens of document ``index``'s cleaned ``text``: recalled where an earlier run kept
        its counts, else counted now (and kept by :meth:`keep`)."""
        if not text:
            return 0
        kept = self._kept_counts.get(index)
        if kept is not None:
            return self._counts.recall(text, kept)
        tokens, self._new_counts[index] = self._counts.count(text)
        return tokens

    def cleaned(self, index: int) -> Cleaned:
        """Document ``index`` cleaned (kept from an earlier run, or cleaned now): id, text, title;
        a passage block that cleaning empties has an empty text (no document)."""
        known = self._kept.get(index) or self._new.get(index)
        if known is None:
            ahead = self._ahead.pop(index, None)
            known = self._new[index] = ahead or self._clean(index)
            if known[1]:
                self._link_identical(index, known[1])
        return known

    def read_ahead(self, passes: Iterable[tuple[Sequence[int], int]]) -> None:
        """Clean and count, for each essay pass (the order it reads the pool in, and the tokens
        it wants), the documents it reads at least: those before its placed documents reach the
        tokens, were it to place every one. Read as a pass reads them, so that their near-copies
        are worked out in one pass (:meth:`near_copies`); none counts as read until a row reads it.
        Nothing is done where an earlier run kept what it cleaned (a warm run reads it back)."""
        if self._kept:
            return
        for order, tokens_wanted in passes:
            total = 0
            for index in order:
                if total >= tokens_wanted:
                    break
                known = self._new.get(index) or self._ahead.get(index)
                if known is None:
                    known = self._ahead[index] = self._clean(index)
                if known[1]:
                    total += self._tokens_of(index, known[1])

    def near_copies(self, index: int) -> frozenset[int]:
        """The documents cleaned so far whose text is document ``index``'s (read now) or a
        near-copy of it (:class:`~longbench100.sources.near_duplicates.ShingleIndex`)."""
        self.cleaned(index)
        self.relate_cleaned()
        return self._near.get(index, frozenset())

    def prompt_guard(self) -> DistinctDrawn:
        """What keeps a document out of a prompt that holds its text or a near-copy of it (as
        :class:`~longbench100.sources.near_duplicates.DistinctInPrompt` decides, from the
        relations kept for the pool)."""
        return DistinctDrawn(self)

    def _clean(self, index: int) -> Cleaned:
        """Document ``index`` cleaned by its source's steps (its near-copies to be worked out)."""
        raw = self.raw[index]
        document = document_from_raw(self._entries[raw.source], raw, clean_once)
        if document is None:
            return "", "", None
        self._unrelated.append(index)
        return document.id, document.text, document.title

    def _link_identical(self, index: int, text: str) -> None:
        """Relate document ``index`` (read now) to the first document read with its text (the
        kept ones first, in the order they were read), as a text with no shingle is told."""
        if self._first_read is None:
            self._first_read = {}
            for number, (_, kept_text, _) in self._kept.items():
                self._first_read.setdefault(kept_text, number)
        first = self._first_read.setdefault(text, index)
        if first != index:
            self._link(index, first)

    def relate_cleaned(self) -> None:
        """Work out which cleaned documents copy those cleaned since the last time, both ways:
        the first time in one vectorised pass over every cleaned text, then one at a time."""
        if not self._unrelated:
            return
        texts = {**self._kept, **self._new, **self._ahead}
        if self._index is None:
            self._numbers = [number for number, (_, text, _) in self._kept.items() if text]
            self._numbers += self._unrelated
            self._index, pairs = ShingleIndex.of_texts([texts[n][1] for n in self._numbers])
            for first, second in pairs:
                self._link(self._numbers[first], self._numbers[second])
        else:
            for index in self._unrelated:
                for found in self._index.add(texts[index][1]):
                    self._link(index, self._numbers[found])
                self._numbers.append(index)
        self._unrelated = []

    def _link(self, index: int, other: int) -> None:
        """Record that documents ``index`` and ``other`` are near-copies (or identical)."""
        self._near[index] = self._near.get(index, frozenset()) | {other}
        self._near[other] = self._near.get(other, frozenset()) | {index}

    def read_documents(self) -> list[Document]:
        """The documents cleaned so far (kept or read in this run), with text, in pool order."""
        return [
            document
            for index, document in enumerate(self.documents)
            if (index in self._kept or index in self._new) and document.text
        ]

    def keep(self) -> None:
        """Keep the documents cleaned and counted in this run with those kept before (nothing when
        none is new; an unwritable cache only costs the work next time)."""
        self.relate_cleaned()
        if self._new:
            self._kept = {**self._kept, **self._new}
            self._new = {}
            kept = {"documents": self._kept, "near": self._near}
            write_checked(self._path, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
        if self._new_counts:
            self._kept_counts.update(self._new_counts)
            self._new_counts = {}
            counts = pickle.dumps(self._kept_counts, protocol=pickle.HIGHEST_PROTOCOL)
            write_checked(self._counts_path, counts)


def _read_kept(path: Path) -> tuple[dict[int, Cleaned], dict[int, frozenset[int]]]:
    """The cleaned documents an earlier run kept and which of them copy which (empty when absent
    or damaged)."""
    kept = read_pickled(path)
    if not isinstance(kept, dict) or not all(
        isinstance(kept.get(part), dict) for part in ("documents", "near")
    ):
        return {}, {}  # the cleaned texts are read back only with their near-copies
    return kept["documents"], kept["near"]


class DistinctDrawn:
    """The documents of a :class:`DrawnPool` placed so far in one prompt: a document whose text is
    one of theirs or a near-copy of one is kept out."""

    def __init__(self, pool: DrawnPool) -> None:
        self._pool = pool
        self._placed: set[int] = set()

    def admit(self, document: Document) -> bool:
        """Whether ``document`` (one of the pool's) is new to the prompt (then counted as placed)."""
        assert isinstance(document, DrawnDocument), "a drawn pool's prompts place its documents"
        index = document.index
        if self._placed & self._pool.near_copies(index):
            return False
        self._placed.add(index)
        return True


class DrawnDocument(Document):
    """Document ``index`` of a :class:`DrawnPool`: its source is known at once, its id, text and
    title when first read (cleaned then), its tokens when first read (counted then)."""

    _pool: DrawnPool
    _index: int

    def __init__(self, pool: DrawnPool, index: int) -> None:
        # as Document.with_tokens sets a frozen document's fields: a pool holds a thousand or more
        self.__dict__.update(source=pool.raw[index].source, _pool=pool, _index=index)

    @property
    def index(self) -> int:
        """The document's place in its pool."""
        return self._index

    @property
    def pool_key(self) -> str:
        """The key of its pool, which fixes every raw document of it (read without cleaning)."""
        return self._pool.key

    @cached_property
    def id(self) -> str:
        """The id a whole load gives the document."""
        return self._pool.cleaned(self._index)[0]

    @cached_property
    def text(self) -> str:
        """The cleaned text (empty: cleaning left nothing, no document)."""
        return self._pool.cleaned(self._index)[1]

    @cached_property
    def title(self) -> str | None:
        """The cleaned title, where the source gives one."""
        return self._pool.cleaned(self._index)[2]

    @cached_property
    def tokens(self) -> int:
        """The tokens of the cleaned text, counted when first read."""
        return self._pool.tokens(self._index)

    def __repr__(self) -> str:
        return f"DrawnDocument({self.source!r}, {self._index})"
