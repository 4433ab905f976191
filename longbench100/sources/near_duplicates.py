"""Near-duplicate documents: texts that share most of their word 8-grams count as one text.

Two documents are near-duplicates when the 8-word shingles (lower-cased ``\\w+`` words) they share
make up at least ``THRESHOLD`` of the shingles of the smaller one (the overlap coefficient), so a
short version of a story contained in a longer one is caught as well as two edits of one text.
Identical texts are always one text. Groups are closed transitively (A~B and B~C put A, B and C in
one group), and each group is represented by its first document in corpus order.

A shingle that occurs in more than ``MAX_SHINGLE_TEXTS`` distinct texts is boilerplate (bylines,
licence notes) and is ignored when counting shared shingles, which also keeps the pair count small.
Only the first ``SHINGLED_CHARS`` characters of a text are shingled: versions of one text share
their opening, and this halves the work on the long reports and books (on the real source mirror the
groups are the same as over whole texts).
The computation is exact (no sampling), deterministic, and cached on disk per set of texts; a
corpus's sources also keep their documents' shingles per source
(:mod:`~longbench100.sources.source_shingles`), so the groups over a new set of sources only pair
them.
docs/benchmarks.md compares it with MinHash LSH from ``datasketch``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import groupby
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Callable, Iterable, Iterator, Sequence

from longbench100.core.cache_entries import cached_json
from longbench100.core.paths import cache_dir
from longbench100.sources.records import Document

if TYPE_CHECKING:
    import numpy as np

SHINGLE_WORDS = 8
THRESHOLD = 0.5
MAX_SHINGLE_TEXTS = 50
SHINGLED_CHARS = (
    10_000  # only the opening of a long text is compared: versions of one text share it
)
_WORD = re.compile(r"\w+")
_WORD_CHARACTER = re.compile(r"\w")
_NON_WORD_RUN = re.compile(r"\W+")
_MULTIPLIER = 0x9E3779B97F4A7C15  # combines the word hashes of a shingle (as a numpy uint64)
_VERSION = 5  # bump when the rule changes, so cached results are recomputed
_WORD_BASE = 0x100000001B3  # the polynomial's base of a word's hash (odd: every power is odd)
SHINGLE_HASHING = (SHINGLE_WORDS, SHINGLED_CHARS, _WORD.pattern, _MULTIPLIER, _WORD_BASE, 1)
"""What the shingle hashes of a text (:func:`text_shingles`) depend on besides the text; the last
number is bumped when the hashing code changes them."""
PASSAGES_KEPT = (
    128  # passages whose shingles stay in memory for the filler check (about 0.2 MB each)
)
PASSAGES_LOWERED = 1024  # passages kept lower-cased for the filler check (a few kB each)


@dataclass(frozen=True)
class NearDuplicates:
    """The groups found over a list of documents.

    ``canonical`` maps the id of every document that has a near-copy or an identical copy to the id
    of its group's first document; ``dropped`` counts, per source, the documents that are not the
    first of their group (what deduplication removes from that source), and ``identical`` how many of
    those are exact copies of an earlier text.
    """

    canonical: dict[str, str]
    dropped: dict[str, int]
    identical: dict[str, int]

    def key(self, document: Document) -> str:
        """The id of the first document of ``document``'s group: equal keys mean one text."""
        return self.canonical.get(document.id, document.id)

    def settings(self) -> dict:
        """The rule and the per-source counts, for the manifest."""
        return {
            "shingle_words": SHINGLE_WORDS,
            "threshold": THRESHOLD,
            "measure": "overlap coefficient",
            "max_shingle_texts": MAX_SHINGLE_TEXTS,
            "shingled_chars": SHINGLED_CHARS,
            "dropped": dict(self.dropped),
            "identical": dict(self.identical),
        }


def identical_text(document: Document) -> str:
    """The text itself: the key under which only identical texts count as one (no near-duplicate groups)."""
    return document.text


SourceShingles = Callable[[str, Sequence[Document]], "tuple[np.ndarray, np.ndarray]"]
"""The shingles of a source's documents (:func:`text_shingles` of their texts), given the
source's name and every document of it, in order: what a cache of them per source gives."""


