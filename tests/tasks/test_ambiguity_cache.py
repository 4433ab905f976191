"""passage_retrieval's ambiguity decisions come from the cache on a warm run: no TF-IDF is fitted;
a changed source works them out again; the decisions are the ones scikit-learn's TF-IDF makes,
worked out without importing it (``text/tfidf.py``), and left to it where a similarity lies
within a hair of the rule's line."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from longbench100.baselines.lexical import query_similarities, tfidf_vectorizer
from longbench100.fitting.templates import PromptTemplates
from longbench100.generate import run as run_module
from longbench100.sources.corpus import Corpus, load_corpus
from longbench100.sources.locations import resolve_location
from longbench100.sources.records import Document, Item
from longbench100.tasks import passage_retrieval
from longbench100.tasks.ambiguity_cache import FORMAT, cached_ambiguity, pool_key
from longbench100.tasks.passage_retrieval import (
    AMBIGUITY_SHARE,
    NGRAMS,
    RULE,
    PassageRetrieval,
    PoolMatcher,
    ambiguous,
)
from longbench100.text import tfidf
from longbench100.text.tfidf import TermTable, TfidfIndex
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate_in_process

REPO = Path(__file__).resolve().parents[2]

_CHILD = """
import sys
from longbench100.cli import main
try:
    main.main(sys.argv[1:], prog_name="longbench100")
except SystemExit as exit:
    assert not exit.code, exit.code
print("sklearn imported" if "sklearn" in sys.modules else "sklearn not imported")
"""
"""Runs the command line on its arguments, then says whether scikit-learn was imported."""


def _generate(sources: Path, out: Path, cache: Path) -> bool:
    """Generate passage_retrieval at 2k x 4 rows in a fresh process with cache folder ``cache``;
    return whether it imported scikit-learn. Without controls: their chance levels come from the
    baselines, which may import it for their own comparisons."""
    python_path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": python_path, "LONGBENCH100_CACHE": str(cache)}
    args = ["generate", "--tasks", "passage_retrieval", "--lengths", "2k", "--rows", "4"]
    args += ["--sources", str(sources), "--out", str(out), "--workers", "1", "--quiet"]
    args.append("--no-controls")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().endswith("sklearn imported")


def _files(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` by relative path, with its bytes."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _entries(cache: Path) -> set[str]:
    """The cached decisions' file names, both kinds."""
    folders = [cache / "passage_pool_exclusions", cache / "passage_ambiguity"]
    return {path.name for folder in folders if folder.exists() for path in folder.iterdir()}


def test_decisions_are_worked_out_then_read_back_and_no_run_imports_sklearn(
    mirror: Path, tmp_path: Path
):
    cache = tmp_path / "cache"
    assert not _generate(mirror, tmp_path / "cold", cache)  # worked out: TF-IDF fitted
    assert (cache / "passage_pool_exclusions").is_dir()  # the own-source pool was drawn
    assert (cache / "passage_ambiguity").is_dir()
    entries = _entries(cache)
    assert not _generate(mirror, tmp_path / "warm", cache)
    assert _entries(cache) == entries  # nothing worked out again
    assert _files(tmp_path / "warm") == _files(tmp_path / "cold")


