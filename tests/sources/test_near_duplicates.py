"""Near-duplicate documents are found, count as one text in every pool, and are reported."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.generate.inspection import near_duplicates_line
from longbench100.sources.corpus import Corpus, load_corpus
from longbench100.sources.locations import resolve_location
from longbench100.sources.near_duplicates import (
    MAX_SHINGLE_TEXTS,
    ShingleIndex,
    _cache_path,
    find_near_duplicates,
    opening_shingles,
)
from longbench100.sources.records import Document
from longbench100.tasks.base import distinct_texts
from longbench100.text.tokenization import load_tokenizer
from tests.support.fixture_mirror import paragraph, sentence

STORY = (
    "The harbor council voted on Monday to rebuild the old stone pier before the winter storms arrive. "
    "Fishermen had complained for years that the pier shifted under heavy carts and loose boards. "
    "The mayor said the work would begin in early spring and last about four months. "
    "A local baker offered bread to the workers on every day of the repairs."
)
UPDATED_STORY = (
    STORY.replace("about four months", "nearly five months")
    + " Some residents asked for a new lantern at its end."
)


def _document(source: str, number: int, text: str) -> Document:
    return Document(f"{source}/{number}", source, text)


def _unrelated(count: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [paragraph(rng, 6) for _ in range(count)]


def test_a_near_copy_is_found_and_an_unrelated_text_is_not() -> None:
    documents = [_document("news", 0, STORY)] + [
        _document("news", n + 1, text) for n, text in enumerate(_unrelated(6))
    ]
    documents += [_document("news", 9, UPDATED_STORY), _document("other", 1, STORY)]
    found = find_near_duplicates(documents)
    assert (
        found.key(documents[-2]) == found.key(documents[0]) == found.key(documents[-1]) == "news/0"
    )
    assert len({found.key(document) for document in documents[1:7]}) == 6
    assert found.dropped == {"news": 1, "other": 1} and found.identical == {"other": 1}
    assert (
        find_near_duplicates(documents) == found == find_near_duplicates(documents, cache=False)
    )  # cached and recomputed alike


def test_below_the_threshold_two_texts_stay_distinct() -> None:
    half = STORY.split(". ")
    other = ". ".join(
        half[:1] + [sentence(random.Random(n)) for n in range(8)]
    )  # shares one sentence of four
    found = find_near_duplicates(
        [_document("news", 0, STORY), _document("news", 1, other)], cache=False
    )
    assert found.canonical == {} and found.dropped == {}


def test_texts_shorter_than_one_shingle_are_never_grouped() -> None:
    for texts in ([], ["Brief."], ["Brief.", "Brief note here."]):
        found = find_near_duplicates(
            [_document("news", n, text) for n, text in enumerate(texts)], cache=False
        )
        assert found.canonical == {} and found.dropped == {}


def test_distinct_texts_keeps_one_document_per_group() -> None:
    documents = [
        _document("news", 0, STORY),
        _document("news", 1, "A short note on the weather today."),
        _document("news", 2, UPDATED_STORY),
    ]
    found = find_near_duplicates(documents, cache=False)
    assert [document.id for document in distinct_texts(documents, found)] == ["news/0", "news/1"]
    assert [document.id for document in distinct_texts(documents)] == [
        "news/0",
        "news/1",
        "news/2",
    ]  # identical texts only


@pytest.fixture()
def near_copy_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A one-source registry for passage_count and multi_doc_qa whose documents include a story in three versions."""
    from longbench100.generate import run as runner
    from longbench100.sources.locations import SourceLocation

    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "news.toml").write_text(
        'name = "news"\nroles = ["passage_count:real", "kv_retrieval:noisy"]\n[hub]\nrepo_id = "me/news"\n'
        '[[files]]\npath = "docs.jsonl"\nformat = "jsonl"\n[files.document]\ntext = "text"\nid = "id"\n'
    )
    texts = [STORY, UPDATED_STORY, STORY + " The vote was close."] + [
        paragraph(random.Random(n), 3) for n in range(12)
    ]
    root = tmp_path / "mirror"
    (root / "me" / "news").mkdir(parents=True)
    (root / "me" / "news" / "docs.jsonl").write_text(
        "".join(json.dumps({"id": f"d{n}", "text": text}) + "\n" for n, text in enumerate(texts))
    )
    monkeypatch.setattr(
        runner, "resolve_location", lambda _: SourceLocation("mirror", root, registry)
    )
    return root


