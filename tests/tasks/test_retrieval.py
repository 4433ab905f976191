"""HELMET's retrieval tasks (rag_hard, rerank) and their BM25 index: exact budgets recounted, gold placement
and depth, pairing, determinism, hard vs random negatives, and the on-disk index cache."""

from __future__ import annotations

import json
import re
import shutil
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.sources import bm25
from longbench100.sources.records import Document, SourceData
from longbench100.sources.registry import SourceEntry
from longbench100.text.answers import normalize_answer
from longbench100.text.tokenization import load_tokenizer
from tests.conftest import SHARED_SOURCES
from tests.support.generate_helpers import generate, records

TASKS = "rag_hard,rerank"
RESERVED = {"rag_hard": 32, "rerank": 200}
LENGTHS = {"2k": 2048, "4k": 4096}
ID_RE = re.compile(
    r"^\[ID: ([A-Za-z0-9]+)\]", re.MULTILINE
)  # written from the contract, not from the builder


@pytest.fixture(scope="module")
def binary_mirror(mirror: Path, tmp_path_factory) -> Path:
    """The synthetic mirror without HELMET's graded re-ranking data, so rerank reads the binary stand-in (BioASQ's
    layout; tests/tasks/test_rerank.py covers the graded data)."""
    copy = tmp_path_factory.mktemp("binary") / "mirror"
    shutil.copytree(
        mirror, copy, ignore=lambda folder, names: ["HELMET"] if "HELMET" in names else []
    )
    return copy


@pytest.fixture(scope="module")
def hard(binary_mirror: Path, tmp_path_factory) -> Path:
    return generate(
        tmp_path_factory.mktemp("hard") / "data",
        "--tasks",
        TASKS,
        "--lengths",
        "2k,4k",
        "--rows",
        "6",
        "--sources",
        str(binary_mirror),
    )


@pytest.fixture(scope="module")
def easy(binary_mirror: Path, tmp_path_factory) -> Path:
    return generate(
        tmp_path_factory.mktemp("easy") / "data",
        "--tasks",
        TASKS,
        "--lengths",
        "2k,4k",
        "--rows",
        "6",
        "--sources",
        str(binary_mirror),
        "--negatives",
        "random",
    )


# ---- the index -----------------------------------------------------------------------------------------


def _entry(name: str = "toy") -> SourceEntry:
    return SourceEntry(
        name=name,
        number=99,
        title="toy",
        license="none",
        repo_id="toy/toy",
        revision="main",
        files=(),
        roles=(),
    )


def _data(texts: list[str], checksum: str = "abc") -> SourceData:
    data = SourceData("toy", files={"corpus.parquet": checksum})
    data.documents = {f"toy/{n}": Document(f"toy/{n}", "toy", text) for n, text in enumerate(texts)}
    return data


TOY = [
    "Otters swim in cold rivers and eat fish.",
    "The harbor lantern guides boats at night.",
    "River otters build dens near the water.",
    "A baker sells bread early each morning.",
    "Lanterns and boats fill the harbor.",
]


def test_ranking_puts_matching_documents_first_and_honours_exclusions():
    index = bm25.source_index(_entry(), _data(TOY))
    ranked = index.ranked("where do otters live near the river")
    assert {doc_id for doc_id, _ in ranked[:2]} == {"toy/0", "toy/2"}
    assert [score for _, score in ranked] == sorted((score for _, score in ranked), reverse=True)
    assert ranked[-1][1] == 0.0
    top = [
        doc_id
        for doc_id, _ in index.top_k("otters river", 2, excluded=lambda doc_id: doc_id == "toy/2")
    ]
    assert len(top) == 2 and top[0] == "toy/0" and "toy/2" not in top
    zero = index.ranked("the of and")  # only stop words: every score 0, ties in index order
    assert [doc_id for doc_id, _ in zero] == [f"toy/{n}" for n in range(len(TOY))]