def _edit_leval_documents(sources: Path) -> None:
    """Add a sentence to every document of the mirror's L-Eval files (five of the task's sources)."""
    for path in sorted((sources / "L4NLP" / "LEval").rglob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for row in rows:
            row["input"] += " The harbor council met again at dawn."
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_a_changed_source_works_its_decisions_out_again(mirror: Path, tmp_path: Path):
    sources = tmp_path / "sources"
    shutil.copytree(mirror, sources)
    cache = tmp_path / "cache"
    _generate(sources, tmp_path / "first", cache)
    before = _entries(cache)
    _edit_leval_documents(sources)
    _generate(sources, tmp_path / "edited", cache)  # new texts: TF-IDF fitted again
    added = _entries(cache) - before
    assert {name for name in added if (cache / "passage_pool_exclusions" / name).exists()}
    entries = _entries(cache)
    _generate(sources, tmp_path / "again", cache)
    assert _entries(cache) == entries


@pytest.fixture(scope="module")
def builder(mirror: Path) -> PassageRetrieval:
    """passage_retrieval's builder over the synthetic mirror."""
    corpus = load_corpus(resolve_location(str(mirror)), load_tokenizer(), progress=False)
    return PassageRetrieval(corpus, PromptTemplates())


def _uncached_pool(builder: PassageRetrieval, item: Item) -> list[Document]:
    """The pool the rule leaves ``item``, worked out afresh (TF-IDF fitted on the whole pool)."""
    own = builder.source_pools[item.source]
    assert item.summary is not None
    gold, *padding = PoolMatcher(own).similarities(
        item.summary, [builder.gold_documents(item)[0].text]
    )
    return [document for document, score in zip(own, padding) if score < AMBIGUITY_SHARE * gold]


def test_cached_pools_are_the_rules_own(builder: PassageRetrieval, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    items = [item for item in builder.items if item.source in builder.source_pools]
    assert len({item.source for item in items}) > 1
    excluded = 0
    for item in items:
        expected = _uncached_pool(builder, item)
        assert _fresh(builder).distractor_pool(item, 1) == expected  # worked out, then stored
        assert _fresh(builder).distractor_pool(item, 1) == expected  # read back
        excluded += len(builder.source_pools[item.source]) - len(expected)
    assert excluded  # some summary fits a padding document nearly as well as its gold
    damaged = next((tmp_path / "cache" / "passage_pool_exclusions").iterdir())
    damaged.write_text('{"value": [1, 2]}', encoding="utf-8")
    fresh = _fresh(builder)
    assert all(fresh.distractor_pool(item, 1) == _uncached_pool(builder, item) for item in items)


def _fresh(builder: PassageRetrieval) -> PassageRetrieval:
    """A builder over ``builder``'s corpus that has worked nothing out yet (reads the cache)."""
    return PassageRetrieval(builder.corpus, PromptTemplates())


def test_the_parent_fits_each_drawn_pool_once_before_the_workers_fork(
    mirror: Path, tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(run_module, "SERIAL_BELOW", 0)  # two processes, however small the run
    fits = tmp_path / "fits.txt"  # one line per TF-IDF fit: process id, its first text's digest

    class LoggedIndex(TfidfIndex):
        def __init__(self, texts: list[str], table: TermTable) -> None:
            with fits.open("a", encoding="utf-8") as log:
                log.write(f"{os.getpid()} {_digest(texts)}\n")
            super().__init__(texts, table)

    # forked workers inherit it; they fit the prompts' passages, which are no pool
    monkeypatch.setattr(passage_retrieval, "TfidfIndex", LoggedIndex)
    generate_in_process(
        tmp_path / "out",
        ("passage_retrieval",),
        (("2k", 2048), ("3000", 3000)),
        4,
        sources=str(mirror),
        seed=11,
        workers=2,
        controls=False,
    )
    pools = {
        _digest([document.text for document in pool]): name
        for name, pool in PassageRetrieval(
            load_corpus(resolve_location(str(mirror)), load_tokenizer(), progress=False),
            PromptTemplates(),
        ).source_pools.items()
    }
    lines = [line.split() for line in fits.read_text(encoding="utf-8").splitlines()]
    pool_fits = [(pid, pools[digest]) for pid, digest in lines if digest in pools]
    assert pool_fits  # the rows drew their own source's pool
    assert {pid for pid, _ in pool_fits} == {str(os.getpid())}  # in this process only
    sources = [source for _, source in pool_fits]
    assert len(sources) == len(set(sources))  # each pool once


def _digest(texts: list[str]) -> str:
    """One digest of ``texts`` in order."""
    return hashlib.sha256(json.dumps(texts).encode()).hexdigest()


def test_cached_prompt_checks_are_the_rules_own(
    builder: PassageRetrieval, tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    rng = random.Random(5)
    documents = [document.text for pool in builder.source_pools.values() for document in pool]
    table = TermTable(NGRAMS)  # one for every check, as a run's builder keeps one
    decisions = []
    for item in builder.items[:40]:
        assert item.summary is not None
        texts = [builder.gold_documents(item)[0].text, *rng.sample(documents, rng.randint(1, 4))]
        rng.shuffle(texts)
        gold = texts.index(builder.gold_documents(item)[0].text)
        expected = _ambiguous_by_sklearn(item.summary, texts, gold)
        assert ambiguous(item.summary, texts, gold, table) == expected
        for _ in range(2):  # worked out, then read back
            decided = cached_ambiguity(
                item.summary,
                texts,
                gold,
                RULE,
                partial(ambiguous, item.summary, texts, gold, table),
            )
            assert decided == expected
        stored = cached_ambiguity(item.summary, texts, gold, RULE, partial(bool, not expected))
        assert stored == expected  # read back, not worked out again
        decisions.append(expected)
    assert set(decisions) == {True, False}


def _ambiguous_by_sklearn(summary: str, texts: list[str], gold: int) -> bool:
    """The prompt check's decision from scikit-learn's own TF-IDF."""
    scores = query_similarities(summary, texts, NGRAMS)
    others = [score for index, score in enumerate(scores) if index != gold]
    return any(score >= AMBIGUITY_SHARE * scores[gold] for score in others)


def test_close_calls_are_left_to_sklearn(builder: PassageRetrieval, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tfidf, "CLOSE", 10.0)  # every similarity lies within the hair
    asked = []
    similarities = PoolMatcher.similarities

    def logged(matcher: PoolMatcher, summary: str, texts: list[str]):
        asked.append(summary)
        return similarities(matcher, summary, texts)

    monkeypatch.setattr(PoolMatcher, "similarities", logged)
    items = [item for item in builder.items if item.source in builder.source_pools]
    for item in items:
        assert _fresh(builder).distractor_pool(item, 1) == _uncached_pool(builder, item)
    assert len(asked) >= 2 * len(items)  # each decided by scikit-learn, then checked by it
    rng = random.Random(8)
    documents = [document.text for pool in builder.source_pools.values() for document in pool]
    table = TermTable(NGRAMS)
    for item in builder.items[:20]:
        assert item.summary is not None
        gold_text = builder.gold_documents(item)[0].text
        texts = [gold_text, *rng.sample(documents, 3)]
        for gold in (0, 2):
            texts[0], texts[gold] = texts[gold], texts[0]
            expected = _ambiguous_by_sklearn(item.summary, texts, gold)
            assert ambiguous(item.summary, texts, gold, table) == expected


def test_the_tfidf_settings_are_those_the_cache_format_holds():
    # the cached decisions' key holds the rule's constants, not the vectorizer's settings: a change
    # here must bump ambiguity_cache.FORMAT (and this snapshot)
    settings = tfidf_vectorizer(NGRAMS).get_params()
    assert (FORMAT, settings["stop_words"], settings["sublinear_tf"]) == (1, "english", True)
    assert (settings["token_pattern"], settings["ngram_range"]) == (r"(?u)\b\w\w+\b", (1, 2))


def test_the_pool_key_follows_the_pools_files_entry_and_documents(builder: PassageRetrieval):
    corpus = builder.corpus
    name, pool = next(iter(builder.source_pools.items()))
    data, entry = corpus.sources[name], corpus.entries[name]
    key = pool_key(corpus, name, pool)
    assert pool_key(Corpus(corpus.entries, dict(corpus.sources)), name, pool) == key
    files = {**data.files, next(iter(data.files)): "0" * 64}
    changed_file = Corpus(corpus.entries, {**corpus.sources, name: replace(data, files=files)})
    changed_entry = Corpus(
        {**corpus.entries, name: replace(entry, revision="other")}, corpus.sources
    )
    assert pool_key(changed_file, name, pool) != key
    assert pool_key(changed_entry, name, pool) != key
    assert pool_key(corpus, name, pool[1:]) != key


def test_the_keys_scikit_learn_version_is_what_its_metadata_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib import metadata

    from longbench100.tasks import ambiguity_cache

    ambiguity_cache._sklearn_version.cache_clear()
    try:
        installed = metadata.version("scikit-learn")
    except metadata.PackageNotFoundError:
        installed = "absent"
    assert ambiguity_cache._sklearn_version() == installed
    (tmp_path / "scikit_learn-0.0.7.dist-info").mkdir()  # first on the path: found first
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path), *sys.path])
    ambiguity_cache._sklearn_version.cache_clear()
    assert ambiguity_cache._sklearn_version() == "0.0.7"
    ambiguity_cache._sklearn_version.cache_clear()
