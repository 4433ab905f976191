"""passage_retrieval's two ambiguity decisions, kept on disk so a warm run fits no TF-IDF.

Both decisions are fixed by their texts, so each is worked out once and read back afterwards:

- which documents of a padding pool a summary fits nearly as well as its gold (the pool's TF-IDF is
  fitted on the whole pool): keyed by the pool's content (the source's registry fingerprint, its
  files' checksums, the records' format and the ids the pool holds), the item, its summary and gold
  text;
- whether a drawn prompt holds a passage the summary fits nearly as well as its gold (TF-IDF fitted
  on the prompt's passages): keyed by the summary, the passages' texts and the gold's place.

Every key also holds the rule's constants, scikit-learn's version (its stop words and arithmetic)
and :data:`FORMAT`. Each entry is one small file, written atomically, so worker processes may
write side by side; a damaged or unreadable entry is worked out again, and a read-only cache only
costs the work.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable, cast

from longbench100.core.cache_entries import cached_json
from longbench100.core.paths import cache_dir
from longbench100.sources.corpus import Corpus
from longbench100.sources.loader import RECORDS_FORMAT
from longbench100.sources.records import Document, Item

FORMAT = 1
"""Bump when the decisions' rule changes in a way the key does not show (e.g. the TF-IDF
settings in ``baselines/lexical.tfidf_vectorizer``)."""


_WHEEL_INFO = ("scikit_learn-", ".dist-info")
"""How a scikit-learn wheel's metadata folder is named, around its version."""


@lru_cache(maxsize=1)
def _sklearn_version() -> str:
    """scikit-learn's installed version, read without importing it: from the name of its wheel's
    ``scikit_learn-<version>.dist-info`` folder, first on the import path (what
    :func:`importlib.metadata.version` finds there, without the imports that cost a warm run more
    than its lookups), else from :mod:`importlib.metadata` (an install of another form)."""
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(_WHEEL_INFO[0]) and name.endswith(_WHEEL_INFO[1]):
                return name[len(_WHEEL_INFO[0]) : -len(_WHEEL_INFO[1])]
    from importlib import metadata

    try:
        return metadata.version("scikit-learn")
    except metadata.PackageNotFoundError:
        return "absent"


def _digest(parts: list) -> str:
    """One hex digest of ``parts`` (JSON-serialisable)."""
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _text_digest(texts: list[str]) -> str:
    """A digest of ``texts`` in order, each length-prefixed so no two lists share one."""
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def _rule(share: float, ngrams: int) -> list:
    """What every decision's key shares: the rule's constants and what computes it."""
    return [FORMAT, share, ngrams, _sklearn_version()]


def pool_key(corpus: Corpus, source: str, pool: list[Document]) -> str:
    """The content digest of ``source``'s padding ``pool``: its registry fingerprint, its files'
    checksums, the records' format (these fix the texts) and the ids the pool holds."""
    return _digest(
        [
            corpus.entries[source].fingerprint(),
            sorted(corpus.sources[source].files.items()),
            RECORDS_FORMAT,
            [document.id for document in pool],
        ]
    )


def cached_exclusions(
    pool: str,
    item: Item,
    gold_text: str,
    rule: tuple[float, int],
    compute: Callable[[], list[str]],
) -> frozenset[str]:
    """The ids of the pool documents ``item``'s summary fits nearly as well as its gold, as
    ``compute()`` lists them, read back when worked out before for pool key ``pool``."""
    key = _digest([*_rule(*rule), pool, item.id, _text_digest([item.summary or "", gold_text])])
    path = cache_dir() / "passage_pool_exclusions" / f"{key}.json"
    return frozenset(cast(list[str], _cached(path, compute, _is_id_list)))


def cached_ambiguity(
    summary: str,
    texts: list[str],
    gold: int,
    rule: tuple[float, int],
    compute: Callable[[], bool],
) -> bool:
    """Whether the prompt's passages ``texts`` leave ``summary`` ambiguous, as ``compute()`` says,
    read back when worked out before for the same texts."""
    key = _digest([*_rule(*rule), gold, _text_digest([summary, *texts])])
    path = cache_dir() / "passage_ambiguity" / f"{key}.json"
    return bool(_cached(path, compute, lambda value: isinstance(value, bool)))


def _is_id_list(value: object) -> bool:
    """Whether ``value`` is a list of document ids."""
    return isinstance(value, list) and all(isinstance(doc_id, str) for doc_id in value)


def _cached(path: Path, compute: Callable[[], object], valid: Callable[[object], bool]) -> object:
    """The value stored at ``path`` (``{"value": ...}``) when ``valid``, else ``compute()``'s,
    stored there."""

    def decode(stored: object) -> object:
        value = cast(dict, stored)["value"]
        if not valid(value):
            raise ValueError("not a stored decision")
        return value

    return cached_json(path, compute, lambda value: {"value": value}, decode)
