"""Task candidates are worked out once and read back from the cache: the same files either way, a
second run (at the same lengths or others) does not work them out again, a changed template,
tokenizer or seed works them out afresh, and so does a damaged, foreign or outdated cache file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longbench100.core.paths import packaged_dir
from longbench100.fitting.fit import BuildContext
from longbench100.fitting.templates import PromptTemplates
from longbench100.generate import candidate_cache
from longbench100.sources.corpus import load_corpus
from longbench100.sources.locations import resolve_location
from longbench100.tasks import BUILDERS
from longbench100.tasks.base import GoldAmongDistractors
from longbench100.text.tokenization import load_tokenizer
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


def run(
    mirror: Path, out: Path, cache: Path, monkeypatch, *options: str, lengths: str = "2k,4k"
) -> Path:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(cache))
    return generate(
        out,
        "--tasks",
        TASKS,
        "--lengths",
        lengths,
        "--rows",
        "3",
        "--sources",
        str(mirror),
        *options,
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


def test_a_run_at_other_lengths_reads_them_back_and_writes_what_a_cold_run_writes(
    mirror, tmp_path, monkeypatch, counted
):
    run(mirror, tmp_path / "first", tmp_path / "cache", monkeypatch, lengths="2k")
    counted.clear()
    other = run(mirror, tmp_path / "other", tmp_path / "cache", monkeypatch, lengths="6k,8k")
    assert counted == []  # the candidates of the 2k run serve 6k and 8k
    cold = run(mirror, tmp_path / "cold", tmp_path / "fresh", monkeypatch, lengths="6k,8k")
    assert sorted(counted) == ["multi_doc_sum", "single_doc_qa"]
    assert tree(other, skip=("manifest.json",)) == tree(cold, skip=("manifest.json",))


@pytest.mark.parametrize(
    "change",
    [("--tokenizer", "o200k_base"), ("--seed", "7")],
    ids=["tokenizer", "seed"],
)
def test_a_changed_tokenizer_or_option_works_them_out_again(
    mirror, tmp_path, monkeypatch, counted, change
):
    run(mirror, tmp_path / "first", tmp_path / "cache", monkeypatch)
    counted.clear()
    run(mirror, tmp_path / "second", tmp_path / "cache", monkeypatch, *change)
    assert sorted(counted) == ["multi_doc_sum", "single_doc_qa"]


def test_a_changed_template_works_them_out_again(mirror, tmp_path, monkeypatch, counted):
    run(mirror, tmp_path / "first", tmp_path / "cache", monkeypatch)
    templates = tmp_path / "templates"
    templates.mkdir()
    packaged = packaged_dir("task_templates") / "single_doc_qa.j2"
    (templates / "single_doc_qa.j2").write_text(
        "Read on.\n" + packaged.read_text(encoding="utf-8"), encoding="utf-8"
    )
    counted.clear()
    run(mirror, tmp_path / "second", tmp_path / "cache", monkeypatch, "--templates", str(templates))
    assert counted == ["single_doc_qa"]


def test_no_task_s_candidates_depend_on_the_length(mirror):
    """The cache serves every length from one entry: each task's candidates at a small and a large
    budget are the same."""
    tokenizer = load_tokenizer()
    corpus = load_corpus(resolve_location(str(mirror)), tokenizer, progress=False)
    templates = PromptTemplates()
    checked = []
    for task in BUILDERS:
        builder = BUILDERS[task](corpus, templates)
        small, large = (
            builder.candidates(BuildContext(tokenizer, task, label, budget, seed=0))
            for label, budget in (("2k", 1_900), ("128k", 130_000))
        )
        assert small == large, task
        if small:
            checked.append(task)
    assert {"single_doc_qa", "passage_retrieval", "rag_hard"} <= set(checked)
