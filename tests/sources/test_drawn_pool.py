"""A drawn pool reads its sources' documents before cleaning and cleans each one when first read:
the documents are those a whole load gives, only the drawn ones are cleaned, and what was cleaned
is read back by the next run."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from longbench100.core.errors import UserError
from longbench100.sources import drawn_pool
from longbench100.sources.drawn_pool import DrawnPool
from longbench100.sources.loader import load_raw_documents, load_source
from longbench100.sources.locations import SourceLocation, resolve_location
from longbench100.sources.near_duplicates import DistinctInPrompt, ShingleIndex
from longbench100.sources.token_cache import TextCounts
from longbench100.tasks.haystack import essay, pass_order
from longbench100.text.tokenization import load_tokenizer
from tests.support.cleaning_calls import record_cleaning
from tests.tasks.test_haystack import pool_with_near_copies


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """A cache folder of each test's own: what another test cleaned is not read back here."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))


def _pool(location: SourceLocation, names: list[str]) -> DrawnPool:
    registry = location.registry()
    read = {name: load_raw_documents(location, registry[name]) for name in names}
    return DrawnPool(
        [registry[name] for name in names],
        {name: documents for name, (documents, _) in read.items()},
        {name: files for name, (_, files) in read.items()},
        TextCounts(load_tokenizer("cl100k_base")),
    )