def find_near_duplicates(
    documents: Sequence[Document],
    cache: bool = True,
    content_key: str | None = None,
    source_shingles: SourceShingles | None = None,
) -> NearDuplicates:
    """Group ``documents`` (in this order) into near-duplicates, reading or writing the on-disk cache.

    ``content_key``, when given, fixes the list of (id, source, text) exactly (the sources' registry
    fingerprints and file checksums, which fix their records), and keys the cache instead of a hash
    of every text. ``source_shingles``, when given (with the cache), gives the shingles of each
    source's documents (``documents`` holding every document of each source they name, listed
    together), which the groups then only pair; the groups are the same."""
    if not cache:
        return _group(documents)
    return cached_json(
        _cache_path(documents, content_key),
        lambda: _group(documents, source_shingles),
        lambda result: {
            "canonical": result.canonical,
            "dropped": result.dropped,
            "identical": result.identical,
        },
        _decoded,
    )


def _decoded(stored: object) -> NearDuplicates:
    """The kept groups (a ``TypeError`` or ``KeyError`` when not of the kept form)."""
    if not isinstance(stored, dict):
        raise TypeError("not a JSON object")
    return NearDuplicates(
        dict(stored["canonical"]), dict(stored["dropped"]), dict(stored["identical"])
    )


CHECKED_CHARS = 5_000
"""Texts from this length on are not checked by :func:`near_copy_of_any`."""
LONGER = 3
"""A passage this many times longer than the text checked holds at least as many distinct shingles (only a
text repeating itself over and over would not), so half of the text's own shingles decide."""


def near_copy_of_any(text: str, others: Iterable[str]) -> bool:
    """Whether ``text`` (shorter than ``CHECKED_CHARS``) is a near-copy of one of ``others``, read whole: they share
    at least ``THRESHOLD`` of the smaller one's 8-word shingles. A cut-off opening can be no more than boilerplate,
    or a passage, that another document of its source holds too (whole documents were told apart on their
    openings); a longer text is ``False`` here (half of it would be thousands of characters shared).

    The answer is a fixed fact of the texts, kept by a digest of them: asked again (a filler tried
    beside the same passages in this run, or in an earlier one whose answers were learned,
    :func:`learn_near_copy_answers`), it is not worked out again."""
    if len(text) >= CHECKED_CHARS:
        return False
    passages = list(others)
    question = hashlib.blake2b(
        _text_digest(text) + b"".join(sorted(set(map(_text_digest, passages)))), digest_size=16
    ).digest()  # the passages as a set: the answer is whether any of them is copied
    answer = _answers.get(question)
    if answer is None:
        answer = _worked_out_near_copy(text, passages)
        _answers[question] = _worked_out[question] = answer
    return answer


NEAR_COPY_RULE = (SHINGLE_WORDS, THRESHOLD, _WORD.pattern, CHECKED_CHARS, LONGER)
"""What an answer of :func:`near_copy_of_any` depends on besides its texts (answers are kept
under it)."""
_answers: dict[bytes, bool] = {}  # near_copy_of_any's answers by the digest of its texts
_worked_out: dict[bytes, bool] = {}  # those of them this process worked out (not learned)


def learn_near_copy_answers(answers: dict[bytes, bool]) -> None:
    """Take ``answers`` (by the digest of their texts, worked out under :data:`NEAR_COPY_RULE` by
    an earlier run) as :func:`near_copy_of_any`'s answers."""
    _answers.update(answers)


def worked_out_near_copy_answers() -> dict[bytes, bool]:
    """The answers :func:`near_copy_of_any` worked out in this process (not learned), by the
    digest of their texts."""
    return dict(_worked_out)


