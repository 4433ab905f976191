"""passage_count: each row draws its number of distinct passages uniformly over what its budget
allows, so neither other rows' answers nor the announced total predict it (issue 45)."""

from __future__ import annotations

import dataclasses
import json
import random
import statistics
from collections import Counter
from functools import partial
from pathlib import Path

import pytest

from longbench100.baselines.check import run_baselines
from longbench100.baselines.prompt_view import read_prompt
from longbench100.baselines.strategies import chance_answers
from longbench100.folders.data_records import DataRecord
from longbench100.sources.records import Document
from longbench100.tasks.passage_count import DistinctTarget
from tests.support.generate_helpers import generate_in_process

COUNT_SHORTCUTS = ("ratio_of_total", "prior_answer")
PER_PASSAGE = 6
ROOM = 8000


def _pool(rng: random.Random, size: int = 60) -> list[Document]:
    return [
        Document(f"s/{index}", "s", f"text {index}", tokens=rng.randint(150, 1400))
        for index in range(size)
    ]


def _pack(seed: int) -> tuple[DistinctTarget, list[tuple[Document, int]]]:
    rng = random.Random(seed)
    pool = _pool(rng)
    target = DistinctTarget()
    return target, target(pool, rng, ROOM, PER_PASSAGE, lambda document: False)


def test_every_row_is_packed_full_with_a_repeat() -> None:
    for seed in range(300):
        target, packed = _pack(seed)
        costs = [document.tokens + PER_PASSAGE for document, _ in packed]
        used = sum(cost * copies for cost, (_, copies) in zip(costs, packed))
        assert 1 <= len(packed) <= target.most
        assert sum(copies for _, copies in packed) > len(packed), seed  # a passage shown twice
        assert used <= ROOM and ROOM - used < min(costs), seed  # no further copy would fit
        assert len({document.id for document, _ in packed}) == len(packed)


def test_the_distinct_count_is_uniform_over_what_the_room_allows() -> None:
    """Where the count falls within its row's range is uniform; the paper's 1-3 copies (and a drawn
    mean number of copies) put it around a fixed share of the total instead."""
    places, mosts = [], Counter()
    for seed in range(3000):
        target, packed = _pack(seed)
        mosts[target.most] += 1
        places.append((len(packed) - 0.5) / target.most)
    assert len(mosts) >= 3  # the room allows different counts in different rows
    quartiles = statistics.quantiles(places, n=4)
    for found, expected in zip(quartiles, (0.25, 0.5, 0.75)):
        assert abs(found - expected) < 0.04, quartiles
    # each count of a row's range is as likely as another: the lowest as often as the highest
    lowest = sum(place < 1 / 16 for place in places)
    assert lowest > 0.03 * len(places)


def test_chance_counts_only_what_the_row_could_hold() -> None:
    prompt = "".join(f"Paragraph {number}:\nText {number}.\n\n" for number in range(1, 13))
    record = DataRecord(
        id="passage_count-8k-0000",
        task="passage_count",
        label="8k",
        length=8192,
        row=0,
        answers=("5",),
        question="How many distinct paragraphs are there?",
        closed_book_prompt=None,
        gold={"distinct": 5, "total": 12, "possible": [2, 9]},
    )
    assert chance_answers(record, partial(read_prompt, prompt), Counter()) == [
        str(n) for n in range(2, 10)
    ]
    # a record written before rows drew their count: 1 to the announced number of paragraphs
    older = dataclasses.replace(record, gold={"distinct": 5, "total": 12})
    assert chance_answers(older, partial(read_prompt, prompt), Counter()) == [
        str(n) for n in range(1, 13)
    ]


@pytest.fixture(scope="module")
def generated(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("passage_count") / "out"
    generate_in_process(out, ("passage_count",), (("8k", 8192),), 60, sources=str(mirror), seed=45)
    return out


def test_every_answer_lies_in_its_rows_possible_counts(generated: Path) -> None:
    records = [
        json.loads(line)
        for line in (generated / "passage_count" / "8k.jsonl").read_text().splitlines()
    ]
    for record in records:
        low, high = record["gold"]["possible"]
        assert low <= record["gold"]["distinct"] <= high <= record["gold"]["total"]
        assert record["answers"] == [str(record["gold"]["distinct"])]


def test_count_shortcuts_stay_near_chance_on_real_prompts_and_both_twins(generated: Path) -> None:
    cells = run_baselines(generated).cells
    assert {cell.on for cell in cells} == {"real", "gold_removed", "context_swapped"}
    for cell in cells:
        scores = {baseline.name: baseline.score for baseline in cell.baselines}
        for name in COUNT_SHORTCUTS:
            assert scores[name] <= cell.chance + 0.1, (cell.on, name, scores, cell.chance)
