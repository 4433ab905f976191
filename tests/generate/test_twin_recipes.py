"""Control twins kept as recipes: a second run spells the same twins from them, byte for byte."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from longbench100.core.cache_entries import write_json_entry
from longbench100.fitting.refill import PoolText, Segment
from longbench100.generate.controls import ControlBuilder
from longbench100.generate.json_lines import EscapedText
from longbench100.generate.twin_recipes import (
    LITERAL_LIMIT,
    TwinKey,
    TwinRecipe,
    keep_recipes,
    read_recipes,
    recipes_path,
)
from longbench100.sources.records import Document
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate_in_process

# pool documents (titled ones too), a task's own context around its gold, several spans a row
TASKS = ("passage_count", "multi_doc_qa", "rag_hard", "json_kv")
LENGTHS = (("2k", 2048), ("3000", 3000))


def _generate(mirror: Path, out: Path) -> None:
    generate_in_process(out, TASKS, LENGTHS, 3, sources=str(mirror), seed=5)


def _controls(out: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(out)): path.read_bytes()
        for path in sorted((out / "controls").rglob("*.jsonl"))
    }


def _recipe_files(cache: Path) -> list[Path]:
    return sorted((cache / "twin_recipes").glob("*.json"))


@pytest.fixture
def first_run(mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run with an empty twin recipe cache of its own; its output folder."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "first"
    _generate(mirror, out)
    return out


def test_a_second_run_spells_every_twin_from_the_recipes_the_first_kept(
    mirror: Path, tmp_path: Path, first_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(_recipe_files(tmp_path / "cache")) == len(TASKS) * len(LENGTHS)

    def built(*args: object) -> None:
        raise AssertionError("a twin was built again")

    monkeypatch.setattr(ControlBuilder, "twins", built)
    stretched: list[int] = []
    stretch = EscapedText.stretch
    monkeypatch.setattr(
        EscapedText,
        "stretch",
        lambda form, *place: stretched.append(len(form.ends)) or stretch(form, *place),
    )
    second = tmp_path / "second"
    _generate(mirror, second)
    assert any(stretched)  # spelled from the parts of the data prompts' forms as written
    assert _controls(second) == _controls(first_run)
    assert len(_controls(second)) == len(TASKS) * len(LENGTHS)
    assert (second / "manifest.json").read_bytes() == (first_run / "manifest.json").read_bytes()


def test_twins_made_from_the_rows_this_run_built_equal_twins_from_the_file_read_back(
    mirror: Path, tmp_path: Path, first_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from longbench100.generate import controls, run

    taken: list[dict] = []
    read_back = controls.read_back
    monkeypatch.setattr(
        controls, "read_back", lambda record: taken.append(record) or read_back(record)
    )
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "own-cache"))
    kept_in_memory = tmp_path / "in-memory"
    _generate(mirror, kept_in_memory)
    assert taken  # the twins took the rows as built, not the file
    taken.clear()
    monkeypatch.setattr(run, "_all_built_here", lambda result, records: False)
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "another-cache"))
    read_from_file = tmp_path / "from-file"
    _generate(mirror, read_from_file)
    assert not taken
    assert _controls(kept_in_memory) == _controls(read_from_file) == _controls(first_run)
    manifests = [folder / "manifest.json" for folder in (kept_in_memory, read_from_file, first_run)]
    assert len({path.read_bytes() for path in manifests}) == 1


@pytest.mark.parametrize(
    "stored",
    [
        [[10_000, "gold_removed", 5, {}, [["prompt", 0, 0, 3]]]],  # a row the file lacks
        [[0, "gold_removed", 5, {}, [["pool", 10**9, 0, 3]]]],  # a pool text the pool lacks
        [[0, "other", 5, {}, []]],  # a kind there is not
        [[0, "gold_removed", 5, {}, [["prompt", 0, -4, 3]]]],  # a negative offset
        [[0, "gold_removed", 5, {}, [["prompt", 0, 0, 10**9]]]],  # past the prompt's end
        {"not": "a list"},
    ],
)
def test_recipes_that_do_not_fit_are_built_again(
    mirror: Path, tmp_path: Path, first_run: Path, stored: object
) -> None:
    for path in _recipe_files(tmp_path / "cache"):
        write_json_entry(path, stored)
    second = tmp_path / "second"
    _generate(mirror, second)
    assert _controls(second) == _controls(first_run)


def _spelled(pool: list[str], segments: list[Segment]) -> str:
    return "".join(
        segment if isinstance(segment, str) else pool[segment[1]][segment[2] : segment[3]]
        for segment in segments
    )


def test_each_opening_is_told_as_segments_of_the_texts_it_was_cut_from() -> None:
    """Spans drawn one after another: what a span leaves of a text (from any character, blanks
    and the separator skipped) opens the next one's source."""
    rng = random.Random(3)
    texts = [
        " ".join(f"w{index}x{word}." for word in range(rng.randint(5, 40))) for index in range(12)
    ]
    texts[4] = "  " + texts[4]  # a text that opens with blanks
    pool = PoolText(
        [(text, len(text) // 4, None) for text in texts],
        random.Random(1),
        None,
        count=len,
        homes=[("pool", index, 0) for index in range(len(texts))],
    )
    carried = 0
    for _ in range(60):
        source = pool.source_text(rng.randint(1, 60))
        length = rng.randint(0, len(source))
        segments = pool.opening_segments(length)
        assert segments is not None
        assert _spelled(texts, segments) == source[:length]
        carried += bool(pool.rest)
        pool.consume(source[:length])
    assert carried > 10


def test_a_pool_without_homes_tells_no_segments() -> None:
    pool = PoolText([("One. Two.", 2, None)], random.Random(1), None)
    pool.source_text(1)
    assert pool.opening_segments(3) is None


def test_recipes_with_a_long_literal_are_not_kept(tmp_path: Path) -> None:
    short = TwinRecipe(0, "gold_removed", [("prompt", 0, 0, 9), "x" * LITERAL_LIMIT], 7, {})
    keep_recipes(tmp_path / "short.json", [short])
    assert read_recipes(tmp_path / "short.json") == [short]
    long = replace(short, segments=["x" * (LITERAL_LIMIT + 1)])
    keep_recipes(tmp_path / "long.json", [short, long])
    assert not (tmp_path / "long.json").exists()
    assert read_recipes(tmp_path / "long.json") is None


def test_the_key_holds_everything_the_twins_depend_on() -> None:
    tokenizer = load_tokenizer("cl100k_base")
    document = Document("source/1", "source", "Some text.", None, 3)
    key = TwinKey("passage_count", "8k", tokenizer, False, 8000, 42, "corpus", [document])
    path = recipes_path(key, "a" * 64)
    assert path is not None
    changed = [
        replace(key, label="16k"),
        replace(key, chat=True),
        replace(key, budget=7999),
        replace(key, seed=43),
        replace(key, corpus_key="other corpus"),
        replace(key, pool=[replace(document, text="Some text!!")]),
        replace(key, pool=[]),
        replace(key, tokenizer=load_tokenizer("o200k_base")),
    ]
    paths = {recipes_path(other, "a" * 64) for other in changed} | {recipes_path(key, "b" * 64)}
    assert path not in paths and len(paths) == len(changed) + 1
    assert recipes_path(replace(key, corpus_key=None), "a" * 64) is None
    assert recipes_path(replace(key, corpus_key=None, pool=[]), "a" * 64) is not None
