"""BM25 over the documents of one source: the index is built once per source and cached on disk.

The library is ``bm25s`` (docs/benchmarks.md compares it with ``rank-bm25``): its sparse index scores
a query against 13k passages in well under a millisecond and saves to plain NumPy files. Text is
tokenised by ``bm25s.tokenize``: lower-cased words of two or more characters, English stop words
dropped, no stemming. The cache key joins the index settings, the registry entry's data-shaping
fingerprint (which includes its cleaning) and the sha256 of every source file read, like the
token-count cache; the folder is written under a temporary name and renamed, so a crash never
leaves half an index.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import bm25s
import numpy as np

from longbench100.core.cache_entries import read_json_entry, write_json_entry
from longbench100.core.checked_files import folder_checksums
from longbench100.core.paths import cache_dir
from longbench100.sources.records import SourceData
from longbench100.sources.registry import SourceEntry

SETTINGS = {
    "library": "bm25s",
    "method": "lucene",
    "k1": 1.5,
    "b": 0.75,
    "stopwords": "en",
    "version": 1,
}
DOC_IDS_FILE = "doc_ids.json"


@dataclass
class SourceIndex:
    """The BM25 index of one source's documents; ``doc_ids[i]`` is the document at index position ``i``."""

    source: str
    doc_ids: list[str]
    retriever: bm25s.BM25
    from_cache: bool = False

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document (in ``doc_ids`` order) for ``query``; all zero when no query word is indexed."""
        words = bm25s.tokenize(
            query, stopwords=SETTINGS["stopwords"], return_ids=False, show_progress=False
        )[0]
        if not words:
            return np.zeros(len(self.doc_ids), dtype=np.float32)
        return self.retriever.get_scores(words)

    def ranked(
        self, query: str, excluded: Callable[[str], bool] = lambda doc_id: False
    ) -> list[tuple[str, float]]:
        """Every document id not ``excluded``, with its score, best first (ties: index order, so the ranking is deterministic)."""
        scores = self.scores(query)
        order = np.lexsort((np.arange(len(scores)), -scores))
        return [
            (self.doc_ids[i], round(float(scores[i]), 4))
            for i in order
            if not excluded(self.doc_ids[i])
        ]

    def top_k(
        self, query: str, k: int, excluded: Callable[[str], bool] = lambda doc_id: False
    ) -> list[tuple[str, float]]:
        """The ``k`` best documents for ``query`` that are not ``excluded`` (e.g. the gold and its near-duplicates)."""
        return self.ranked(query, excluded)[:k]


def index_path(entry: SourceEntry, data: SourceData) -> Path:
    """The cache folder of ``data``'s index (read from ``entry``)."""
    key = json.dumps([SETTINGS, entry.fingerprint(), sorted(data.files.items())])
    return cache_dir() / "bm25" / f"{entry.name}-{hashlib.sha256(key.encode()).hexdigest()[:24]}"


_LOADED: dict[Path, SourceIndex] = {}


def source_index(entry: SourceEntry, data: SourceData) -> SourceIndex:
    """The index of ``data``: from this process's memory, else the disk cache, else built (and cached)."""
    path = index_path(entry, data)
    if path in _LOADED:
        return _LOADED[path]
    doc_ids = list(data.documents)
    index = _read(path, entry.name, doc_ids)
    if index is None:
        index = _build(entry.name, doc_ids, [data.documents[doc_id].text for doc_id in doc_ids])
        _write(index, path)
    _LOADED[path] = index
    return index


def _build(source: str, doc_ids: list[str], texts: list[str]) -> SourceIndex:
    """Tokenise and index ``texts``."""
    retriever = bm25s.BM25(method=SETTINGS["method"], k1=SETTINGS["k1"], b=SETTINGS["b"])
    retriever.index(
        bm25s.tokenize(texts, stopwords=SETTINGS["stopwords"], show_progress=False),
        show_progress=False,
    )
    return SourceIndex(source, doc_ids, retriever)


def _read(path: Path, source: str, doc_ids: list[str]) -> SourceIndex | None:
    """The cached index, or ``None`` when it is absent, unreadable, damaged or made for other
    documents."""
    try:
        kept = read_json_entry(path / DOC_IDS_FILE)
        if kept != {"doc_ids": doc_ids, "files": _index_checksums(path)}:
            return None
        retriever = bm25s.BM25.load(str(path), show_progress=False)
    except (OSError, ValueError):
        return None
    return SourceIndex(source, doc_ids, retriever, from_cache=True)


def _index_checksums(folder: Path) -> dict[str, int]:
    """The checksums of the index files bm25s saved in ``folder`` (not of the ids file)."""
    return {
        name: checksum
        for name, checksum in folder_checksums(folder).items()
        if name != DOC_IDS_FILE
    }


def _write(index: SourceIndex, path: Path) -> None:
    """Save ``index`` under a temporary folder next to ``path``, then rename it into place (a
    cache folder that cannot be written keeps nothing)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    except OSError:
        return
    try:
        index.retriever.save(str(temporary), show_progress=False)
        kept = {"doc_ids": index.doc_ids, "files": _index_checksums(temporary)}
        write_json_entry(temporary / DOC_IDS_FILE, kept)
        os.replace(temporary, path)
    except OSError:
        shutil.rmtree(
            temporary, ignore_errors=True
        )  # another process won the race, or the cache is read-only: the index still works