@lru_cache(maxsize=PASSAGES_LOWERED)
def _text_digest(text: str) -> bytes:
    """A digest of ``text`` that tells texts apart (a placed passage recurs across filler
    checks)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _worked_out_near_copy(text: str, others: list[str]) -> bool:
    """:func:`near_copy_of_any` worked out: shingles compared, after the cheap test of each long
    passage's words."""
    shingles = _shingles_of(text)
    if not shingles:
        return False
    own = frozenset(map(hash, shingles))
    sharing: _SharedWords | None = None  # built for the first passage long enough to need it
    for other in others:
        if len(other) >= LONGER * len(text):
            sharing = sharing or _SharedWords(shingles)
            if not sharing.could_share_half(_lowered(other)):
                continue
        theirs = passage_shingle_hashes(other)
        if theirs and len(own & theirs) >= THRESHOLD * min(len(own), len(theirs)):
            return True
    return False


_lowered = lru_cache(maxsize=PASSAGES_LOWERED)(str.lower)
"""A passage lower-cased, kept for the next filler check (a pool's passages recur across prompts)."""


class _SharedWords:
    """Which of a text's shingles another text can share, read from the words it lacks: a shingle is shared only
    where all 8 of its words occur in the other text (as substrings, the least that is needed)."""

    def __init__(self, shingles: set[tuple[str, ...]]) -> None:
        self.count = len(shingles)
        self.holding: dict[str, list[int]] = {}
        for index, shingle in enumerate(shingles):
            for word in set(shingle):
                self.holding.setdefault(word, []).append(index)
        self.rarest_first = sorted(
            self.holding, key=len, reverse=True
        )  # long words rule out the most, soonest

    def could_share_half(self, other_lower: str) -> bool:
        """Whether ``other_lower`` (lower-cased) holds all the words of at least half of the shingles."""
        ruled_out = bytearray(self.count)
        left = self.count
        for word in self.rarest_first:
            if word in other_lower:
                continue
            for index in self.holding[word]:
                left -= not ruled_out[index]
                ruled_out[index] = 1
            if left < THRESHOLD * self.count:
                return False
        return True


def _shingles_of(text: str) -> set[tuple[str, ...]]:
    """The distinct 8-word shingles of ``text`` (lower-cased ``\\w+`` words)."""
    return set(_shingle_run(text))


def _shingle_run(text: str) -> Iterator[tuple[str, ...]]:
    """Every 8-word shingle of ``text`` in order, repeats included (lower-cased ``\\w+`` words)."""
    words = _WORD.findall(text.lower())
    return zip(*(words[offset:] for offset in range(SHINGLE_WORDS)))


@lru_cache(maxsize=PASSAGES_KEPT)
def passage_shingle_hashes(text: str) -> frozenset[int]:
    """The distinct 8-word shingles of a whole passage, as this process's hashes of them, kept for the next
    prompts (the same pools fill them); hashed as they are made, with no set of the shingles themselves."""
    return frozenset(map(hash, _shingle_run(text)))


def opening_shingles(text: str) -> frozenset[int]:
    """The distinct 8-word shingles of ``text``'s lowered opening (its first ``SHINGLED_CHARS``
    characters), as the process-independent hashes the groups compare (:func:`text_shingles`)."""
    hashes, _ = _shingle_run_hashes([text])
    return frozenset(hashes.tolist())


def shares_enough(shared: int, sizes: tuple[int, int]) -> bool:
    """Whether two texts with ``shared`` shingles in common and ``sizes`` distinct shingles each
    are near-copies: the shared ones make up at least ``THRESHOLD`` of the smaller one's."""
    return shared >= THRESHOLD * min(sizes)


class DistinctInPrompt:
    """The texts placed so far in one prompt, to keep out a text identical to one of them or a
    near-copy of one (shared opening shingles, as the groups decide it)."""

    def __init__(self) -> None:
        self._texts = ShingleIndex()

    def admit(self, document: Document) -> bool:
        """Whether ``document``'s text is new to the prompt (it is then counted as placed)."""
        return self._texts.add_if_new(document.text)


