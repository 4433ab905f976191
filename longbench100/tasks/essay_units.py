"""The sentences of an essay pool's documents, and their token counts, prepared once per run and kept on disk.

RULER's essay haystacks are whole documents split at sentence ends and line breaks. Splitting a
document (sentencex plus our ending rules) and counting its pieces are the costly steps of a
haystack row, and every row draws from the same pool. :func:`prepare_pool` does both for the whole
pool before any worker starts (the workers inherit the result), and keeps them in the cache folder,
keyed by the pool's texts, the splitting and cutting rules and the tokenizer, so a second run reads
them back: each document's units and placed text, its cut places and piece counts (its token index),
and the count of its last piece followed by a :data:`DOCUMENT_BREAK` (where it meets the next
document in a haystack).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import operator
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sentencex

from longbench100.core.marshal_cache import read_marshal, write_marshal
from longbench100.core.paths import cache_dir
from longbench100.sources.records import Document
from longbench100.text import sentences
from longbench100.text.segment_count import CUT, cut_places, split_at
from longbench100.text.sentences import sentence_ends
from longbench100.text.tokenization import Tokenizer

UNITS_VERSION = 4  # bump when the splitting below changes: cached units are then recomputed
DOCUMENT_BREAK = "\n\n"  # what sets an essay's documents apart
_LINE_END = re.compile("\n")

Columns = tuple[tuple[str, ...], tuple[str, ...]]
"""A document's units as a haystack places them: its sentences (and lines), and the separator before each:
:data:`DOCUMENT_BREAK` before the first, then a line break where one preceded the unit in the document, else
a space."""

_COLUMNS: dict[str, Columns] = {}
_PLACED: dict[str, str] = {}
_PLACED_BOUNDS: dict[str, tuple[list[int], list[int]]] = {}


def document_columns(text: str) -> Columns:
    """A document's :data:`Columns`, kept in memory: rows draw their haystacks from the same documents."""
    columns = _COLUMNS.get(text)
    if columns is None:
        columns = _COLUMNS[text] = _columns_at(text, _unit_bounds(text))
    return columns


def placed_document(text: str) -> str:
    """A document as a haystack holds it: its units joined by their own separators (kept in memory)."""
    placed = _PLACED.get(text)
    if placed is None:
        placed = _PLACED[text] = joined_units(*document_columns(text))
    return placed


def placed_unit_bounds(text: str) -> tuple[list[int], list[int]]:
    """Where each unit of a document starts and ends in its placed text (:func:`placed_document`), kept in memory."""
    bounds = _PLACED_BOUNDS.get(text)
    if bounds is None:
        bounds = _PLACED_BOUNDS[text] = unit_bounds(*document_columns(text))
    return bounds


def unit_bounds(units: Sequence[str], separators: Sequence[str]) -> tuple[list[int], list[int]]:
    """Where each unit starts and ends in :func:`joined_units` of ``units`` and ``separators``."""
    lengths = list(map(len, units))
    ends = list(itertools.accumulate(map(operator.add, [0, *map(len, separators[1:])], lengths)))
    return list(map(operator.sub, ends, lengths)), ends


def joined_units(units: Sequence[str], separators: Sequence[str]) -> str:
    """``units`` joined, each after its separator in ``separators`` except the first."""
    return "".join(itertools.chain.from_iterable(zip(("", *separators[1:]), units)))


def prepare_pool(
    pool: list[Document], tokenizer: Tokenizer, lazy: bool, key: str | None = None
) -> bool:
    """:func:`prepare_pool_for` each tokenizer a prompt must fit in (``tokenizer.members``); whether
    the cache had them all.

    ``lazy``, for a run whose rows draw little of ``pool``
    (:func:`~longbench100.sources.records.draws_little_of`): the pool is read from the cache only
    when a run before prepared it, and otherwise each document is split and counted when a row
    first draws it (:func:`prepare_drawn`); the haystacks are the same either way, and a short run
    does not split and count a large pool.

    ``key``, for a pool whose documents are cleaned when drawn
    (:class:`~longbench100.sources.drawn_pool.DrawnPool`): what fixes the whole pool's texts, which
    keys the cache in their place; ``pool`` then holds its documents read so far when ``lazy``."""
    return all([prepare_pool_for(pool, member, lazy, key) for member in tokenizer.members])


