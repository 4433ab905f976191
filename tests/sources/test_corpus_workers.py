"""Sources read for the first time are parsed, cleaned and counted in worker processes (``generate --workers``):
the records, token counts and generated files are the same as from one process, a warm cache sends nothing
to the workers, and a broken source still stops the run with one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from click.testing import CliRunner

from longbench100.cli import main
from longbench100.sources import corpus as corpus_module
from tests.support.generate_helpers import tree

TASKS = "single_doc_qa,multi_doc_qa,kv_retrieval,passage_count"


def run(cache: Path, out: Path, mirror: Path, workers: int, monkeypatch) -> str:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(cache))
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--quiet",
            "--sources",
            str(mirror),
            "--tasks",
            TASKS,
            "--lengths",
            "2k,4k",
            "--rows",
            "3",
            "--out",
            str(out),
            "--workers",
            str(workers),
        ],
    )
    assert result.exit_code == 0, result.output
    return result.output


def cache_files(cache: Path) -> dict[str, bytes]:
    """The record and token-count caches, by relative path."""
    return {
        path.relative_to(cache).as_posix(): path.read_bytes()
        for folder in ("records", "token_counts")
        for path in sorted((cache / folder).glob("*"))
    }


def test_new_sources_read_in_workers_give_the_same_caches_and_data(mirror, tmp_path, monkeypatch):
    run(tmp_path / "cache1", tmp_path / "one", mirror, 1, monkeypatch)
    sent: list[str] = []
    original = corpus_module.worker_pool

    def spying_pool(workers, *args, **kwargs):
        sent.append(f"pool of {workers}")
        return original(workers, *args, **kwargs)

    monkeypatch.setattr(corpus_module, "worker_pool", spying_pool)
    run(tmp_path / "cache2", tmp_path / "two", mirror, 2, monkeypatch)
    assert sent == ["pool of 2"]
    assert cache_files(tmp_path / "cache2") == cache_files(tmp_path / "cache1") != {}
    skip = ("manifest.json",)
    assert tree(tmp_path / "two", skip=skip) == tree(tmp_path / "one", skip=skip)
    run(
        tmp_path / "cache2", tmp_path / "three", mirror, 2, monkeypatch
    )  # warm: every source is cached
    assert sent == ["pool of 2"]


def test_a_broken_source_read_in_a_worker_stops_with_one_line(mirror, tmp_path, monkeypatch):
    broken = tmp_path / "mirror"
    shutil.copytree(mirror, broken)
    path = broken / "L4NLP" / "LEval" / "LEval" / "Generation" / "financial_qa.jsonl"
    path.write_text(path.read_text().splitlines()[0] + "\n{not json\n")
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--quiet",
            "--sources",
            str(broken),
            "--tasks",
            TASKS,
            "--lengths",
            "2k",
            "--rows",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--workers",
            "2",
        ],
    )
    assert result.exit_code == 2
    last = result.output.strip().splitlines()[-1]
    assert (
        last.startswith("error: ")
        and "financial_qa.jsonl line 2: malformed JSON" in last
        and "Traceback" not in result.output
    )
    assert not (tmp_path / "out" / "single_doc_qa").exists()


def _fill_cache_noting_the_vocabulary(location, group):
    """``corpus._fill_cache``, first noting in the file named by ``$NOTES`` this process's id and
    whether its tokenizer's vocabulary was loaded before it started work."""
    tokenizer = corpus_module._worker_tokenizer
    loaded = tokenizer is not None and all(member.loaded for member in tokenizer.members)
    with open(os.environ["NOTES"], "a", encoding="utf-8") as notes:
        notes.write(f"{os.getpid()} {loaded}\n")
    return _FILL_CACHE(location, group)


_FILL_CACHE = corpus_module._fill_cache


def test_workers_inherit_the_vocabulary_loaded_once_before_they_fork(mirror, tmp_path, monkeypatch):
    notes = tmp_path / "notes.txt"
    monkeypatch.setenv("NOTES", str(notes))
    monkeypatch.setattr(corpus_module, "_fill_cache", _fill_cache_noting_the_vocabulary)
    run(tmp_path / "cache", tmp_path / "out", mirror, 2, monkeypatch)
    lines = [line.split() for line in notes.read_text(encoding="utf-8").splitlines()]
    assert len(lines) > 1 and {pid for pid, _ in lines} != {str(os.getpid())}  # in the workers
    assert {loaded for _, loaded in lines} == {"True"}