def test_no_prompt_holds_two_versions_of_a_story_and_counts_stay_right(
    near_copy_mirror: Path, tmp_path: Path
) -> None:
    from longbench100.generate.options import GenerateOptions
    from longbench100.generate.run import run_generate

    out = tmp_path / "out"
    options = GenerateOptions(
        tasks=("passage_count", "kv_retrieval"),
        lengths=(("1500", 1500),),
        rows=6,
        seed=2,
        tokenizer="cl100k_base",
        out=out,
        sources=str(near_copy_mirror),
        whole_documents=True,
    )
    manifest = run_generate(options, echo=lambda _: None, progress=False)
    versions = ("four months. A local", "five months. A local", "The vote was close.")
    for task in ("passage_count", "kv_retrieval"):
        for line in (out / task / "1500.jsonl").read_text().splitlines():
            record = json.loads(line)
            assert sum(version in record["prompt"] for version in versions) <= 1
            if task == "passage_count":
                ids = [passage["id"] for passage in record["distractors"]]
                assert int(record["answers"][0]) == len(set(ids)) == record["gold"]["distinct"]
                assert record["gold"]["total"] == len(ids)
    assert (
        manifest["near_duplicates"]["dropped"] == {"news": 2}
        and manifest["near_duplicates"]["threshold"] == 0.5
    )
    shown = CliRunner().invoke(main, ["inspect", str(out)])
    assert (
        shown.exit_code == 0
        and "near-duplicate documents dropped" in shown.output
        and "news 2" in shown.output
    )


def test_inspect_line_says_how_many_dropped_documents_are_identical_copies() -> None:
    facts = {
        "threshold": 0.5,
        "shingle_words": 8,
        "dropped": {"news": 2, "shared_corpus": 40},
        "identical": {"shared_corpus": 40},
    }
    line = near_duplicates_line(facts)
    assert line.endswith(": news 2, shared_corpus 40 (40 identical)")


def _random_text(rng: random.Random) -> str:
    """Words and separators from every corner that matters to ``\\w``: ASCII, accents, CJK, digits of other scripts,
    combining marks, an astral letter and an emoji, the underscore, NUL and a lone surrogate."""
    pieces = [
        "word",
        "Word",
        "w",
        "_",
        "x_y",
        "café",
        "e\u0301",
        "日本語",
        "٣٤",
        "ǅ",
        "\U00010400",
        "\U0001f600",
        "\x00",
        "\ud800",
        "İ",
        "ß",
        " ",
        " ",
        "\n",
        ".",
        "-",
        "\u00a0",
        "'",
        "12",
        "a" * 300,
    ]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))


def test_word_hashes_stand_for_the_words_re_finds() -> None:
    """The vectorised word hashes: one per ``re.findall(r"\\w+")`` word, with its text's index, equal exactly for
    equal words, whatever the batch size."""
    import re

    from longbench100.sources import near_duplicates

    rng = random.Random(5)
    texts = [_random_text(rng) for _ in range(3000)]
    words = [(index, word) for index, text in enumerate(texts) for word in re.findall(r"\w+", text)]
    hashes, owners = near_duplicates.word_hashes(texts)
    assert owners.tolist() == [index for index, _ in words]
    by_word: dict[str, int] = {}
    for (_, word), value in zip(words, hashes.tolist()):
        assert by_word.setdefault(word, value) == value
    assert len(set(by_word.values())) == len(by_word) > 500
    small_batches = pytest.MonkeyPatch()
    small_batches.setattr(near_duplicates, "WORD_HASH_CHARS", 200)
    try:
        again, again_owners = near_duplicates.word_hashes(texts)
    finally:
        small_batches.undo()
    assert again.tolist() == hashes.tolist() and again_owners.tolist() == owners.tolist()


def test_the_word_character_table_is_res_own() -> None:
    import re

    from longbench100.sources.near_duplicates import _word_character_table

    table = _word_character_table()
    assert [bool(value) for value in table] == [
        re.fullmatch(r"\w", chr(code)) is not None for code in range(0x10000)
    ]


def test_shingle_pairs_sort_as_a_stable_sort_by_hash() -> None:
    """The fast sort of (hash, text) pairs gives what a stable sort by hash gives, ties included:
    shingles repeated within a text and shared by several."""
    import numpy as np

    from longbench100.sources.near_duplicates import _sorted_pairs

    rng = np.random.default_rng(3)
    hashes = rng.choice(rng.integers(0, 2**63, 500, dtype=np.uint64), 20_000)  # many ties
    owners = np.sort(rng.integers(0, 300, 20_000)).astype(np.int32)
    order = np.argsort(hashes, kind="stable")
    fast_hashes, fast_owners = _sorted_pairs(hashes.copy(), owners.copy())
    assert fast_hashes.tolist() == hashes[order].tolist()
    assert fast_owners.tolist() == owners[order].tolist()
    assert len(set(zip(fast_hashes.tolist(), fast_owners.tolist()))) < len(hashes)
    for empty in (_sorted_pairs(hashes[:0], owners[:0]), _sorted_pairs(hashes[:1], owners[:1])):
        assert [array.tolist() for array in empty] == [hashes[: empty[0].size].tolist()] + [
            owners[: empty[0].size].tolist()
        ]