def prepare_pool_for(
    pool: list[Document], tokenizer: Tokenizer, lazy: bool = False, key: str | None = None
) -> bool:
    """Split every document of ``pool`` into units and teach ``tokenizer`` each placed document's cut places
    and piece counts, and the count of each one's last piece before a :data:`DOCUMENT_BREAK`, from the
    cache folder when a run did it before; return whether the cache had them.

    From the cache, the units, placed texts, counts and cut places are read back as they were made
    (:meth:`Tokenizer.learn_texts`), without splitting, cutting or tokenizing any text; the cache is keyed
    by every document's text, the splitting and cutting rules and the tokenizer, so what it holds is what
    computing would give. ``lazy``: when the cache does not hold the pool, read back only the
    documents earlier such runs drew (:func:`keep_drawn`); ``key``: as :func:`prepare_pool` says."""
    path = _cache_path(pool, tokenizer, key)
    stored = None if lazy and key is not None else _read(path, len(pool))
    if key is not None or (stored is None and lazy):
        _learn_drawn(pool, tokenizer, key)
    if stored is None and lazy:
        return False
    if stored is not None:
        _COLUMNS.update(zip((document.text for document in pool), stored["columns"]))
        _PLACED.update(zip((document.text for document in pool), stored["placed"]))
        if tokenizer.counting != "segments" or all(
            len(stored.get(key) or ()) == len(pool) for key in _COUNTED
        ):
            _learn_placed(tokenizer, stored["placed"], stored.get("cuts"), stored.get("pieces"))
            _learn_tails(tokenizer, stored["placed"], stored.get("cuts"), stored.get("tails"))
            return True
    placed = [placed_document(document.text) for document in pool]
    cached: dict[str, Any] = {
        "columns": [document_columns(document.text) for document in pool],
        "placed": placed,
        **_counted_placed(pool, tokenizer),
    }
    write_marshal(path, cached)
    return False


_COUNTED = ("cuts", "pieces", "tails")
"""What a pool's cache keeps of its placed documents' counts (a tokenizer counting by segments)."""


def _counted_placed(documents: Sequence[Document], tokenizer: Tokenizer) -> dict[str, list]:
    """Where the tokenizer counts by segments, the cut places and piece counts of each document's
    placed text and the count of its last piece before a :data:`DOCUMENT_BREAK` (as :data:`_COUNTED`
    names them), counted and taught to ``tokenizer``; else nothing."""
    if tokenizer.counting != "segments":
        return {}
    placed = [placed_document(document.text) for document in documents]
    cuts = [cut_places(text) for text in placed]
    pieces = [split_at(text, text_cuts) for text, text_cuts in zip(placed, cuts)]
    counts = _piece_counts(documents, pieces, tokenizer)
    for group, group_counts in zip(pieces, counts):
        tokenizer.learn(group, group_counts)
    tokenizer.learn_texts(placed, counts, cuts)
    ends = [last_piece_before_break(text, text_cuts) for text, text_cuts in zip(placed, cuts)]
    [tails] = tokenizer.count_groups([ends])  # in this thread: a row's few tails need no pool
    tokenizer.learn(ends, tails)
    return {"cuts": cuts, "pieces": counts, "tails": tails}


def _learn_placed(
    tokenizer: Tokenizer,
    placed: list[str],
    cuts: list[list[int]] | None,
    pieces: list[list[int]] | None,
) -> None:
    """Teach ``tokenizer`` the cut places and piece counts of placed documents (where it counts by
    segments and they were counted)."""
    if tokenizer.counting == "segments" and cuts is not None and pieces is not None:
        tokenizer.learn_texts(placed, pieces, cuts)


def _learn_tails(
    tokenizer: Tokenizer, placed: list[str], cuts: list[list[int]] | None, tails: list[int] | None
) -> None:
    """Teach ``tokenizer`` the count of each placed document's last piece before a
    :data:`DOCUMENT_BREAK` (where it counts by segments and they were counted)."""
    if tokenizer.counting == "segments" and cuts is not None and tails is not None:
        ends = [last_piece_before_break(text, text_cuts) for text, text_cuts in zip(placed, cuts)]
        tokenizer.learn(ends, tails)


def _piece_counts(
    pool: Sequence[Document], pieces: list[list[str]], tokenizer: Tokenizer
) -> list[list[int]]:
    """The token counts of each placed document's ``pieces``. A piece that the document's own text
    holds too is read off the piece counts ``tokenizer`` learned for that text when the source was
    counted (about three pieces in four: a placed document differs from its text only in the blanks
    between units); the others are counted."""
    counts = []
    for document, group in zip(pool, pieces):
        learned = tokenizer.learned_piece_counts(document.text)
        known = dict(zip(tokenizer.pieces(document.text) or [], learned)) if learned else {}
        [fresh] = tokenizer.count_groups([[piece for piece in group if piece not in known]])
        new = iter(fresh)
        counts.append([known[piece] if piece in known else next(new) for piece in group])
    return counts


