"""Each task's chance levels (:func:`~longbench100.baselines.check.cell_chances`), kept on disk.

A task's chance rests only on its own records (every length) and the suite's metric for it, yet
working it out re-reads every prompt and grades every row's chance answers with the task's metric
(ROUGE-L over other rows' answers for the summary tasks), which a warm ``generate`` would otherwise
redo at each run. The cache key holds everything the figures depend on: the sha256 of each of the
task's data files, the metric family, and the source of the packages that read, view and grade the
records (:data:`CHANCE_CODE`), so edited data or changed code is never read back from an older
entry. A damaged or foreign entry is worked out again; files are written atomically.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from longbench100.core.cache_entries import cached_json, python_sources_digest
from longbench100.core.digests import file_sha256
from longbench100.core.paths import cache_dir
from longbench100.folders.layout import DataFileRef

CHANCE_CACHE_VERSION = 1
"""Bumped when the stored form of an entry changes."""
CHANCE_CODE = ("baselines", "scoring", "folders", "catalog", "text", "core")
"""The packages whose code a chance level depends on (record reading, prompt views, candidate
answers and the classic metrics with their text normalisation)."""
PACKAGE = Path(__file__).resolve().parents[1]

CellChances = list[tuple[str, float]]
"""A task's chance level per length label, in the order its cells were first seen."""
FileDigests = dict[tuple[str, str], str]
"""The sha256 of data files, by task and length label."""


@lru_cache(maxsize=1)
def chance_code_digest() -> str:
    """The sha256 of the Python files of :data:`CHANCE_CODE` (a changed rule makes new figures)."""
    return python_sources_digest(PACKAGE, CHANCE_CODE)


def chance_cache_path(
    task: str, files: list[DataFileRef], family: str | None, digests: FileDigests | None = None
) -> Path:
    """Where the chance levels of ``task`` (data ``files``, every length; metric ``family``) are
    kept: a digest of everything they depend on. A file's sha256 is taken from ``digests`` where
    it is there (``generate`` has just worked it out as it wrote the file), else read."""
    known = digests or {}
    parts = [
        CHANCE_CACHE_VERSION,
        chance_code_digest(),
        task,
        family,
        sorted(
            (ref.label, known.get((ref.task, ref.label)) or file_sha256(ref.path)) for ref in files
        ),
    ]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]
    return cache_dir() / "chances" / f"{task}-{key}.json"


def cached_task_chances(
    task: str,
    files: list[DataFileRef],
    family: str | None,
    compute: Callable[[], CellChances],
    digests: FileDigests | None = None,
) -> CellChances:
    """``compute()``'s chance levels of ``task``, read back from the cache when they were worked out
    before from the same data files (whose sha256 ``digests`` may give), metric and code."""
    return cached_json(
        chance_cache_path(task, files, family, digests),
        compute,
        lambda chances: [[label, chance] for label, chance in chances],
        _decode,
    )


def _decode(stored: object) -> CellChances:
    """The stored chance levels (a ``ValueError`` when not of the stored form)."""
    if not isinstance(stored, list) or not all(
        isinstance(entry, list)
        and len(entry) == 2
        and isinstance(entry[0], str)
        and isinstance(entry[1], float)
        for entry in stored
    ):
        raise ValueError("not a list of [label, chance] pairs")
    return [(label, chance) for label, chance in stored]