class ShingleIndex:
    """Texts by their opening shingles, to find those a text is identical to or a near-copy of.

    Most shingles belong to one text: each is kept with its first text only, and the few that
    several texts share with all of them, so adding and looking up a text are set operations on
    its shingles, with a count only over those it shares. Texts indexed in one pass
    (:meth:`of_texts`) are kept as sorted arrays instead, searched for a text added after them."""

    def __init__(self, identical: bool = True) -> None:
        self._identical = identical  # False: identical texts are found only by their shingles
        self._first_number: dict[str, int] = {}  # each distinct text -> its first number
        self._sizes: list[int] = []
        self._first_holder: dict[int, int] = {}  # shingle -> a text holding it (the one, if one)
        self._holders: dict[int, list[int]] = {}  # shingle held by several texts -> all of them
        self._base: tuple[np.ndarray, np.ndarray] | None = None  # texts indexed in one pass

    @classmethod
    def of_texts(cls, texts: Sequence[str]) -> tuple[ShingleIndex, list[tuple[int, int]]]:
        """An index of ``texts`` (numbered in this order) that finds identical texts by their
        shingles only (``identical=False``), built in one vectorised pass, and the number pairs
        ``(a, b)``, ``a < b``, of the texts that share at least one shingle and enough of them
        (:func:`shares_enough`): what :meth:`add` of each text in turn finds, every shingle
        counted however many texts share it."""
        import numpy as np

        index = cls(identical=False)
        shingles, owners = text_shingles(list(texts))
        index._base = shingles, owners  # looked up by a search, not put in the dictionaries
        index._sizes = np.bincount(owners, minlength=len(texts)).tolist()
        starts = np.flatnonzero(np.r_[True, shingles[1:] != shingles[:-1]])
        sizes = np.diff(np.r_[starts, len(shingles)])
        return index, _sharing_pairs(shingles, owners, starts, sizes, np.asarray(index._sizes))

    def add(self, text: str) -> set[int]:
        """Index ``text``; the numbers (order added) of the texts indexed before that it is
        identical to or a near-copy of."""
        shingles = opening_shingles(text)
        held = shingles & self._first_holder.keys()
        found = self._copies(text, shingles, held)
        self._index(text, shingles, held)
        return found

    def add_if_new(self, text: str) -> bool:
        """Index ``text`` unless it is identical to or a near-copy of a text indexed before;
        whether it was new."""
        shingles = opening_shingles(text)
        held = shingles & self._first_holder.keys()
        if self._copies(text, shingles, held):
            return False
        self._index(text, shingles, held)
        return True

    def _index(self, text: str, shingles: frozenset[int], held: AbstractSet[int]) -> None:
        """Add ``text`` with its ``shingles``, of which ``held`` are indexed already."""
        number = len(self._sizes)
        self._first_number.setdefault(text, number)
        for shingle in held:
            self._holders.setdefault(shingle, [self._first_holder[shingle]]).append(number)
        self._first_holder.update(dict.fromkeys(shingles, number))  # held ones: read from _holders
        self._sizes.append(len(shingles))

    def _copies(self, text: str, shingles: frozenset[int], held: AbstractSet[int]) -> set[int]:
        """The numbers of the texts indexed before that ``text`` is identical to or a near-copy
        of, given its shingles and those of them indexed already."""
        shared = Counter(
            holder
            for shingle in held
            for holder in self._holders.get(shingle, (self._first_holder[shingle],))
        )
        if self._base is not None:
            shared.update(_holders_in(self._base, shingles))
        found = {
            holder
            for holder, count in shared.items()
            if shares_enough(count, (len(shingles), self._sizes[holder]))
        }
        if self._identical and text in self._first_number:
            found.add(self._first_number[text])
        return found