def test_a_document_holding_a_gold_answer_is_never_a_negative(isolated_cache):
    import random

    from longbench100.sources.corpus import Corpus
    from longbench100.tasks.negatives import NegativePool

    corpus = Corpus({"toy": _entry()}, {"toy": _data(TOY)})
    pool = NegativePool(corpus, ["toy"])
    kept = [
        n.document.id
        for n in pool.negatives(
            "toy", "where do otters live", [], "bm25", random.Random(1), ("the water",)
        )
    ]
    assert "toy/2" not in kept and {"toy/0", "toy/1", "toy/3", "toy/4"} == set(
        kept
    )  # "... near the water." answers it
    unfiltered = [
        n.document.id
        for n in pool.negatives("toy", "where do otters live", [], "bm25", random.Random(1))
    ]
    assert "toy/2" in unfiltered


def test_the_index_is_cached_on_disk_and_keyed_by_the_source_files(isolated_cache):
    bm25._LOADED.clear()
    first = bm25.source_index(_entry("cached"), _data(TOY))
    assert not first.from_cache and bm25.index_path(_entry("cached"), _data(TOY)).is_dir()
    bm25._LOADED.clear()
    again = bm25.source_index(_entry("cached"), _data(TOY))
    assert again.from_cache
    assert list(again.scores("harbor boats")) == list(first.scores("harbor boats"))
    assert bm25.index_path(_entry("cached"), _data(TOY, "changed")) != bm25.index_path(
        _entry("cached"), _data(TOY)
    )
    bm25._LOADED.clear()
    other = bm25.source_index(
        _entry("cached"), _data(TOY + ["Harbor boats and harbor lanterns."], "changed")
    )
    assert not other.from_cache and other.ranked("harbor boats")[0][0] == "toy/5"


def test_a_damaged_cache_is_rebuilt(isolated_cache):
    bm25._LOADED.clear()
    path = bm25.index_path(_entry("damaged"), _data(TOY))
    bm25.source_index(_entry("damaged"), _data(TOY))
    (path / "doc_ids.json").write_text("not json")
    bm25._LOADED.clear()
    rebuilt = bm25.source_index(_entry("damaged"), _data(TOY))
    assert not rebuilt.from_cache and rebuilt.ranked("otters")[0][0] in {"toy/0", "toy/2"}


# ---- both builders on the synthetic mirror ----------------------------------------------------------------


@pytest.mark.parametrize("task", ("rag_hard", "rerank"))
def test_no_prompt_is_over_budget_recounted(hard, easy, task):
    tokenizer = load_tokenizer("cl100k_base")
    for folder in (hard, easy):
        for label, length in LENGTHS.items():
            rows = records(folder, task, label)
            assert len(rows) == 6
            for row in rows:
                assert (
                    tokenizer.count(row["prompt"])
                    == row["prompt_tokens"]
                    <= length - RESERVED[task]
                )


def test_rag_hard_places_every_gold_passage_as_one_block_at_the_row_depth(hard, mirror):
    for label in LENGTHS:
        for row in records(hard, "rag_hard", label):
            gold = row["gold"]
            prompt = row["prompt"]
            start, end = gold["spans"]["context"]
            golds = [prompt[a:b] for a, b in gold["spans"]["gold"]]
            assert len(golds) == len(gold["doc_ids"]) >= 1
            numbers = [int(n) for n in re.findall(r"^Document \[(\d+)\]", prompt, re.MULTILINE)]
            assert numbers == list(range(1, len(numbers) + 1))
            assert gold["passages"] == list(
                range(gold["passages"][0], gold["passages"][0] + len(golds))
            )  # one block
            assert (
                len(numbers)
                == len(golds) + len(gold["negative_scores"])
                == len(golds) + len(row["distractors"])
            )
            stratum = row["row"] % 11
            assert stratum / 11 <= gold["target_depth"] <= (stratum + 1) / 11
            assert gold["depth"] == pytest.approx(
                (gold["spans"]["gold"][0][0] - start) / (end - start), abs=1e-4
            )
            before = gold["passages"][0] - 1
            negatives = len(gold["negative_scores"])
            if negatives:
                assert abs(before / negatives - gold["target_depth"]) <= 1.5 / negatives + 0.15
            assert row["answers"] and gold["negatives"] == "bm25"


