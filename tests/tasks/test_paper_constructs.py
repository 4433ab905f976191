"""The 100-LongBench constructs, re-derived from each prompt's text alone (issue 46): kv_retrieval
asks one lookup over the paper's three-record chain, counting_stars' wrong options are the right
counts in another order, multi_doc_qa names two or more supporting passages, passage_retrieval's
padding holds no passage the summary fits nearly as well as the gold. Checked on the synthetic
mirror and, where present, on the real upstream mirror."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from tests.conftest import SHARED_SOURCES
from tests.support.generate_helpers import generate_in_process

TASKS = (
    "kv_retrieval",
    "kv_retrieval_chain",
    "counting_stars",
    "multi_doc_qa",
    "passage_retrieval",
)
RECORD = re.compile(
    r'^Record: the key "([0-9a-f-]{36})" has the value "([0-9a-f-]{36})"\.$', re.MULTILINE
)
PASSAGE = re.compile(r"^Passage (\d+):\n", re.MULTILINE)


def _generate(sources: str, out: Path, lengths: tuple[tuple[str, int], ...], rows: int) -> Path:
    return generate_in_process(out, TASKS, lengths, rows, sources=sources, seed=46)


@pytest.fixture(scope="module")
def synthetic(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generate(
        str(mirror),
        tmp_path_factory.mktemp("constructs") / "out",
        (("2k", 2048), ("3000", 3000)),
        4,
    )


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (SHARED_SOURCES / "README.md").exists():
        pytest.skip("../shared/sources (real upstream mirror) is absent")
    return _generate(
        str(SHARED_SOURCES),
        tmp_path_factory.mktemp("constructs_real") / "out",
        (("8k", 8192), ("32k", 32768)),
        8,
    )


@pytest.fixture(params=["synthetic", "real"])
def data(request: pytest.FixtureRequest) -> Path:
    return request.getfixturevalue(request.param)


def _records(data: Path, task: str) -> list[dict]:
    records = [
        json.loads(line)
        for path in sorted((data / task).glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert records, task
    return records


def _chains(prompt: str) -> list[list[str]]:
    """Every chain the prompt's records form, each from its start (a key that is no record's
    value)."""
    records = RECORD.findall(prompt)
    value_of = dict(records)
    assert len(value_of) == len(records), "a key has two records"
    values = set(value_of.values())
    chains = []
    for key in (key for key, _ in records if key not in values):
        chain = [key]
        while chain[-1] in value_of:
            chain.append(value_of[chain[-1]])
        chains.append(chain)
    assert sum(len(chain) - 1 for chain in chains) == len(records), (
        "a record outside every chain (a cycle)"
    )
    return chains


def _passages(prompt: str, end_marker: str) -> dict[int, str]:
    """The numbered passages of a prompt, each up to the next heading (the last up to
    ``end_marker``)."""
    body = prompt[: prompt.rindex(end_marker)]
    parts = PASSAGE.split(body)
    return {int(number): text.strip() for number, text in zip(parts[1::2], parts[2::2])}


def test_kv_retrieval_asks_one_lookup_over_the_papers_three_record_chain(data: Path) -> None:
    for record in _records(data, "kv_retrieval"):
        prompt = record["prompt"]
        asked = re.search(
            r'Task: find the record whose key is "([0-9a-f-]{36})" and give its value\.', prompt
        ).group(1)
        chains = _chains(prompt)
        [chain] = [chain for chain in chains if asked in chain]
        assert chain.index(asked) == 0 and len(chain) == 4  # k0 -> k1 -> k2 -> k3, asked at k0
        assert record["answers"] == [chain[1]]  # one lookup: the value of k0
        assert len(chains) >= 9 and all(
            len(other) == 4 for other in chains
        )  # decoy chains of the very same shape
        assert "lookups" not in prompt


def test_kv_retrieval_chain_keeps_three_lookups_from_a_key_inside_a_longer_chain(
    data: Path,
) -> None:
    for record in _records(data, "kv_retrieval_chain"):
        value_of = dict(RECORD.findall(record["prompt"]))
        key = re.search(r'start from the key "([0-9a-f-]{36})"', record["prompt"]).group(1)
        assert "for 3 lookups in total" in record["prompt"]
        for _ in range(3):
            key = value_of[key]
        assert record["answers"] == [key] and key in value_of  # the answer is no chain end


def test_counting_stars_options_differ_from_the_right_list_only_in_order(data: Path) -> None:
    for record in _records(data, "counting_stars"):
        prompt = record["prompt"]
        found = [
            int(count) for count in re.findall(r"The little penguin counted (\d+) stars\.", prompt)
        ]
        options = {
            number: [int(count) for count in text.split(", ")]
            for number, text in re.findall(r"^Option (\d+): \[([\d, ]+)\]$", prompt, re.MULTILINE)
        }
        assert len(found) == 4 and options[record["answers"][0]] == found
        wrong = [counts for number, counts in options.items() if number != record["answers"][0]]
        assert (
            len(wrong) == 3 and len({tuple(counts) for counts in wrong}) == 3 and found not in wrong
        )
        assert all(
            sorted(counts) == sorted(found) for counts in wrong
        )  # the same counts, another order
        context = set(re.findall(r"\d+", prompt[: prompt.index("Question:")]))
        assert all({str(count) for count in counts} <= context for counts in options.values())


def test_multi_doc_qa_names_two_or_more_supporting_passages(data: Path) -> None:
    for record in _records(data, "multi_doc_qa"):
        prompt = record["prompt"]
        named = re.search(r"Combine what Passages ([\d, ]+ and \d+) say", prompt).group(1)
        numbers = [int(number) for number in re.findall(r"\d+", named)]
        passages = _passages(prompt, "\n\nCombine what Passages")
        assert (
            len(numbers) >= 2
            and set(numbers) <= set(passages)
            and numbers == record["gold"]["passages"]
        )
        assert len({passages[number] for number in numbers}) == len(numbers)  # different texts


def test_passage_retrieval_padding_fits_the_summary_clearly_worse_than_the_gold(data: Path) -> None:
    for record in _records(data, "passage_retrieval"):
        passages = _passages(record["prompt"], "\n\nSummary:\n")
        texts = list(passages.values())
        gold = list(passages).index(int(record["answers"][0]))
        vectorizer = TfidfVectorizer(
            stop_words="english", sublinear_tf=True, ngram_range=(1, 2)
        ).fit(texts)  # ROUGE-1 and -2 alike
        scores = cosine_similarity(
            vectorizer.transform([record["question"]]), vectorizer.transform(texts)
        )[0]
        assert len(texts) >= 2 and all(
            score < 0.8 * scores[gold] for index, score in enumerate(scores) if index != gold
        )
        assert sum(map(len, texts)) - len(texts[gold]) >= 0.9 * len(
            texts[gold]
        )  # the padding outweighs the gold