def prepare_drawn(documents: Sequence[Document], tokenizer: Tokenizer) -> None:
    """Split and count the placed texts of ``documents`` (a row's haystack, its documents' own
    counts read) that neither the pool's preparation nor an earlier row did, with each tokenizer of
    ``tokenizer.members``: the pieces a placed text shares with its document's text are read off the
    text's counts, as :func:`prepare_pool_for` reads them."""
    for member in tokenizer.members:
        if member.counting != "segments":
            continue
        new = {
            document.text: document
            for document in documents
            if member.learned_piece_counts(placed_document(document.text)) is None
        }
        if new:
            _counted_placed(list(new.values()), member)


DRAWN_FORMAT = 2
"""The form of :func:`keep_drawn`'s entries; bumped when it changes (its file name holds it)."""


def keep_drawn(pool: list[Document], tokenizer: Tokenizer, key: str | None = None) -> None:
    """After a run that split ``pool``'s documents as its rows drew them (:func:`prepare_pool`),
    keep each drawn document's units, placed text, cut places and piece counts in the cache folder
    (with each tokenizer of ``tokenizer.members``), and the piece counts of the text of every
    document whose count was read (by rows or control twins), so that the next such run reads them
    back instead of splitting and counting again; nothing when the whole pool is cached. With
    ``key`` (as :func:`prepare_pool` says; ``pool`` then holds the documents read in the run) the
    texts' piece counts are kept even then: such a pool's texts are counted when read."""
    for member in tokenizer.members:
        whole = _cache_path(pool, member, key).is_file()
        if whole and key is None:
            continue
        path = _drawn_path(pool, member, key)
        kept = _read_drawn(path)
        new = {}
        for document in pool:
            text_key = _text_key(document.text)
            if text_key not in new and not _holds(kept.get(text_key), document.text, member, whole):
                new[text_key] = _drawn_entry(document.text, member, not whole)
        if new:
            write_marshal(path, {**kept, **new})


def _holds(entry: object, text: str, tokenizer: Tokenizer, whole: bool = False) -> bool:
    """Whether a kept ``entry`` holds all that :func:`_drawn_entry` would keep of ``text`` now
    (``whole``: the pool's units are cached whole, so no entry keeps them)."""
    split = whole or text not in _COLUMNS
    if not isinstance(entry, dict):
        return tokenizer.learned_piece_counts(text) is None and split
    split = split or "columns" in entry
    return split and ("text" in entry or tokenizer.learned_piece_counts(text) is None)


def _drawn_entry(text: str, tokenizer: Tokenizer, units: bool = True) -> dict[str, Any]:
    """What :func:`keep_drawn` keeps of one document: where the tokenizer counts by segments, the
    piece counts of its text when they were counted (``text``); when a row split it (and
    ``units``), its units and placed text, and where the tokenizer counts by segments, the placed
    text's cut places, piece counts and the count of its last piece before a
    :data:`DOCUMENT_BREAK` (as :func:`prepare_pool_for` keeps them)."""
    entry: dict[str, Any] = {}
    counts = tokenizer.learned_piece_counts(text)
    if counts is not None:
        entry["text"] = list(counts)
    if text not in _COLUMNS or not units:
        return entry
    placed = placed_document(text)
    entry.update(columns=document_columns(text), placed=placed)
    if tokenizer.counting == "segments":
        index = tokenizer.index(placed)
        entry["cuts"] = index.cuts
        entry["pieces"] = [end - start for start, end in zip(index.totals, index.totals[1:])]
        entry["tail"] = tokenizer.count_whole(last_piece_before_break(placed, index.cuts))
    return entry


def _learn_drawn(pool: list[Document], tokenizer: Tokenizer, key: str | None) -> None:
    """Read back what :func:`keep_drawn` kept of ``pool``'s documents: their texts' piece counts,
    their units and placed texts, and teach ``tokenizer`` the counts."""
    kept = _read_drawn(_drawn_path(pool, tokenizer, key))
    for document in pool if kept else ():
        entry = kept.get(_text_key(document.text))
        if not isinstance(entry, dict):
            continue
        if "text" in entry:
            tokenizer.learn_texts([document.text], [entry["text"]])
        if "columns" in entry:
            placed = entry["placed"]
            _COLUMNS[document.text], _PLACED[document.text] = entry["columns"], placed
            if "cuts" in entry:
                _learn_placed(tokenizer, [placed], [entry["cuts"]], [entry["pieces"]])
                _learn_tails(tokenizer, [placed], [entry["cuts"]], [entry["tail"]])