def test_rag_hard_shows_the_best_bm25_negatives_in_an_order_that_hides_their_scores(hard):
    """The negatives are the best by BM25 (recorded best first), never the gold, and the prompt
    shows them in a seeded order, not in score order (which would point at the gold block); a
    negative shown at both lengths keeps its order against the others (paired rows)."""
    rows_with_three, shown_in_score_order, by_row = 0, 0, {}
    for label in LENGTHS:
        for row in records(hard, "rag_hard", label):
            scores = [entry["bm25"] for entry in row["gold"]["negative_scores"]]
            assert scores == sorted(scores, reverse=True)
            ids = [entry["id"] for entry in row["gold"]["negative_scores"]]
            shown = [d["id"] for d in row["distractors"]]
            assert sorted(shown) == sorted(ids) and not set(ids) & set(row["gold"]["doc_ids"])
            assert len(set(ids)) == len(ids)
            assert all(d["source"] == row["gold"]["sources"][0] for d in row["distractors"])
            if len(ids) >= 3:
                rows_with_three += 1
                shown_in_score_order += shown == ids
            by_row.setdefault(row["row"], []).append(shown)
    assert rows_with_three >= 6 and shown_in_score_order <= rows_with_three // 4
    for short, long in by_row.values():
        common = set(short) & set(long)
        assert [i for i in short if i in common] == [i for i in long if i in common]


def test_hard_negatives_match_the_question_better_than_random_ones(hard, easy):
    def mean_score(folder: Path, task: str) -> float:
        return statistics.mean(
            entry["bm25"]
            for label in LENGTHS
            for row in records(folder, task, label)
            for entry in row["gold"]["negative_scores"]
        )

    assert mean_score(hard, "rag_hard") > mean_score(
        easy, "rag_hard"
    )  # rerank: tests/tasks/test_rerank.py (this corpus is too small)
    assert records(easy, "rag_hard", "4k")[0]["gold"]["negatives"] == "random"
    assert json.loads((easy / "manifest.json").read_text())["options"]["negatives"] == "random"


def test_rag_hard_shows_two_worked_examples_before_the_documents_as_helmet_does(hard):
    by_row = {}
    for label in ("2k", "4k"):
        for row in records(hard, "rag_hard", label):
            prompt, gold = row["prompt"], row["gold"]
            demos = re.findall(
                r"Here is a worked example\.\n(.*?)\nQuestion: (.*?)\nAnswer: (.*?)\n", prompt, re.S
            )
            assert len(demos) == 2 == len(gold["demonstration_ids"]) and row["question"] not in {
                q for _, q, _ in demos
            }
            assert gold["item_ids"][0] not in gold["demonstration_ids"]
            demo_texts = {
                text
                for documents, _, _ in demos
                for text in re.findall(r"^Document \(Title: [^\n]*?\): (.*)$", documents, re.M)
            }
            shown = prompt.split("Now the documents for your question.", 1)[1]
            assert not [
                text for text in demo_texts if text in shown
            ]  # a demonstration's paragraph is never a negative
            assert prompt.index("Here is a worked example") < prompt.index("Document [1]")
            by_row.setdefault(row["row"], set()).add(tuple(gold["demonstration_ids"]))
    assert all(
        len(variants) == 1 for variants in by_row.values()
    )  # the same examples at every length


def test_rows_are_paired_across_lengths(hard):
    for task in ("rag_hard", "rerank"):
        short, long = records(hard, task, "2k"), records(hard, task, "4k")
        for a, b in zip(short, long):
            assert a["gold"]["item_ids"] == b["gold"]["item_ids"] and a["question"] == b["question"]
    for a, b in zip(records(hard, "rag_hard", "2k"), records(hard, "rag_hard", "4k")):
        assert a["gold"]["target_depth"] == b["gold"]["target_depth"]
        shorter = [entry["id"] for entry in a["gold"]["negative_scores"]]
        assert (
            shorter == [entry["id"] for entry in b["gold"]["negative_scores"]][: len(shorter)]
        )  # the same hardest negatives, then more
    for a, b in zip(records(hard, "rerank", "2k"), records(hard, "rerank", "4k")):
        ids_short, ids_long = ID_RE.findall(a["prompt"]), ID_RE.findall(b["prompt"])
        assert set(ids_short) < set(ids_long)
        assert [
            i for i in ids_long if i in set(ids_short)
        ] == ids_short  # same ids, same relative order


