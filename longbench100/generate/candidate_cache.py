"""Each task's candidates (its items with the fewest and most tokens a prompt about them needs), kept on disk.

Working them out renders and counts a prompt per item (and, for the long-document tasks, searches
each document for the shortest opening that keeps the answer), which a warm run would otherwise redo
at every start. The cache key holds everything they depend on: the task, its template, the tokenizer,
the probe context's options, every loaded source's data (entry fingerprint and file checksums, which
also fix the near-duplicate groups) and the package's own code; a cached list that names an item the
corpus does not hold is ignored. Files are written atomically.

A run works its candidates out once, at its first length, for all of its lengths
(:meth:`~longbench100.tasks.base.TaskBuilder.candidates` does not depend on the length), so the key
leaves the probe's length and budget out: a run at another length reads them back.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Callable, cast

from longbench100.core.cache_entries import cached_json, python_sources_digest
from longbench100.core.paths import cache_dir
from longbench100.fitting.fit import BuildContext
from longbench100.sources.corpus import Corpus

from ..tasks.base import Candidate, TaskBuilder

PACKAGE = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def code_digest() -> str:
    """The sha256 of the package's Python files (a changed builder or counting rule makes new candidates)."""
    return python_sources_digest(PACKAGE)


def cache_key(builder: TaskBuilder, ctx: BuildContext, corpus: Corpus, template_sha256: str) -> str:
    """What ``builder``'s candidates depend on, as one digest."""
    parts = [
        code_digest(),
        builder.name,
        template_sha256,
        ctx.tokenizer.identity,
        ctx.tokenizer.counting,
        [ctx.seed, ctx.whole_documents, ctx.chat, ctx.negatives],  # not the length: see above
        sorted(
            (name, corpus.entries[name].fingerprint(), sorted(data.files.items()))
            for name, data in corpus.sources.items()
        ),
        sorted(corpus.left_out.get(builder.name, ())),
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]


def cached_candidates(
    builder: TaskBuilder,
    ctx: BuildContext,
    corpus: Corpus,
    template_sha256: str,
    compute: Callable[[BuildContext], list[Candidate] | None],
) -> list[Candidate] | None:
    """``compute(ctx)``'s candidates, read back from the cache when they were worked out before for the same inputs."""
    path = (
        cache_dir()
        / "candidates"
        / f"{builder.name}-{cache_key(builder, ctx, corpus, template_sha256)}.json"
    )
    items = {item.id: item for item in getattr(builder, "items", [])}

    def decode(stored: object) -> list[Candidate] | None:
        """The stored candidates (a ``KeyError`` for an item the corpus lacks)."""
        if stored is None:
            return None
        rows = cast(list[list], stored)
        return [Candidate(items[item_id], low, high) for item_id, low, high in rows]

    def encode(candidates: list[Candidate] | None) -> object:
        """The candidates as kept: item id and token bounds."""
        if candidates is None:
            return None
        return [[c.item.id, c.min_tokens, c.max_tokens] for c in candidates]

    return cached_json(path, lambda: compute(ctx), encode, decode)
