"""The BM25 index cache: a cache folder that cannot be written keeps nothing, and the index works."""

from __future__ import annotations

from pathlib import Path

from longbench100.sources import bm25


def test_index_is_kept_and_read_back(tmp_path: Path) -> None:
    index = bm25._build("s", ["a", "b"], ["the red fox runs", "a blue whale swims"])
    bm25._write(index, tmp_path / "bm25" / "s-key")
    kept = bm25._read(tmp_path / "bm25" / "s-key", "s", ["a", "b"])
    assert kept is not None and kept.from_cache
    assert kept.top_k("red fox", 1) == index.top_k("red fox", 1)


def test_cache_folder_taken_by_a_file_keeps_nothing(tmp_path: Path) -> None:
    (tmp_path / "bm25").write_text("not a folder", encoding="utf-8")
    index = bm25._build("s", ["a", "b"], ["the red fox runs", "a blue whale swims"])
    bm25._write(index, tmp_path / "bm25" / "s-key")
    assert bm25._read(tmp_path / "bm25" / "s-key", "s", ["a", "b"]) is None
    assert index.top_k("red fox", 1)


def test_index_damaged_in_place_is_built_again(tmp_path: Path) -> None:
    index = bm25._build("s", ["a", "b"], ["the red fox runs", "a blue whale swims"])
    bm25._write(index, tmp_path / "s-key")
    params = tmp_path / "s-key" / "params.index.json"
    params.write_text(params.read_text(encoding="utf-8").replace("1.5", "2.5"), encoding="utf-8")
    assert bm25._read(tmp_path / "s-key", "s", ["a", "b"]) is None


def test_index_for_other_documents_is_not_read_back(tmp_path: Path) -> None:
    index = bm25._build("s", ["a", "b"], ["the red fox runs", "a blue whale swims"])
    bm25._write(index, tmp_path / "s-key")
    assert bm25._read(tmp_path / "s-key", "s", ["a", "c"]) is None
