"""Task candidates are worked out once and read back from the cache: the same files either way, a second run
does not work them out again, and a damaged, foreign or outdated cache file is worked out afresh."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longbench100.generate import candidate_cache
from longbench100.tasks.base import GoldAmongDistractors
from tests.support.generate_helpers import generate, tree

TASKS = "single_doc_qa,multi_doc_sum"


@pytest.fixture
def counted(monkeypatch) -> list[str]:
    """The tasks whose candidates are worked out (not read back), in order."""
    calls: list[str] = []
    original = GoldAmongDistractors.candidates

    def spy(self, ctx):
        calls.append(self.name)
        return original(self, ctx)

    monkeypatch.setattr(GoldAmongDistractors, "candidates", spy)
    return calls


def run(mirror: Path, out: Path, cache: Path, monkeypatch) -> Path:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(cache))
    return generate(
        out, "--tasks", TASKS, "--lengths", "2k,4k", "--rows", "3", "--sources", str(mirror)
    )


def test_a_second_run_reads_the_candidates_back_and_writes_the_same_files(
    mirror, tmp_path, monkeypatch, counted
):
    first = run(mirror, tmp_path / "first", tmp_path / "cache", monkeypatch)
    assert sorted(counted) == ["multi_doc_sum", "single_doc_qa"]
    second = run(mirror, tmp_path / "second", tmp_path / "cache", monkeypatch)
    assert sorted(counted) == ["multi_doc_sum", "single_doc_qa"]  # not worked out again
    assert tree(first, skip=("manifest.json",)) == tree(second, skip=("manifest.json",))


def test_a_damaged_or_foreign_cache_file_is_worked_out_again(
    mirror, tmp_path, monkeypatch, counted
):
    first = run(mirror, tmp_path / "first", tmp_path / "cache", monkeypatch)
    files = sorted((tmp_path / "cache" / "candidates").glob("*.json"))
    assert len(files) == 2
    files[0].write_text("{not json", encoding="utf-8")
    files[1].write_text(json.dumps([["no_such_source/item", 10, None]]), encoding="utf-8")
    counted.clear()
    again = run(mirror, tmp_path / "again", tmp_path / "cache", monkeypatch)
    assert sorted(counted) == ["multi_doc_sum", "single_doc_qa"]
    assert tree(first, skip=("manifest.json",)) == tree(again, skip=("manifest.json",))


def test_changed_code_works_them_out_again(mirror, tmp_path, monkeypatch, counted):
    run(mirror, tmp_path / "first", tmp_path / "cache", monkeypatch)
    monkeypatch.setattr(candidate_cache, "code_digest", lambda: "another version of the code")
    counted.clear()
    run(mirror, tmp_path / "second", tmp_path / "cache", monkeypatch)
    assert sorted(counted) == ["multi_doc_sum", "single_doc_qa"]
    assert len(list((tmp_path / "cache" / "candidates").glob("*.json"))) == 4
