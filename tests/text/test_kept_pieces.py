"""Piece counts and openings kept between runs: a second run learns what the first counted and
decoded and tokenizes nothing of it again; a damaged file is ignored; nothing is written where
nothing was counted."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from longbench100.text.kept_pieces import (
    keep_piece_counts,
    kept_path,
    not_kept,
    recall_piece_counts,
)
from longbench100.text.tokenization import load_tokenizer

TASKS = ("single_doc_qa", "kv_retrieval")
PROMPT = (
    "You will see several passages.\n\nPassage 1:\nThe river rose in the night. By morning the "
    "road was gone. Nobody had seen it coming!\n\nPassage 2:\nA second story starts here. It "
    "ends with a question? Then an answer follows.\n\nQuestion: what rose?\nAnswer:"
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))
    return tmp_path


def test_a_second_run_counts_from_what_the_first_kept(cache: Path):
    first = load_tokenizer("cl100k_base")
    recalled = recall_piece_counts(first.members, TASKS)
    assert recalled == {first.identity: ({}, {})}
    tokens = first.count(PROMPT)
    assert tokens == first.count_whole(PROMPT)
    assert first.counted_pieces()  # it tokenized the prompt's pieces itself
    keep_piece_counts(first.members, recalled, TASKS)
    assert kept_path(first, TASKS).is_file()

    second = load_tokenizer("cl100k_base")
    recall_piece_counts(second.members, TASKS)
    assert second.count(PROMPT) == tokens
    assert second.counted_pieces() == {}  # every piece was known: nothing tokenized


def test_a_damaged_or_foreign_file_is_ignored(cache: Path):
    tokenizer = load_tokenizer("cl100k_base")
    path = kept_path(tokenizer, TASKS)
    path.parent.mkdir(parents=True)
    damaged = [
        b"\x00torn",
        marshal.dumps(["a", 1]),
        marshal.dumps({"pieces": {"text": "seven"}, "openings": {}}),
        marshal.dumps({"pieces": {}, "openings": {"text": "opening"}}),
    ]
    for content in damaged:
        path.write_bytes(content)
        fresh = load_tokenizer("cl100k_base")
        assert recall_piece_counts(fresh.members, TASKS) == {fresh.identity: ({}, {})}
        assert fresh.count(PROMPT) == fresh.count_whole(PROMPT)


def test_nothing_is_written_where_nothing_was_counted(cache: Path):
    tokenizer = load_tokenizer("cl100k_base")
    keep_piece_counts(tokenizer.members, recall_piece_counts(tokenizer.members, TASKS), TASKS)
    assert not kept_path(tokenizer, TASKS).exists()


def test_kept_counts_belong_to_one_tokenizer(cache: Path):
    cl100k, o200k = load_tokenizer("cl100k_base"), load_tokenizer("o200k_base")
    assert kept_path(cl100k, TASKS) != kept_path(o200k, TASKS)
    cl100k.count(PROMPT)
    keep_piece_counts(cl100k.members, {}, TASKS)
    fresh = load_tokenizer("o200k_base")
    assert recall_piece_counts(fresh.members, TASKS) == {fresh.identity: ({}, {})}


def test_a_fillers_opening_is_cut_again_without_loading_the_tokenizer(cache: Path):
    text = PROMPT * 40
    first = load_tokenizer("cl100k_base")
    recalled = recall_piece_counts(first.members, TASKS)
    cuts = [(width, tokens) for width in (300, 1_000, 5_000) for tokens in (7, 60, 400)]
    lengths = [first.opening_length(text, width, tokens) for width, tokens in cuts]
    assert first.counted_openings() and any(length is not None for length in lengths)
    keep_piece_counts(first.members, recalled, TASKS)

    second = load_tokenizer("cl100k_base")
    recall_piece_counts(second.members, TASKS)
    assert [second.opening_length(text, width, tokens) for width, tokens in cuts] == lengths
    assert not second.loaded  # every count and opening was kept: its ranks were never read


def test_each_set_of_tasks_keeps_its_own_and_what_is_not_kept_is_left_out(cache: Path):
    tokenizer = load_tokenizer("cl100k_base")
    recalled = recall_piece_counts(tokenizer.members, TASKS)
    with not_kept(tokenizer.members):
        tokenizer.count(PROMPT)  # e.g. control twins' refills
    assert tokenizer.counted_pieces() == {}
    tokenizer.count(PROMPT + " And one more line.")
    keep_piece_counts(tokenizer.members, recalled, TASKS)
    assert kept_path(tokenizer, TASKS) == kept_path(tokenizer, tuple(reversed(TASKS)))
    assert kept_path(tokenizer, TASKS) != kept_path(tokenizer, ("niah_single_2",))
    other = load_tokenizer("cl100k_base")
    assert recall_piece_counts(other.members, ("niah_single_2",)) == {other.identity: ({}, {})}
    assert recall_piece_counts(other.members, TASKS)[other.identity][0]


def test_each_set_of_lengths_keeps_its_own(cache: Path):
    tokenizer = load_tokenizer("cl100k_base")
    assert kept_path(tokenizer, TASKS, [8192, 131072]) == kept_path(
        tokenizer, TASKS, [131072, 8192]
    )
    assert kept_path(tokenizer, TASKS, [8192]) != kept_path(tokenizer, TASKS, [131072])
    recalled = recall_piece_counts(tokenizer.members, TASKS, [131072])
    tokenizer.count(PROMPT)
    keep_piece_counts(tokenizer.members, recalled, TASKS, [131072])
    other = load_tokenizer("cl100k_base")
    assert recall_piece_counts(other.members, TASKS, [8192]) == {other.identity: ({}, {})}
    assert recall_piece_counts(other.members, TASKS, [131072])[other.identity][0]
