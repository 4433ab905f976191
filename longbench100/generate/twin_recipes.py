"""The control twins of a data file, kept on disk as recipes: how each twin's prompt is spelled.

A twin's prompt is made of stretches of texts a warm run holds anyway (the data file's prompts, the
task's pool documents) and a few short literals (the separators between drawn texts), so a recipe
names those stretches (:data:`~longbench100.fitting.refill.Segment`) with the twin's row, kind,
token count and extra fields: a run that finds one spells the twins from it instead of drawing,
cutting and counting their fills again. A recipe is kept only when it spells every twin of the file
exactly as built (checked as it is made), and only for a file whose twins need no long literal (a
label-mapping task's relabelled demonstrations are new text: they are built each run).

The cache key holds everything the twins depend on: the data file's sha256, the task and length,
the tokenizer, the chat template, the budget and seed, the pool's documents in order (a drawn
pool's key, or every loaded document: the corpus's
:meth:`~longbench100.sources.corpus.Corpus.content_key`) and the
package's code. A damaged, foreign or ill-formed entry is built again; files are written atomically.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from longbench100.core.cache_entries import read_json_entry, write_json_entry
from longbench100.core.paths import cache_dir
from longbench100.fitting.refill import Segment
from longbench100.folders.layout import CONTROL_KINDS
from longbench100.generate.candidate_cache import code_digest
from longbench100.sources.drawn_pool import DrawnDocument
from longbench100.sources.records import Document
from longbench100.text.tokenization import Tokenizer

TWIN_RECIPE_VERSION = 1
"""Bumped when the stored form of an entry changes."""
TEXT_KINDS = ("prompt", "pool", "titled")
"""The texts a segment names: a row's prompt, a pool document's text, or its text as a titled
document is shown (title with body)."""
LITERAL_LIMIT = 64
"""The longest literal a file's twins may need for its recipes to be kept (the separators between
drawn texts are literals; new text, such as relabelled demonstrations, is not kept)."""


@dataclass(frozen=True)
class TwinRecipe:
    """One twin: the data row it twins, its kind, its prompt's segments and token count, and the
    fields it adds (``filled_from``, ``context_of``)."""

    row: int
    kind: str
    segments: list[Segment]
    tokens: int
    extra: dict


@dataclass(frozen=True)
class TwinKey:
    """What a task and length's twins depend on besides their data file."""

    task: str
    label: str
    tokenizer: Tokenizer
    chat: bool
    budget: int
    seed: int
    corpus_key: str | None  # the corpus's content key, where the pool's texts come from
    pool: list[Document]


def recipes_path(key: TwinKey, data_sha256: str) -> Path | None:
    """Where the recipes of ``key``'s twins of the data file with ``data_sha256`` are kept;
    ``None`` when the pool's documents cannot be told by a key (they are then built each run)."""
    pool = _pool_identity(key.pool, key.corpus_key)
    if pool is None:
        return None
    parts = [
        TWIN_RECIPE_VERSION,
        code_digest(),
        key.task,
        key.label,
        data_sha256,
        key.tokenizer.identity,
        key.tokenizer.counting,
        key.chat,
        key.budget,
        key.seed,
        pool,
    ]
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]
    return cache_dir() / "twin_recipes" / f"{key.task}-{digest}.json"


def _pool_identity(pool: list[Document], corpus_key: str | None) -> str | None:
    """What fixes the pool's documents in order: a drawn pool's key and each document's place in
    it (no document is cleaned to tell it), else the corpus's content key with each document's id
    and text length; ``None`` when neither tells them."""
    digest = hashlib.sha256()
    drawn = [document for document in pool if isinstance(document, DrawnDocument)]
    if len(drawn) == len(pool):
        for document in drawn:
            digest.update(f"{document.pool_key}\0{document.index}\0".encode())
        return digest.hexdigest()
    if corpus_key is None:
        return None
    for whole in pool:
        digest.update(f"{whole.id}\0{len(whole.text)}\0".encode())
    return f"{corpus_key}\0{digest.hexdigest()}"


def read_recipes(path: Path) -> list[TwinRecipe] | None:
    """The recipes kept at ``path``; ``None`` when there are none or not of the kept form."""
    try:
        stored = read_json_entry(path)
        return [_decoded(entry) for entry in stored]
    except (OSError, ValueError, TypeError, KeyError):
        return None


def keep_recipes(path: Path, recipes: list[TwinRecipe]) -> None:
    """Keep ``recipes`` at ``path`` when their literals are short (:data:`LITERAL_LIMIT`)."""
    if all(
        len(segment) <= LITERAL_LIMIT
        for recipe in recipes
        for segment in recipe.segments
        if isinstance(segment, str)
    ):
        write_json_entry(
            path,
            [
                [recipe.row, recipe.kind, recipe.tokens, recipe.extra, recipe.segments]
                for recipe in recipes
            ],
        )


def _decoded(entry: object) -> TwinRecipe:
    """One stored recipe (a ``ValueError`` when it is not of the stored form)."""
    if not isinstance(entry, list) or len(entry) != 5:
        raise ValueError("not a [row, kind, tokens, extra, segments] entry")
    row, kind, tokens, extra, segments = entry
    if not (
        type(row) is int
        and row >= 0
        and kind in CONTROL_KINDS
        and type(tokens) is int
        and isinstance(extra, dict)
        and isinstance(segments, list)
    ):
        raise ValueError("a recipe entry of the wrong form")
    return TwinRecipe(row, kind, [_segment(segment) for segment in segments], tokens, extra)


def _segment(stored: object) -> Segment:
    """One stored segment: a literal, or ``[kind, reference, start, end]``."""
    if isinstance(stored, str):
        return stored
    if (
        isinstance(stored, list)
        and len(stored) == 4
        and stored[0] in TEXT_KINDS
        and all(type(number) is int and number >= 0 for number in stored[1:])
    ):
        return (stored[0], stored[1], stored[2], stored[3])
    raise ValueError("not a segment")