def _text_key(text: str) -> str:
    """A document text's key among the kept drawn documents."""
    return _text_digest(text).hex()[:32]


_DIGESTS: dict[str, bytes] = {}


def _text_digest(text: str) -> bytes:
    """The sha256 of a document's text, kept in memory: a run keys its pool's caches by them
    several times."""
    digest = _DIGESTS.get(text)
    if digest is None:
        digest = _DIGESTS[text] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return digest


def _drawn_path(pool: list[Document], tokenizer: Tokenizer, key: str | None) -> Path:
    """Where :func:`keep_drawn` keeps the drawn documents of ``pool`` counted with ``tokenizer``."""
    whole = _cache_path(pool, tokenizer, key)
    return whole.with_name(f"{whole.stem}-drawn{DRAWN_FORMAT}.marshal")


def _read_drawn(path: Path) -> dict:
    """The kept drawn documents by text key (empty when absent or unreadable)."""
    kept = read_marshal(path)
    return kept if isinstance(kept, dict) else {}


def last_piece_before_break(text: str, cuts: list[int]) -> str:
    """``text`` from its last cut place strictly inside it (all of it when it has none), then a
    :data:`DOCUMENT_BREAK`: the text a haystack's token index counts where this document meets the next."""
    last = bisect.bisect_right(cuts, len(text) - 2) - 1
    start = cuts[last] if last >= 0 else 0
    return text[start:] + DOCUMENT_BREAK


def _unit_bounds(text: str) -> list[int]:
    """Each unit of ``text`` as three numbers: where its sentence starts and ends, and 1 when a line break
    precedes it (its separator), else 0."""
    cuts = sorted(
        {*sentence_ends(text), *(match.end() for match in _LINE_END.finditer(text)), len(text)}
    )
    bounds: list[int] = []
    start = 0
    for end in cuts:
        raw = text[start:end]
        leading = len(raw) - len(raw.lstrip())
        if raw.strip():
            bounds += [start + leading, start + len(raw.rstrip()), int("\n" in raw[:leading])]
        start = end
    return bounds


def _columns_at(text: str, bounds: list[int]) -> Columns:
    """The :data:`Columns` that :func:`_unit_bounds` numbers describe."""
    sentences = tuple(text[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 3))
    separators = tuple(
        DOCUMENT_BREAK if i == 0 else "\n" if bounds[i + 2] else " "
        for i in range(0, len(bounds), 3)
    )
    return sentences, separators


def _cache_path(pool: list[Document], tokenizer: Tokenizer, key: str | None = None) -> Path:
    """The cache file of ``pool``'s units, cut places and piece counts with ``tokenizer`` (keyed
    by ``key`` in place of the pool's texts where given)."""
    digest = hashlib.sha256(
        json.dumps(
            [
                UNITS_VERSION,
                tokenizer.identity,
                tokenizer.counting,
                CUT.pattern,
                DOCUMENT_BREAK,
                _splitting_code(),
            ]
        ).encode()
    )
    if key is not None:
        digest.update(b"pool\0" + key.encode())
    else:
        for document in pool:
            digest.update(_text_digest(document.text))
    return cache_dir() / "essay_units" / f"{digest.hexdigest()[:24]}.marshal"


def _splitting_code() -> list:
    """What a document's units depend on besides its text: our splitting code (this module and
    :mod:`..generate.sentences`) and the ``sentencex`` build in use (its compiled module's path, size and time),
    so an upgraded segmenter or a changed rule is never read back from an older cache."""
    ours = hashlib.sha256(
        Path(sentences.__file__).read_bytes() + Path(__file__).read_bytes()
    ).hexdigest()
    segmenter = Path(getattr(sentencex, "sentencex", sentencex).__file__ or "")
    stat = segmenter.stat()
    return [ours, str(segmenter), stat.st_size, stat.st_mtime_ns]


def _read(path: Path, documents: int) -> dict | None:
    """The cached units and counts, or ``None`` when absent, unreadable (another Python's marshal format,
    a torn file) or not for this many documents."""
    cached = read_marshal(path)
    if not isinstance(cached, dict) or any(
        len(cached.get(key) or ()) != documents for key in ("columns", "placed")
    ):
        return None
    return cached
