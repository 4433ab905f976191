"""Per-tokenizer token counts of source documents, cached on disk so a second run never re-tokenizes.

The cache key joins the tokenizer identity, the cutting rule its piece counts follow, the records'
format (bumped whenever the mapping or cleaning code changes the texts), the registry entry's
data-shaping fingerprint and the sha256 of every source file read: a changed file, mapping or text
invalidates its cache. Files are written
atomically (temporary file, then rename), so a crash never leaves a half-written cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

from longbench100.core.cache_entries import read_json_entry, write_json_entry
from longbench100.core.paths import cache_dir
from longbench100.sources.loader import RECORDS_FORMAT
from longbench100.sources.records import CountedWhenRead, SourceData
from longbench100.sources.registry import SourceEntry
from longbench100.text.segment_count import CUT
from longbench100.text.tokenization import Tokenizer


def cache_path(tokenizer: Tokenizer, entry: SourceEntry, files: dict[str, str]) -> Path:
    """The cache file for the data of ``files`` (display name -> sha256) read from ``entry`` and counted with ``tokenizer``."""
    key = json.dumps(
        [
            tokenizer.identity,
            tokenizer.counting,
            CUT.pattern,
            RECORDS_FORMAT,
            entry.fingerprint(),
            sorted(files.items()),
        ]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return cache_dir() / "token_counts" / f"{entry.name}-{digest}.json"


def attach_token_counts(
    tokenizer: Tokenizer, entry: SourceEntry, data: SourceData, when_read: bool = False
) -> bool:
    """Fill in ``tokens`` on every document of ``data``; return whether the counts came from the cache.

    Where the tokenizer counts by segments, the cache holds each document's piece counts (its tokens are
    their sum) and the tokenizer learns them, so placing the document in a prompt tokenizes nothing.
    Several tokenizers (a ``JointTokenizer``) each count and cache apart; a document's tokens are
    the largest of their counts.

    ``when_read`` (a run that places few of the documents): unless the cache holds them, each
    document is counted the same way when its count is first read (:class:`CountedWhenRead`), and
    nothing is cached.
    """
    if when_read and not all(
        cache_path(member, entry, data.files).is_file() for member in tokenizer.members
    ):
        count = count_when_read(tokenizer)
        data.documents = {
            doc_id: CountedWhenRead(document, count) for doc_id, document in data.documents.items()
        }
        return False
    counted = [_member_counts(member, entry, data) for member in tokenizer.members]
    tokens = _largest([counts for counts, _ in counted])
    data.documents = {
        doc_id: document.with_tokens(tokens[doc_id]) for doc_id, document in data.documents.items()
    }
    return all(hit for _, hit in counted)


Counts = dict[str, int | list[int]]


def _member_counts(
    tokenizer: Tokenizer, entry: SourceEntry, data: SourceData
) -> tuple[Counts, bool]:
    """The counts of ``data``'s documents by one tokenizer (which learns their piece counts), and
    whether they came from the cache."""
    path = cache_path(tokenizer, entry, data.files)
    cached = _read(path)
    hit = cached is not None and all(doc_id in cached for doc_id in data.documents)
    if cached is not None and hit:
        counts = cached
    else:
        counts = _count(
            tokenizer, {doc_id: document.text for doc_id, document in data.documents.items()}
        )
        write_json_entry(path, counts)
    _learn(
        tokenizer, {doc_id: document.text for doc_id, document in data.documents.items()}, counts
    )
    return counts, hit


def count_when_read(tokenizer: Tokenizer) -> Callable[[str], int]:
    """What counts a document's text when its count is first read (:class:`CountedWhenRead`), as
    :func:`attach_token_counts` counts it."""
    return partial(_count_now, tokenizer)


def _count_now(tokenizer: Tokenizer, text: str) -> int:
    """The tokens of one document's ``text``, counted as :func:`attach_token_counts` counts them
    (the largest count of the tokenizers, each learning the piece counts)."""
    return TextCounts(tokenizer).count(text)[0]


MemberCounts = list[int | list[int]]
"""One text's counts by each tokenizer of a run (a count, or piece counts), in member order."""


class TextCounts:
    """Counts one text at a time as :func:`attach_token_counts` counts a document, and recalls a
    count kept from an earlier run (the tokenizers learn its piece counts again, nothing is
    tokenized); :attr:`key` tells the tokenizers and cutting rule the counts hold for."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    @property
    def key(self) -> str:
        """What fixes the counts: each tokenizer's identity and counting, and the cutting rule."""
        members = [[member.identity, member.counting] for member in self.tokenizer.members]
        return hashlib.sha256(json.dumps([members, CUT.pattern]).encode()).hexdigest()[:24]

    def count(self, text: str) -> tuple[int, MemberCounts]:
        """The tokens of ``text`` (the largest count of the tokenizers, each learning the piece
        counts) and each tokenizer's counts, to keep."""
        kept: MemberCounts = []
        for member in self.tokenizer.members:
            counts = _count(member, {"": text})
            _learn(member, {"": text}, counts)
            kept.append(counts[""])
        return max(_tokens(counts) for counts in kept), kept

    def recall(self, text: str, kept: MemberCounts) -> int:
        """The tokens of ``text`` from the counts :meth:`count` gave for it (the tokenizers
        learn them again)."""
        for member, counts in zip(self.tokenizer.members, kept, strict=True):
            _learn(member, {"": text}, {"": counts})
        return max(_tokens(counts) for counts in kept)


def _learn(tokenizer: Tokenizer, texts: dict[str, str], counts: Counts) -> None:
    """Teach ``tokenizer`` the piece counts among ``counts`` of the texts of ``texts`` (by id)."""
    pieces = {
        doc_id: value
        for doc_id, value in counts.items()
        if isinstance(value, list) and doc_id in texts
    }
    tokenizer.learn_texts([texts[doc_id] for doc_id in pieces], list(pieces.values()))


def _count(tokenizer: Tokenizer, texts: dict[str, str]) -> dict[str, int | list[int]]:
    """Each text's token count, or its pieces' counts where the tokenizer counts by segments (one batch;
    a text whose piece counts the tokenizer learned already, from a source read before that holds it
    too, is not counted again)."""
    if tokenizer.counting != "segments":
        return dict(zip(texts, tokenizer.count_batch(list(texts.values()))))
    learned = {doc_id: tokenizer.learned_piece_counts(text) for doc_id, text in texts.items()}
    new = [doc_id for doc_id, counts in learned.items() if counts is None]
    counted = dict(
        zip(new, tokenizer.count_groups([tokenizer.pieces(texts[doc_id]) or [] for doc_id in new]))
    )
    return {
        doc_id: counted[doc_id] if counts is None else list(counts)
        for doc_id, counts in learned.items()
    }


def _largest(member_counts: list[Counts]) -> dict[str, int]:
    """Each document's tokens: the largest of the tokenizers' counts (one tokenizer: its own)."""
    first, *others = member_counts
    largest = {doc_id: _tokens(value) for doc_id, value in first.items()}
    for counts in others:
        for doc_id, value in counts.items():
            largest[doc_id] = max(largest.get(doc_id, 0), _tokens(value))
    return largest


def _tokens(value: int | list[int]) -> int:
    """A document's token count from its cached value (a count, or its pieces' counts)."""
    return sum(value) if isinstance(value, list) else value


def _read(path: Path) -> dict[str, int | list[int]] | None:
    """The cached counts, or ``None`` when the file is absent, unreadable or foreign."""
    try:
        counts = read_json_entry(path)
    except ValueError:
        return None
    return counts if isinstance(counts, dict) else None