def test_rerank_labels_every_shown_passage_and_asks_for_a_ranking(hard):
    for label in LENGTHS:
        rows = records(hard, "rerank", label)
        for row in rows:
            shown = ID_RE.findall(row["prompt"])
            relevance = row["gold"]["relevance"]
            assert sorted(shown) == sorted(relevance) and len(set(shown)) == len(shown)
            assert all(re.fullmatch(r"[A-Za-z0-9]+", passage_id) for passage_id in shown)
            assert sorted(row["answers"]) == sorted(shown)
            assert [relevance[i] for i in row["answers"]] == sorted(
                relevance.values(), reverse=True
            )
            relevant = sum(relevance.values())
            assert (
                1 <= relevant == len(row["gold"]["doc_ids"])
                and relevant <= len(shown) - relevant + 1
            )  # at most half (+1) relevant
            assert len(row["gold"]["spans"]["gold"]) == len(shown)
            assert " > " in row["prompt"] and row["gold"]["permutation"] == row["row"] % 3
        for first in range(
            0, len(rows) - 2, 3
        ):  # three permutations of one item: same passages, other ids and order
            group = rows[first : first + 3]
            assert len({tuple(r["gold"]["item_ids"]) for r in group}) == 1
            assert len({tuple(ID_RE.findall(r["prompt"])) for r in group}) == 3
            texts = [sorted(r["prompt"][a:b] for a, b in r["gold"]["spans"]["gold"]) for r in group]
            assert texts[0] == texts[1] == texts[2]


def test_the_same_options_give_byte_identical_files_whatever_the_workers(
    hard, binary_mirror, tmp_path
):
    again = generate(
        tmp_path / "again",
        "--tasks",
        TASKS,
        "--lengths",
        "2k,4k",
        "--rows",
        "6",
        "--sources",
        str(binary_mirror),
        "--workers",
        "2",
    )
    for task in ("rag_hard", "rerank"):
        for label in LENGTHS:
            assert (again / task / f"{label}.jsonl").read_bytes() == (
                hard / task / f"{label}.jsonl"
            ).read_bytes()


def test_an_unknown_negatives_kind_is_refused_in_one_line(mirror, tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--out",
            str(tmp_path / "x"),
            "--tasks",
            TASKS,
            "--sources",
            str(mirror),
            "--negatives",
            "dense",
            "--lengths",
            "2k",
            "--rows",
            "1",
        ],
    )
    assert result.exit_code == 2 and "dense" in result.output


# ---- the real sources ----------------------------------------------------------------------------------


