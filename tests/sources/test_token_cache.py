"""Token counts of source documents: cached per source, or, for a run that places few documents of
large sources, counted when a document's count is first read; the data written is the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from longbench100.generate import run as run_module
from longbench100.sources import corpus as corpus_module
from longbench100.sources.loader import load_source
from longbench100.sources.locations import resolve_location
from longbench100.sources.records import CountedWhenRead
from longbench100.sources.token_cache import attach_token_counts, cache_path
from longbench100.tasks import niah
from longbench100.text.joint_tokenizer import load_tokenizers
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate, tree


def test_counted_when_read_gives_the_cached_counts_and_writes_nothing(
    mirror: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))  # no counts cached yet
    location = resolve_location(str(mirror))
    entry = location.registry()["cnn_dailymail"]
    tokenizer = load_tokenizer("cl100k_base")
    lazy = load_source(location, entry)
    assert attach_token_counts(tokenizer, entry, lazy, when_read=True) is False
    assert all(isinstance(document, CountedWhenRead) for document in lazy.documents.values())
    assert not cache_path(tokenizer, entry, lazy.files).exists()
    first = next(iter(lazy.documents.values()))
    assert "tokens" not in vars(first)  # nothing counted until read
    counted = load_source(location, entry)
    assert attach_token_counts(load_tokenizer("cl100k_base"), entry, counted) is False
    assert cache_path(tokenizer, entry, counted.files).is_file()
    assert {doc_id: doc.tokens for doc_id, doc in lazy.documents.items()} == {
        doc_id: doc.tokens for doc_id, doc in counted.documents.items()
    }
    assert first.tokens == tokenizer.count_whole(first.text) > 0
    assert tokenizer.learned_piece_counts(first.text) is not None  # placing it tokenizes nothing
    # once the counts are cached, even a run that may count when read reads them back
    cached = load_source(location, entry)
    assert attach_token_counts(tokenizer, entry, cached, when_read=True) is True
    assert not any(isinstance(document, CountedWhenRead) for document in cached.documents.values())


def test_several_tokenizers_count_when_read_as_the_largest(
    mirror: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))
    location = resolve_location(str(mirror))
    entry = location.registry()["cnn_dailymail"]
    joint = load_tokenizers("cl100k_base,o200k_base")
    data = load_source(location, entry)
    attach_token_counts(joint, entry, data, when_read=True)
    for document in list(data.documents.values())[:5]:
        assert document.tokens == max(member.count_whole(document.text) for member in joint.members)


def _generate(cache: Path, out: Path, mirror: Path, workers: str, monkeypatch) -> None:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(cache))
    generate(
        out,
        *["--sources", str(mirror), "--tasks", "niah_single_2,niah_multikey_1"],
        *["--lengths", "1k,2k", "--rows", "3", "--workers", workers],
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_short_niah_run_counts_when_read_and_writes_the_same(
    mirror: Path, tmp_path: Path, monkeypatch, workers: str
) -> None:
    monkeypatch.setattr(run_module, "SERIAL_BELOW", 0)  # as many processes as asked
    _generate(tmp_path / "lazy-cache", tmp_path / "lazy", mirror, workers, monkeypatch)
    assert not list((tmp_path / "lazy-cache").glob("token_counts/*"))  # nothing counted ahead
    kept = list((tmp_path / "lazy-cache").glob("essay_units/*"))  # only what rows here drew
    assert kept and all("-drawn" in path.name for path in kept)  # rows built here, kept
    _generate(tmp_path / "lazy-cache", tmp_path / "again", mirror, workers, monkeypatch)
    with monkeypatch.context() as patch:  # the same run, preparing every document ahead
        patch.setattr(corpus_module, "draws_little_of", lambda tokens, documents: False)
        patch.setattr(niah, "draws_little_of", lambda tokens, documents: False)
        _generate(tmp_path / "ahead-cache", tmp_path / "ahead", mirror, workers, monkeypatch)
    ahead = list((tmp_path / "ahead-cache").glob("essay_units/*"))
    assert ahead and not all("-drawn" in path.name for path in ahead)  # the whole pool, ahead
    skip = ("manifest.json",)
    assert tree(tmp_path / "lazy", skip=skip) == tree(tmp_path / "ahead", skip=skip)
    assert tree(tmp_path / "again", skip=skip) == tree(tmp_path / "ahead", skip=skip)
