"""The opening shingles of each source's documents, kept from one run to the next per source.

A document's shingles (:func:`~longbench100.sources.near_duplicates.text_shingles`) are a fact
about that document alone, so they are kept per source, keyed by what fixes its documents
(:func:`~longbench100.sources.loader.records_identity`): a run over a new set of sources reads
them back and only pairs them (:func:`~longbench100.sources.near_duplicates.find_near_duplicates`).
``sources verify`` keeps them as it loads each source. A damaged, foreign or torn file is read as
absent and worked out again (:mod:`longbench100.core.marshal_cache`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from longbench100.core.marshal_cache import read_marshal, write_marshal
from longbench100.core.paths import cache_dir
from longbench100.sources.loader import records_identity
from longbench100.sources.near_duplicates import SHINGLE_HASHING, SourceShingles, text_shingles
from longbench100.sources.records import Document, SourceData
from longbench100.sources.registry import SourceEntry

if TYPE_CHECKING:
    import numpy as np

SHINGLES_FORMAT = 1
"""Bump when what a kept file holds changes."""
_HASHES = "<u8"  # the shingle hashes as kept: little-endian 64-bit
_OWNERS = "<i4"  # the number of each hash's document in its source, as kept


def source_key(entry: SourceEntry, data: SourceData) -> str:
    """What fixes the documents of ``data`` (``entry``'s records, mapped from files), as a
    string."""
    return json.dumps(records_identity(entry, data.files))


def shingles_by_source(keys: Mapping[str, str]) -> SourceShingles:
    """For :func:`~longbench100.sources.near_duplicates.find_near_duplicates`: the shingles of
    every document of a source (its ``documents``, in the order it maps them), kept under the
    source's key in ``keys``."""

    def shingles_of(source: str, documents: Sequence[Document]) -> tuple[np.ndarray, np.ndarray]:
        return kept_shingles(source, keys[source], [document.text for document in documents])

    return shingles_of


def kept_shingles(source: str, key: str, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~longbench100.sources.near_duplicates.text_shingles` of ``texts`` (every document
    of ``source``, as ``key`` fixes them, in order), read back when kept, else worked out and
    kept."""
    import numpy as np

    path = _kept_path(source, key)
    stored = read_marshal(path)
    if isinstance(stored, tuple) and len(stored) == 3 and stored[0] == len(texts):
        _, hashes, owners = stored
        if (
            isinstance(hashes, bytes)
            and isinstance(owners, bytes)
            and len(hashes) == 2 * len(owners)
        ):
            return np.frombuffer(hashes, _HASHES), np.frombuffer(owners, _OWNERS)
    hashes, owners = text_shingles(list(texts))
    write_marshal(
        path,
        (len(texts), hashes.astype(_HASHES).tobytes(), owners.astype(_OWNERS).tobytes()),
    )
    return hashes, owners


def keep_source_shingles(entry: SourceEntry, data: SourceData) -> None:
    """Work out and keep the shingles of ``data``'s documents unless they are kept already (a
    source just loaded: the next run over any set of sources that holds it reads them back)."""
    if not data.files or not data.documents:
        return  # not read from files (nothing fixes them), or nothing to shingle
    key = source_key(entry, data)
    if not _kept_path(entry.name, key).is_file():
        kept_shingles(entry.name, key, [document.text for document in data.documents.values()])


def _kept_path(source: str, key: str) -> Path:
    """The file that keeps the shingles of ``source``'s documents as ``key`` fixes them, under
    the shingles' rule."""
    text = json.dumps([SHINGLES_FORMAT, *SHINGLE_HASHING, key])
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    return cache_dir() / "shingles" / f"{source}-{digest}.marshal"