def passages(prompt: str) -> list[tuple[int, str]]:
    """The ``Document [n] (Title: ...): text`` blocks of a rag_hard prompt as (n, text)."""
    heads = list(re.finditer(r"^Document \[(\d+)\](?: \(Title: [^\n]*?\))?: ", prompt, re.M))
    ends = [head.start() for head in heads[1:]] + [prompt.rindex("\n\nQuestion: ")]
    return [(int(head.group(1)), prompt[head.end() : end]) for head, end in zip(heads, ends)]


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="../shared/sources is not available")
def test_real_rag_hard_gold_is_the_supporting_paragraphs_hotpotqa_marks(tmp_path):
    import pyarrow.parquet as pq

    table = pq.read_table(
        SHARED_SOURCES / "hotpotqa" / "hotpot_qa" / "distractor" / "train-00000-of-00001.parquet"
    )
    upstream = {
        f"hotpot_qa/{row['id']}": row for row in table.to_pylist()
    }  # read here, not through the loader
    out = generate(
        tmp_path / "gold",
        "--tasks",
        "rag_hard",
        "--lengths",
        "8k",
        "--rows",
        "6",
        "--sources",
        str(SHARED_SOURCES),
    )
    for row in records(out, "rag_hard", "8k"):
        facts = upstream[row["gold"]["item_ids"][0]]
        supporting = list(dict.fromkeys(facts["supporting_facts"]["title"]))
        shown = dict(re.findall(r"^Document \[(\d+)\] \(Title: ([^\n]*?)\): ", row["prompt"], re.M))
        assert sorted(shown[str(number)] for number in row["gold"]["passages"]) == sorted(
            supporting
        )
        assert row["answers"] == [facts["answer"]]
        others = [
            title for number, title in shown.items() if int(number) not in row["gold"]["passages"]
        ]
        assert not set(others) & set(supporting)  # no supporting paragraph among the negatives


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="../shared/sources is not available")
def test_real_hard_negatives_score_higher_than_random_ones(tmp_path):
    tokenizer = load_tokenizer("cl100k_base")

    def scores(kind: str) -> list[float]:
        out = generate(
            tmp_path / kind,
            "--tasks",
            "rag_hard",
            "--lengths",
            "8k",
            "--rows",
            "3",
            "--sources",
            str(SHARED_SOURCES),
            "--negatives",
            kind,
        )
        rows = records(out, "rag_hard", "8k")
        assert {row["gold"]["sources"][0] for row in rows} == {
            "hotpot_qa"
        }  # the one source that marks its support
        for row in rows:  # short real passages fill the budget closely
            assert (
                0.95 * (8192 - RESERVED["rag_hard"])
                < tokenizer.count(row["prompt"])
                <= 8192 - RESERVED["rag_hard"]
            )
        for row in rows:  # no negative holds a gold answer (normalised as the QA metrics normalise)
            negatives = [
                text
                for number, text in passages(row["prompt"])
                if number not in row["gold"]["passages"]
            ]
            answers = [f" {normalize_answer(answer)} " for answer in row["answers"]]
            assert not [
                text
                for text in negatives
                if any(answer in f" {normalize_answer(text)} " for answer in answers)
            ]
        return [entry["bm25"] for row in rows for entry in row["gold"]["negative_scores"]]

    assert statistics.median(scores("bm25")) > 2 * statistics.median(scores("random"))


def test_negatives_are_recorded_only_for_tasks_they_shape(mirror, tmp_path):
    other = generate(
        tmp_path / "other",
        "--tasks",
        "kv_retrieval",
        "--lengths",
        "2k",
        "--rows",
        "1",
        "--sources",
        str(mirror),
    )
    assert (
        "negatives" not in json.loads((other / "manifest.json").read_text())["options"]
    )  # folders made before --negatives resume


def test_rerank_shows_helmets_two_worked_examples_where_they_fit(binary_mirror, tmp_path):
    out = generate(
        tmp_path / "demos",
        "--tasks",
        "rerank",
        "--lengths",
        "2k,64k",
        "--rows",
        "3",
        "--sources",
        str(binary_mirror),
    )
    assert all(
        not row["gold"]["demonstration_ids"] and "worked example" not in row["prompt"]
        for row in records(out, "rerank", "2k")
    )
    rows = records(
        out, "rerank", "64k"
    )  # the made-up passages are long (about 500 tokens): two examples of ten need 64k
    assert rows and all(len(row["gold"]["demonstration_ids"]) == 2 for row in rows)
    for row in rows:
        prompt = row["prompt"]
        demos, task = prompt.split("Now the passages for your question.", 1)
        assert demos.count("Here is a worked example.") == 2
        for example in demos.split("Here is a worked example.")[1:]:
            ids = re.findall(r"^Passage with ID (\d+)", example, re.MULTILINE)
            ranking = re.findall(r"\[(\d+)\]", example.split("\nRanking: ", 1)[1])
            assert len(ids) == len(set(ids)) >= 2 and sorted(ranking) == sorted(ids)
        demo_texts = set(re.findall(r"^Passage with ID \d+: (.*)$", demos, re.MULTILINE))
        task_texts = set(re.findall(r"^\[ID: \d+\] (.*)$", task, re.MULTILINE))
        assert demo_texts and task_texts and not demo_texts & task_texts