def _entry_location(tmp_path: Path, document: str, rows: list[dict]) -> SourceLocation:
    """A one-source mirror whose rows are ``rows`` and whose document mapping is ``document``."""
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "mine.toml").write_text(
        'name = "mine"\nroles = ["niah_single_2:noisy"]\nclean = ["detokenize"]\n'
        '[hub]\nrepo_id = "me/data"\n[[files]]\npath = "rows.jsonl"\nformat = "jsonl"\n'
        f"[files.document]\n{document}\n"
    )
    folder = tmp_path / "mirror" / "me" / "data"
    folder.mkdir(parents=True)
    (folder / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return SourceLocation("mirror", tmp_path / "mirror", registry)


BLOCKS = "Passage 1:\nThe mill stood by the river .\nPassage 2:\n  \nPassage 3:\nIt ca n't move ."


@pytest.mark.parametrize(
    ("mapping", "rows"),
    [
        ('text = "text"', [{"text": "The mill stood by the river ."}, {"text": "  "}]),
        ('text = "text"\nid = "id"\ntitle = "t"', [{"text": "A b .", "id": 7, "t": "On it"}]),
        ('text = "text"\nsplit = "passages"', [{"text": BLOCKS}, {"text": BLOCKS}]),
        ('text = "text"\nsplit = "titled_passages"', [{"text": BLOCKS}]),
        (
            'text = "texts"\ntitle = "titles"\nsplit = "lists"',
            [{"texts": ["x y .", ["p", "q"]], "titles": ["T", None]}],
        ),
    ],
)
def test_each_document_is_the_one_a_whole_load_gives(tmp_path, mapping, rows):
    location = _entry_location(tmp_path, mapping, rows)
    whole = load_source(location, location.registry()["mine"])
    pool = _pool(location, ["mine"])
    read = [(d.id, d.source, d.text, d.title) for d in pool.documents if d.text]
    assert read == [(d.id, d.source, d.text, d.title) for d in whole.documents.values()]


def test_the_demo_pool_holds_every_document_of_a_whole_load():
    location = resolve_location("demo")
    registry = location.registry()
    names = [name for name, entry in registry.items() if entry.has_role("niah_single_2", "noisy")]
    pool = _pool(location, names)
    whole = [d for name in names for d in load_source(location, registry[name]).documents.values()]
    assert {(d.id, d.text) for d in pool.documents if d.text} == {(d.id, d.text) for d in whole}


def test_documents_are_cleaned_only_when_read(monkeypatch):
    location = resolve_location("demo")
    names = [n for n, e in location.registry().items() if e.has_role("niah_single_2", "noisy")]
    cleaned = record_cleaning(monkeypatch)
    pool = _pool(location, names)
    assert len(pool.documents) > 20 and not cleaned  # the pool is made without cleaning
    assert [d.source for d in pool.documents] and not cleaned  # sources are known at once
    haystack = essay(pool.documents, random.Random(3), 300, pool.prompt_guard)
    drawn = [pool.raw[d.index] for d in pool.documents if "text" in d.__dict__]
    assert haystack.placed and {raw.text for raw in drawn} <= set(cleaned)
    assert set(cleaned) <= {raw.text for raw in drawn} | {raw.title for raw in drawn}
    assert len(drawn) < len(pool.documents) / 2  # a small haystack cleans a small part


def test_the_next_run_reads_back_what_was_cleaned(monkeypatch):
    location = resolve_location("demo")
    names = [n for n, e in location.registry().items() if e.has_role("niah_single_2", "noisy")]
    first = _pool(location, names)
    made = essay(first.documents, random.Random(5), 800, first.prompt_guard)
    first.keep()

    def refuse(entry, text, passage):
        raise AssertionError("cleaned again")

    monkeypatch.setattr(drawn_pool, "clean_once", refuse)
    second = _pool(location, names)
    again = essay(second.documents, random.Random(5), 800, second.prompt_guard)
    assert [d.id for d in again.placed] == [d.id for d in made.placed]
    assert again.blocks == made.blocks


def test_the_next_run_recalls_the_counts_without_tokenizing(monkeypatch):
    """Counts kept by one run are recalled by the next: the same tokens, and the tokenizer learns
    the same piece counts, with no text tokenized again."""
    location = resolve_location("demo")
    names = [n for n, e in location.registry().items() if e.has_role("niah_single_2", "noisy")]
    first = _pool(location, names)
    counted = [document.tokens for document in first.documents[:6]]
    first.keep()

    def refuse(self, text):
        raise AssertionError("tokenized again")

    monkeypatch.setattr(TextCounts, "count", refuse)
    second = _pool(location, names)
    assert [document.tokens for document in second.documents[:6]] == counted
    assert any(counted)
    with pytest.raises(AssertionError, match="tokenized again"):
        second.documents[6].tokens  # noqa: B018 - a count not kept is worked out


def test_the_kept_relations_keep_out_what_the_prompt_check_does(tmp_path):
    texts = [document.text for document in pool_with_near_copies()]
    location = _entry_location(tmp_path, 'text = "text"', [{"text": text} for text in texts])
    for seed in range(8):
        fresh = _pool(location, ["mine"])  # relations worked out as documents are cleaned
        by_relations = essay(fresh.documents, random.Random(seed), 1500, fresh.prompt_guard)
        fresh.keep()
        kept = _pool(location, ["mine"])  # relations read back for what earlier seeds cleaned
        by_kept = essay(kept.documents, random.Random(seed), 1500, kept.prompt_guard)
        by_check = essay(fresh.documents, random.Random(seed), 1500, DistinctInPrompt)
        placed = [d.id for d in by_check.placed]
        assert [d.id for d in by_relations.placed] == [d.id for d in by_kept.placed] == placed


def test_a_lone_surrogate_is_one_line_naming_the_row(tmp_path):
    location = _entry_location(tmp_path, 'text = "text"', [{"text": "Fine ."}, {"text": "\ud800"}])
    for read in (load_raw_documents, load_source):
        with pytest.raises(UserError, match=r"rows\.jsonl line 2: text holds an invalid unicode"):
            read(location, location.registry()["mine"])


def test_reading_ahead_places_and_relates_as_reading_one_at_a_time(tmp_path):
    texts = [document.text for document in pool_with_near_copies()]
    texts += [texts[1], "Short one.", "Short one.", texts[4] + " " + texts[5], "Short one."]
    rows = [{"text": text, "id": number} for number, text in enumerate(texts)]
    location = _entry_location(tmp_path, 'text = "text"\nid = "id"', rows)
    plain, ahead = _pool(location, ["mine"]), _pool(location, ["mine"])
    ahead.read_ahead((pass_order(len(ahead.raw), random.Random(seed)), 3000) for seed in range(4))
    assert ahead._ahead and not ahead._new  # cleaned, none read yet
    for seed in range(4):
        made = [
            essay(pool.documents, random.Random(seed), 3000, pool.prompt_guard)
            for pool in (plain, ahead)
        ]
        assert [d.id for d in made[0].placed] == [d.id for d in made[1].placed]
    read = list(ahead._new)  # in the order first read
    assert read == list(plain._new) and len(read) == len(texts)
    one_at_a_time = ShingleIndex()  # the relation as worked out when each is read
    expected: dict[int, set[int]] = {index: set() for index in read}
    for index in read:
        for found in one_at_a_time.add(texts[index]):
            expected[index].add(read[found])
            expected[read[found]].add(index)
    assert any(expected.values())
    for pool in (plain, ahead):
        assert {index: set(pool.near_copies(index)) for index in read} == expected
    ahead.keep()
    warm = _pool(location, ["mine"])
    warm.read_ahead((pass_order(len(warm.raw), random.Random(seed)), 3000) for seed in range(4))
    assert not warm._ahead  # what an earlier run kept is read back, not cleaned ahead


def test_a_parquet_source_is_read_for_its_mapped_columns_only(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "mine.toml").write_text(
        'name = "mine"\nroles = ["niah_single_2:noisy"]\nclean = ["detokenize"]\n'
        '[hub]\nrepo_id = "me/data"\n[[files]]\npath = "rows.parquet"\nformat = "parquet"\n'
        '[files.document]\ntext = "article"\nid = "id"\n'
    )
    folder = tmp_path / "mirror" / "me" / "data"
    folder.mkdir(parents=True)
    rows = {"article": ["The mill stood by the river .", "It ca n't move ."], "id": ["a", "b"]}
    pq.write_table(pa.table({**rows, "highlights": ["x", "y"]}), folder / "rows.parquet")
    location = SourceLocation("mirror", tmp_path / "mirror", registry)
    read: list[object] = []
    real = pq.ParquetFile.iter_batches

    def recording(self, *args, **kwargs):
        read.append(kwargs.get("columns"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", recording)
    pool = _pool(location, ["mine"])
    assert read == [["article", "id"]]  # the summaries are not read
    whole = load_source(location, location.registry()["mine"])
    assert read[1:] == [None]  # a whole load reads every column
    assert [(d.id, d.text) for d in pool.documents] == [
        (d.id, d.text) for d in whole.documents.values()
    ]