def test_a_corpus_read_from_files_keys_its_groups_by_its_sources_not_its_texts(mirror: Path):
    corpus = load_corpus(resolve_location(str(mirror)), load_tokenizer(), progress=False)
    key = corpus.content_key()
    assert key is not None
    documents = list(corpus.documents.values())
    assert corpus.near_duplicates == find_near_duplicates(documents, cache=False)
    assert find_near_duplicates(documents, content_key=key) == corpus.near_duplicates
    assert _cache_path([], key) == _cache_path(documents, key) != _cache_path(documents)
    name, data = next(iter(corpus.sources.items()))
    files = {**data.files, next(iter(data.files)): "0" * 64}
    changed_file = Corpus(corpus.entries, {**corpus.sources, name: replace(data, files=files)})
    changed_entry = Corpus(
        {**corpus.entries, name: replace(corpus.entries[name], revision="other")}, corpus.sources
    )
    assert len({key, changed_file.content_key(), changed_entry.content_key()}) == 3
    # documents given besides the sources', or sources not read from files: keyed by the texts
    extra = Document("extra/1", "extra", STORY)
    assert Corpus(corpus.entries, corpus.sources, documents={extra.id: extra}).content_key() is None
    assert Corpus({}, {}, documents={extra.id: extra}).content_key() is None
    unread = Corpus(corpus.entries, {**corpus.sources, name: replace(data, files={})})
    assert unread.content_key() is None


def test_a_shingle_index_finds_the_copies_the_groups_find():
    from tests.tasks.test_haystack import pool_with_near_copies

    documents = pool_with_near_copies()
    documents += [Document(f"d/{len(documents) + i}", "d", d.text) for i, d in enumerate(documents)]
    groups = find_near_duplicates(documents, cache=False)
    index = ShingleIndex()
    for number, document in enumerate(documents):
        found = index.add(document.text)
        earlier = {n for n in range(number) if groups.key(documents[n]) == groups.key(document)}
        assert found == earlier  # every pair here is a direct copy (no chain through a third)


def _texts_sharing_shingles() -> list[str]:
    """Made-up texts: near-copies (a sentence changed, a longer version), identical ones, short
    ones with no shingle, and a boilerplate line that more than ``MAX_SHINGLE_TEXTS`` of them
    hold (in the short ones, enough of their shingles to make them near-copies of each other)."""
    rng = random.Random(7)
    words = "river mill stone bridge market harbor lantern orchard meadow quarry canal".split()

    def prose(sentences: int) -> str:
        return " ".join(
            " ".join(rng.choice(words) for _ in range(10)).capitalize() + "."
            for _ in range(sentences)
        )

    boilerplate = (
        "Read more about the river at the harbor office on the main street today, or write to"
        " the editors of this paper, who answer every letter they receive within a week or two."
    )
    texts = [prose(rng.randint(1, 9)) + " " + boilerplate for _ in range(70)]
    texts += [texts[3].replace(".", "!", 1), texts[4] + " " + prose(3), texts[5], texts[5]]
    return texts + ["Short one.", "Short one.", "Two words", "Short one."]


def test_an_index_built_in_one_pass_finds_what_one_text_at_a_time_finds():
    texts = _texts_sharing_shingles()
    shared = Counter(shingle for text in set(texts) for shingle in opening_shingles(text))
    assert max(shared.values()) > MAX_SHINGLE_TEXTS  # boilerplate held by many texts
    one_at_a_time = ShingleIndex(identical=False)
    expected = {
        (found, number) for number, text in enumerate(texts) for found in one_at_a_time.add(text)
    }
    index, pairs = ShingleIndex.of_texts(texts)
    assert len(pairs) == len(set(pairs)) and set(pairs) == expected
    assert (3, 70) in expected and (5, 72) in expected and (72, 73) in expected
    assert len(expected) > 500  # most: texts related by the boilerplate alone
    assert not any(74 in pair or 75 in pair for pair in expected)  # no shingle: none found
    for text in [*texts[60:], "Short one.", texts[0] + " Something else entirely here."]:
        assert index.add(text) == one_at_a_time.add(text)  # it goes on as the other does
