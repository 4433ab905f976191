"""Each source's shingles are kept per source: the near-duplicate groups paired from them are the
groups worked out whole, a kept file is read back instead of shingling again, a damaged or foreign
file is worked out again, and ``sources verify`` keeps them for the next run."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.paths import cache_dir
from longbench100.sources import source_shingles
from longbench100.sources.corpus import load_corpus
from longbench100.sources.locations import resolve_location
from longbench100.sources.near_duplicates import (
    _shingles_from_sources,
    find_near_duplicates,
    text_shingles,
)
from longbench100.sources.records import Document
from longbench100.sources.source_shingles import kept_shingles, shingles_by_source
from longbench100.text.tokenization import load_tokenizer
from tests.sources.test_near_duplicates import _texts_sharing_shingles
from tests.support.fixture_mirror import write_mirror

SOURCES = ("alpha", "beta", "gamma")


def _documents() -> list[Document]:
    """Made-up documents of three sources, each listed together: near-copies and identical texts
    within a source and across sources (``beta`` repeats some of ``alpha``'s texts and near-copies
    others), texts with no shingle, and boilerplate held by more texts than a shingle may be."""
    texts = _texts_sharing_shingles()
    by_source = {
        "alpha": texts[:40] + [texts[70]],  # 70: a near-copy of 3
        "beta": texts[40:70] + texts[10:15] + [texts[71]],  # 71: a longer version of 4
        "gamma": texts[::7] + texts[72:],
    }
    return [
        Document(f"{source}/{number}", source, text)
        for source in SOURCES
        for number, text in enumerate(by_source[source])
    ]


def _keys(tag: str) -> dict[str, str]:
    return {source: f"{tag}-{source}" for source in SOURCES}


def _counting_shingles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of texts shingled by each call that works shingles out from here on."""
    calls: list[int] = []

    def counted(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(texts))
        return text_shingles(texts)

    monkeypatch.setattr(source_shingles, "text_shingles", counted)
    return calls


def test_groups_paired_from_kept_shingles_are_the_groups_worked_out_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    documents = _documents()
    whole = find_near_duplicates(documents, cache=False)
    assert whole.dropped == {"alpha": 1, "beta": 6, "gamma": 16}
    assert whole.identical == {"beta": 5, "gamma": 16}  # beta/30-34 are alpha/10-14
    assert whole.canonical["alpha/40"] == "alpha/3"  # a near-copy in its source
    assert whole.canonical["beta/35"] == "alpha/4"  # a near-copy of another source's text
    calls = _counting_shingles(monkeypatch)
    for content_key in ("first", "read back"):  # shingled and kept, then read back
        found = find_near_duplicates(
            documents, content_key=content_key, source_shingles=shingles_by_source(_keys("k"))
        )
        assert found == whole and list(found.canonical.items()) == list(whole.canonical.items())
        assert calls == [sum(d.source == source for d in documents) for source in SOURCES]
    # what is paired: each distinct text's shingles, as worked out over the distinct texts whole
    texts = list(dict.fromkeys(document.text for document in documents))
    text_of = [texts.index(document.text) for document in documents]
    paired = _shingles_from_sources(documents, text_of, shingles_by_source(_keys("k")))
    assert [array.tolist() for array in paired] == [
        array.tolist() for array in text_shingles(texts)
    ]


def test_a_damaged_foreign_or_mismatched_kept_file_is_worked_out_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))  # its files alone
    texts = _texts_sharing_shingles()
    expected = text_shingles(texts)
    calls = _counting_shingles(monkeypatch)
    kept_shingles("alpha", "damaged", texts)
    kept_shingles("beta", "foreign", texts[:5])
    (alpha,) = (cache_dir() / "shingles").glob("alpha-*")
    (beta,) = (cache_dir() / "shingles").glob("beta-*")
    content = bytearray(alpha.read_bytes())
    content[-9] ^= 0x40  # a bit flipped in the last hash
    alpha.write_bytes(bytes(content))
    damaged = kept_shingles("alpha", "damaged", texts)
    shutil.copyfile(beta, alpha)  # another entry's file under this one's name
    foreign = kept_shingles("alpha", "damaged", texts)
    mismatched = kept_shingles("alpha", "damaged", texts[:-1])  # not what was kept: one fewer
    again = kept_shingles("alpha", "damaged", texts[:-1])
    assert calls == [len(texts), 5, len(texts), len(texts), len(texts) - 1]  # again: read back
    for shingles in (damaged, foreign):
        assert [array.tolist() for array in shingles] == [array.tolist() for array in expected]
    for shingles in (mismatched, again):
        assert [array.tolist() for array in shingles] == [
            array.tolist() for array in text_shingles(texts[:-1])
        ]


def test_a_source_whose_documents_are_listed_apart_is_refused() -> None:
    documents = _documents()
    apart = documents[-3:] + documents[:-3]  # gamma's last documents before alpha's
    with pytest.raises(ValueError, match="gamma"):
        find_near_duplicates(
            apart, content_key="apart", source_shingles=shingles_by_source(_keys("apart"))
        )


def test_verify_keeps_each_sources_shingles_and_a_corpus_pairs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))  # no groups kept yet
    names = {"cnn_dailymail", "qmsum", "hotpotqa", "musique"}
    mirror = write_mirror(tmp_path / "mirror", only=names)
    result = CliRunner().invoke(main, ["sources", "verify", "--sources", str(mirror)])
    assert result.exit_code == 0, result.output
    kept = sorted(path.name.split("-")[0] for path in (cache_dir() / "shingles").iterdir())
    assert kept == sorted(names)
    corpus = load_corpus(resolve_location(str(mirror)), load_tokenizer(), progress=False)
    calls = _counting_shingles(monkeypatch)
    documents = list(corpus.documents.values())
    assert corpus.near_duplicates == find_near_duplicates(documents, cache=False)
    assert calls == []  # every source's shingles read back


def test_the_groups_cache_follows_the_shingle_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Groups made from shingles of one hashing are not read back once the hashing (whose number
    the per-source shingle files are keyed by too) changes."""
    from longbench100.sources import near_duplicates

    before = near_duplicates._cache_path([], content_key="mirror")
    changed = (*near_duplicates.SHINGLE_HASHING[:-1], near_duplicates.SHINGLE_HASHING[-1] + 1)
    monkeypatch.setattr(near_duplicates, "SHINGLE_HASHING", changed)
    assert near_duplicates._cache_path([], content_key="mirror") != before