def _holders_in(base: tuple[np.ndarray, np.ndarray], shingles: frozenset[int]) -> list[int]:
    """The owner of each (shingle, owner) pair of ``base`` (sorted by shingle) whose shingle is
    one of ``shingles``."""
    import numpy as np

    hashes, owners = base
    wanted = np.fromiter(shingles, dtype=np.uint64, count=len(shingles))
    low = np.searchsorted(hashes, wanted, "left")
    counts = np.searchsorted(hashes, wanted, "right") - low
    places = np.repeat(low - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
    return owners[places].tolist()


def _sharing_pairs(
    shingles: np.ndarray,
    owners: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    texts: np.ndarray,
) -> list[tuple[int, int]]:
    """The owner pairs ``(a, b)``, ``a < b``, that share enough shingles (:func:`shares_enough`),
    given the distinct (shingle, owner) pairs sorted by (shingle, owner), where each shingle's run
    starts and how long it is, and each owner's count of shingles (``texts``)."""
    import numpy as np

    group_ends = np.repeat(starts + sizes, sizes)
    later = group_ends - np.arange(len(shingles)) - 1  # the owners after each in its shingle's run
    firsts = np.repeat(np.arange(len(shingles)), later)
    seconds = firsts + np.arange(len(firsts)) - np.repeat(np.cumsum(later) - later, later) + 1
    if not len(firsts):
        return []
    count = len(texts)
    return _pairs_sharing_enough(owners[firsts].astype(np.int64) * count + owners[seconds], texts)


def _pairs_sharing_enough(pair_keys: np.ndarray, sizes: np.ndarray) -> list[tuple[int, int]]:
    """The pairs ``(a, b)`` among ``pair_keys`` (``a * len(sizes) + b``, once per shingle the two
    texts share) that share enough shingles (:func:`shares_enough`), ``sizes`` being each text's
    count of distinct shingles."""
    import numpy as np

    keys, shared = np.unique(pair_keys, return_counts=True)
    first, second = keys // len(sizes), keys % len(sizes)
    similar = shared >= THRESHOLD * np.minimum(sizes[first], sizes[second])  # shares_enough
    return list(zip(first[similar].tolist(), second[similar].tolist()))


def _group(
    documents: Sequence[Document], source_shingles: SourceShingles | None = None
) -> NearDuplicates:
    """The exact computation: identical texts first, then shingle overlap between distinct texts
    (their shingles worked out here, or given per source by ``source_shingles``)."""
    first_of_text: dict[str, int] = {}
    text_of = [
        first_of_text.setdefault(document.text, len(first_of_text)) for document in documents
    ]
    texts = list(first_of_text)
    parent = list(range(len(texts)))
    if source_shingles is None:
        shingled = partial(text_shingles, texts)
    else:
        shingled = partial(_shingles_from_sources, documents, text_of, source_shingles)

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in _similar_pairs(len(texts), shingled):
        low, high = sorted((root(a), root(b)))
        parent[high] = low
    first_document: dict[int, str] = {}
    canonical_by_index = []
    for document, text_index in zip(documents, text_of):
        canonical_by_index.append(first_document.setdefault(root(text_index), document.id))
    group_sizes = Counter(canonical_by_index)
    canonical = {
        document.id: first
        for document, first in zip(documents, canonical_by_index)
        if group_sizes[first] > 1
    }
    seen_texts: set[str] = set()
    dropped: Counter[str] = Counter()
    identical: Counter[str] = Counter()
    for document, first in zip(documents, canonical_by_index):
        if first != document.id:
            dropped[document.source] += 1
            identical[document.source] += document.text in seen_texts
        seen_texts.add(document.text)
    return NearDuplicates(
        canonical,
        dict(sorted(dropped.items())),
        dict(sorted((k, v) for k, v in identical.items() if v)),
    )


def _shingles_from_sources(
    documents: Sequence[Document], text_of: list[int], source_shingles: SourceShingles
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`text_shingles` of the distinct texts of ``documents`` (numbered as ``text_of``
    numbers each document's text, by first occurrence), from the shingles of each source's
    documents (``source_shingles``): each text's shingles are those of its first document.
    ``documents`` lists each source's documents together (a ``ValueError`` otherwise)."""
    import numpy as np

    numbers = np.asarray(text_of, dtype=np.int64)
    earlier = np.maximum.accumulate(np.r_[-1, numbers[:-1]])  # the highest number before each
    first_text = np.where(numbers > earlier, numbers, -1)  # -1: its text came before
    hashes, owners, done = [], [], set()
    start = 0
    for source, run in groupby(documents, key=attrgetter("source")):
        if source in done:
            raise ValueError(f"the documents of source {source} are not listed together")
        done.add(source)
        source_documents = list(run)
        source_hashes, local = source_shingles(source, source_documents)
        text_numbers = first_text[start : start + len(source_documents)][local]
        first = text_numbers >= 0
        hashes.append(source_hashes[first])
        owners.append(text_numbers[first])
        start += len(source_documents)
    # each source's pairs are sorted by (hash, owner), and its owners come after the earlier
    # sources' ones: a stable sort by hash orders them all by (hash, owner)
    shingles = np.concatenate(hashes)
    order = np.argsort(shingles, kind="stable")
    return shingles[order], np.concatenate(owners)[order]


def _similar_pairs(
    count: int, shingled: Callable[[], tuple[np.ndarray, np.ndarray]]
) -> list[tuple[int, int]]:
    """Index pairs ``(a, b)``, ``a < b``, of ``count`` texts whose shared shingles reach
    ``THRESHOLD`` of the smaller one's, given their shingles (``shingled()``, as
    :func:`text_shingles` gives them)."""
    if count < 2:  # no pair (a task without sources): numpy is not even loaded
        return []
    import numpy as np  # here, not at the top: a run whose groups are cached does not load numpy

    shingles, owners = shingled()
    sizes = np.bincount(owners, minlength=count)
    starts = np.flatnonzero(np.r_[True, shingles[1:] != shingles[:-1]])
    group_size = np.diff(np.r_[starts, len(shingles)])
    keep = np.repeat((group_size >= 2) & (group_size <= MAX_SHINGLE_TEXTS), group_size)
    shingles, owners = shingles[keep], owners[keep]
    pair_keys = []
    for distance in range(
        1, MAX_SHINGLE_TEXTS
    ):  # all pairs within each shingle's (sorted) list of texts
        same = shingles[distance:] == shingles[:-distance]
        if not same.any():
            break
        pair_keys.append(
            owners[:-distance][same].astype(np.int64) * count
            + owners[distance:][same].astype(np.int64)
        )
    if not pair_keys:
        return []
    return _pairs_sharing_enough(np.concatenate(pair_keys), sizes)


def text_shingles(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct 8-word shingle hash of every text with the index of its text, sorted by (hash, text).

    The words of each text's lowered opening (:func:`word_hashes`) are combined, 8 at a time, into 64-bit shingle
    hashes in one vectorised pass, dropping runs that span two texts.
    """
    import numpy as np

    hashes, owners = _sorted_pairs(*_shingle_run_hashes(texts))
    if hashes.size == 0:  # every text is shorter than one shingle
        return hashes, owners
    first = np.r_[True, (hashes[1:] != hashes[:-1]) | (owners[1:] != owners[:-1])]
    return hashes[first], owners[first]


def _shingle_run_hashes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every 8-word shingle hash of each text's lowered opening, in order (repeats included), with
    the index of its text: the words' hashes (:func:`word_hashes`) combined 8 at a time in one
    vectorised pass, runs that span two texts dropped."""
    import numpy as np

    words, word_owners = word_hashes([text[:SHINGLED_CHARS].lower() for text in texts])
    count = max(0, len(words) - SHINGLE_WORDS + 1)
    hashes = words[:count].copy()
    for offset in range(1, SHINGLE_WORDS):
        hashes *= np.uint64(_MULTIPLIER)
        hashes += words[offset : offset + count]
    within = word_owners[:count] == word_owners[SHINGLE_WORDS - 1 : SHINGLE_WORDS - 1 + count]
    return hashes[within], word_owners[:count][within]


def _sorted_pairs(hashes: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``hashes`` and ``owners`` (ascending) reordered by (hash, owner), as a stable sort by hash
    orders them: sorted by hash with numpy's fast unstable sort, then the owners of each run of
    equal hashes (a shingle repeated, or shared by texts: a small part) put back in order."""
    import numpy as np

    order = np.argsort(hashes)
    hashes, owners = hashes[order], owners[order]
    equal = hashes[1:] == hashes[:-1]
    tied = np.flatnonzero(np.r_[equal, False] | np.r_[False, equal])  # whole runs, in order
    if tied.size:
        owners[tied] = owners[tied][np.lexsort((owners[tied], hashes[tied]))]
    return hashes, owners


WORD_HASH_CHARS = 1 << 21
"""Texts are hashed in batches of about this many characters (the arrays of a batch take about 40 bytes a character)."""


def word_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit hash of every ``\\w+`` word of each text, in order, and the index of the text it is in.

    Equal words get equal hashes in every process (the hash reads the word's code points, not Python's string hash).
    A word is a run of the characters that Python's ``re`` calls word characters, read from a table ``re`` itself
    filled (:func:`_word_character_table`), so the words are the ones ``re.findall(r"\\w+", text)`` gives.
    """
    import numpy as np

    hashes, owners = [], []
    start = 0
    while start < len(texts):
        end, size = start, 0
        while end < len(texts) and (end == start or size + len(texts[end]) <= WORD_HASH_CHARS):
            size += len(texts[end]) + 1
            end += 1
        batch_hashes, batch_owners = _batch_word_hashes(texts[start:end])
        hashes.append(batch_hashes)
        owners.append(batch_owners + start)
        start = end
    if not hashes:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int32)
    return np.concatenate(hashes), np.concatenate(owners)


def _batch_word_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`word_hashes` of one batch: the texts joined with NUL (no word character) between them, as code points."""
    import numpy as np

    joined = "\0".join(texts)
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    is_word = _word_character_table()[np.minimum(codes, 0xFFFF)]
    beyond = np.flatnonzero(codes > 0xFFFF)
    if beyond.size:
        is_word[beyond] = [
            _WORD_CHARACTER.match(chr(code)) is not None for code in codes[beyond].tolist()
        ]
    edges = np.diff(is_word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lengths = ends - starts
    if not lengths.size:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int32)
    # polynomial in the code points over each word (wrapping at 2**64), then mixed with its length
    word_starts = np.r_[
        0, np.cumsum(lengths)[:-1]
    ]  # where each word begins among the word characters
    offsets = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(word_starts, lengths)
    powers = np.ones(int(lengths.max()), dtype=np.uint64)
    powers[1:] = np.cumprod(np.full(len(powers) - 1, _WORD_BASE, dtype=np.uint64))
    terms = codes[is_word].astype(np.uint64) * powers[offsets]
    hashes = _mix(
        np.add.reduceat(terms, word_starts) ^ (lengths.astype(np.uint64) * np.uint64(_MULTIPLIER))
    )
    text_starts = np.r_[0, np.cumsum([len(text) + 1 for text in texts])[:-1]]
    owners = (np.searchsorted(text_starts, starts, side="right") - 1).astype(np.int32)
    return hashes, owners


def _mix(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: every bit of a word's polynomial spreads over the whole hash."""
    import numpy as np

    values = values ^ (values >> np.uint64(30))
    values *= np.uint64(0xBF58476D1CE4E5B9)
    values ^= values >> np.uint64(27)
    values *= np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


@lru_cache(maxsize=1)
def _word_character_table() -> np.ndarray:
    """For each code point below U+10000, whether Python's ``re`` reads it as a word character (``\\w``)."""
    import numpy as np

    table = np.zeros(0x10000, dtype=bool)
    plane = "".join(map(chr, range(0x10000)))
    words = _NON_WORD_RUN.sub("", plane)  # the word characters alone, in one pass of ``re``
    table[np.frombuffer(words.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)] = True
    return table


def _cache_path(documents: Sequence[Document], content_key: str | None = None) -> Path:
    """The cache file for this exact list of (id, source, text), under the rule's settings: keyed by
    ``content_key`` where it fixes the list, else by the documents themselves."""
    digest = hashlib.sha256(
        json.dumps([_VERSION, THRESHOLD, MAX_SHINGLE_TEXTS, *SHINGLE_HASHING]).encode()
    )
    if content_key is not None:
        digest.update(b"content\0" + content_key.encode())
        return cache_dir() / "near_duplicates" / f"{digest.hexdigest()[:32]}.json"
    for document in documents:
        digest.update(f"{document.id}\0{document.source}\0".encode())
        digest.update(document.text.encode("utf-8", "surrogatepass"))
        digest.update(b"\0\0")
    return cache_dir() / "near_duplicates" / f"{digest.hexdigest()[:32]}.json"
