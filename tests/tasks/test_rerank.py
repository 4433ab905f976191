"""rerank on HELMET's own graded re-ranking data (``helmet_msmarco``: a TREC DL query, its candidates judged
0-3, read from a member of HELMET's ``data.tar.gz``), on the synthetic mirror: the loader keeps every grade,
the prompt's ``gold.relevance`` is the file's grade of each shown passage, the shown candidates are balanced
over the grades, rows pair across lengths, worked examples rank by grade, and bad archives or grades stop
in one line. The file is read back here with ``tarfile`` and ``json``, never through the package."""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from longbench100.core.errors import SourceAbsent, UserError
from longbench100.sources.loader import load_source
from longbench100.sources.locations import active_entries, resolve_location
from longbench100.sources.registry import parse_entry
from tests.support.fixture_mirror import tar_archive, write_mirror
from tests.support.generate_helpers import generate, records

ARCHIVE = Path("princeton-nlp") / "HELMET" / "data.tar.gz"
MEMBER = "data/msmarco/test_reranking_data_k1000_dep3.jsonl"
ID_RE = re.compile(r"^\[ID: (\d+)\] (.*)$", re.MULTILINE)  # the prompt contract: "[ID: n] text"


@pytest.fixture(scope="module")
def graded_mirror(tmp_path_factory) -> Path:
    return write_mirror(
        tmp_path_factory.mktemp("graded"), only={"helmet_msmarco", "rag_mini_bioasq_rerank"}
    )


@pytest.fixture(scope="module")
def upstream(graded_mirror: Path) -> dict[str, dict]:
    """The archive's rows by query id, read with tarfile and json."""
    with tarfile.open(graded_mirror / ARCHIVE) as archive:
        lines = archive.extractfile(MEMBER).read().decode().splitlines()
    return {row["qid"]: row for row in map(json.loads, lines)}


@pytest.fixture(scope="module")
def graded(graded_mirror: Path, tmp_path_factory) -> Path:
    return generate(
        tmp_path_factory.mktemp("graded-data") / "data",
        "--tasks",
        "rerank",
        "--lengths",
        "2k,8k",
        "--rows",
        "9",
        "--sources",
        str(graded_mirror),
    )


def file_grades(row: dict, upstream: dict[str, dict]) -> dict[str, int]:
    """The archive's grade of each passage text of the row's query (candidates the query does not judge: absent)."""
    qid = row["gold"]["item_ids"][0].split("/", 1)[1]
    return {candidate["text"]: candidate["label"] for candidate in upstream[qid]["ctxs"]}


def test_the_graded_source_replaces_the_binary_stand_in_unless_its_member_is_missing(
    graded_mirror, tmp_path
):
    location = resolve_location(str(graded_mirror))
    active = active_entries(location, location.registry())
    assert "helmet_msmarco" in active and "rag_mini_bioasq_rerank" not in active
    mirror = tmp_path / "mirror"
    shutil.copytree(graded_mirror, mirror)
    (mirror / ARCHIVE).write_bytes(
        tar_archive({"data/msmarco/other.jsonl": b"{}\n"})
    )  # HELMET's archive, but not this file
    location = resolve_location(str(mirror))
    registry = location.registry()
    assert "helmet_msmarco" in active_entries(
        location, registry
    )  # an archive is never listed ahead of a read
    with pytest.raises(
        SourceAbsent, match=r"has no member data/msmarco/test_reranking_data_k1000_dep3\.jsonl"
    ):
        load_source(
            location, registry["helmet_msmarco"]
        )  # the read streams through it and remembers
    active = active_entries(location, registry)
    assert "helmet_msmarco" not in active and "rag_mini_bioasq_rerank" in active


def test_every_candidate_keeps_its_grade(graded_mirror, upstream):
    location = resolve_location(str(graded_mirror))
    data = load_source(location, location.registry()["helmet_msmarco"])
    assert len(data.items) == len(upstream)
    for item in data.items:
        row = upstream[item.id.split("/", 1)[1]]
        first = {}
        for candidate in row["ctxs"]:
            first.setdefault(
                str(candidate["id"]), candidate
            )  # a candidate listed twice is judged once
        assert item.kind == "ranking" and item.question == row["query"]
        assert [doc_id.split("/", 1)[1] for doc_id in item.doc_ids] == list(first)
        assert list(item.grades) == [candidate["label"] for candidate in first.values()]
        assert [data.documents[doc_id].text for doc_id in item.doc_ids] == [
            candidate["text"] for candidate in first.values()
        ]


def test_relevance_is_the_files_grade_of_each_shown_passage(graded, upstream):
    for label in ("2k", "8k"):
        for row in records(graded, "rerank", label):
            grades = file_grades(row, upstream)
            shown = dict(
                ID_RE.findall(row["prompt"].split("Now the passages for your question.")[-1])
            )
            relevance = row["gold"]["relevance"]
            assert sorted(shown) == sorted(relevance)
            for passage_id, text in shown.items():
                assert relevance[passage_id] == grades.get(
                    text, 0
                )  # a passage the query does not judge is not relevant
            assert [relevance[i] for i in row["answers"]] == sorted(
                relevance.values(), reverse=True
            )
            assert len(row["gold"]["doc_ids"]) == sum(grade > 0 for grade in relevance.values())


def test_the_shown_candidates_are_balanced_over_the_grades(graded, upstream):
    # one of each grade in turn while they last: no grade is shown more than once ahead of another that has more
    for label in ("2k", "8k"):
        for row in records(graded, "rerank", label):
            available = Counter(file_grades(row, upstream).values())
            shown = Counter(row["gold"]["relevance"].values())
            for grade in available:
                for other in shown:
                    assert shown[grade] >= min(available[grade], shown[other] - 1), (
                        label,
                        row["row"],
                        shown,
                        available,
                    )


def test_rows_pair_across_lengths(graded):
    for short, long in zip(records(graded, "rerank", "2k"), records(graded, "rerank", "8k")):
        assert short["gold"]["item_ids"] == long["gold"]["item_ids"]
        ids_short = [
            i
            for i, _ in ID_RE.findall(
                short["prompt"].split("Now the passages for your question.")[-1]
            )
        ]
        ids_long = [
            i
            for i, _ in ID_RE.findall(
                long["prompt"].split("Now the passages for your question.")[-1]
            )
        ]
        assert set(ids_short) < set(ids_long)
        assert [i for i in ids_long if i in set(ids_short)] == ids_short
        assert all(short["gold"]["relevance"][i] == long["gold"]["relevance"][i] for i in ids_short)


def test_worked_examples_rank_their_passages_by_grade(graded, upstream):
    rows = [row for row in records(graded, "rerank", "8k") if row["gold"]["demonstration_ids"]]
    assert rows
    for row in rows:
        demos = (
            row["prompt"]
            .split("Now the passages for your question.", 1)[0]
            .split("Here is a worked example.")[1:]
        )
        assert len(demos) == 2
        for example, demo_id in zip(demos, row["gold"]["demonstration_ids"]):
            grades = {
                candidate["text"]: candidate["label"]
                for candidate in upstream[demo_id.split("/", 1)[1]]["ctxs"]
            }
            texts = dict(re.findall(r"^Passage with ID (\d+): (.*)$", example, re.MULTILINE))
            ranking = re.findall(r"\[(\d+)\]", example.split("\nRanking: ", 1)[1])
            assert len(texts) == 10 and sorted(ranking) == sorted(texts)
            ranked_grades = [grades[texts[passage_id]] for passage_id in ranking]
            assert (
                ranked_grades == sorted(ranked_grades, reverse=True) and len(set(ranked_grades)) > 1
            )


def test_a_missing_member_and_a_bad_grade_stop_in_one_line(tmp_path):
    entry_file = Path(__file__).resolve().parents[2] / "sources" / "helmet_msmarco.toml"
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "helmet_msmarco.toml").write_text(entry_file.read_text())
    entry = parse_entry(registry / "helmet_msmarco.toml")
    archive = tmp_path / "mirror" / ARCHIVE
    archive.parent.mkdir(parents=True)
    from longbench100.sources.locations import SourceLocation

    location = SourceLocation("mirror", tmp_path / "mirror", registry)
    archive.write_bytes(tar_archive({"data/other.jsonl": b"{}\n"}))
    with pytest.raises(
        SourceAbsent, match=r"source helmet_msmarco: data\.tar\.gz has no member data/msmarco/"
    ):
        load_source(location, entry)
    bad = {"qid": "1", "query": "q", "ctxs": [{"id": "1", "text": "a passage", "label": "high"}]}
    archive.write_bytes(tar_archive({MEMBER: (json.dumps(bad) + "\n").encode()}))
    with pytest.raises(
        UserError, match=r"grade 'label' of object 1 is 'high', not an integer >= 0"
    ):
        load_source(location, entry)
    archive.write_bytes(b"not a tar archive")
    with pytest.raises(UserError, match=r"cannot read tar archive"):
        load_source(location, entry)


@pytest.mark.parametrize(
    "body,message",
    [
        (
            '[[files]]\npath = "x"\nformat = "jsonl"\n[files.document]\ntext = "t"\n[files.item]\nkind = "ranking"\nquestion = "q"\n',
            "a ranking item needs the field mapping 'grades'",
        ),
        (
            '[[files]]\npath = "x"\nformat = "jsonl"\n[files.document]\ntext = "t"\n[files.item]\nkind = "ranking"\nquestion = "q"\n'
            'grades = "g"\ndoc_ids = "ids"\n',
            "grades the documents of its own row",
        ),
    ],
)
def test_bad_ranking_entries_name_the_problem(tmp_path, body, message):
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\n[hub]\nrepo_id = "a/b"\n' + body)
    with pytest.raises(UserError, match=message):
        parse_entry(path)


def test_the_source_passages_after_the_candidates_are_bm25_best_by_default(
    graded, graded_mirror, upstream, tmp_path
):
    easy = generate(
        tmp_path / "easy",
        "--tasks",
        "rerank",
        "--lengths",
        "2k,8k",
        "--rows",
        "9",
        "--sources",
        str(graded_mirror),
        "--negatives",
        "random",
    )

    def unjudged_scores(folder: Path) -> list[float]:
        scores = []
        for row in records(folder, "rerank", "8k"):
            judged = {
                f"helmet_msmarco/{candidate['id']}"
                for candidate in upstream[row["gold"]["item_ids"][0].split("/", 1)[1]]["ctxs"]
            }
            scores += [
                entry["bm25"]
                for entry in row["gold"]["negative_scores"]
                if entry["id"] not in judged
            ]
        return scores

    hard_scores, easy_scores = unjudged_scores(graded), unjudged_scores(easy)
    assert (
        hard_scores
        and easy_scores
        and sum(hard_scores) / len(hard_scores) > sum(easy_scores) / len(easy_scores)
    )


def test_no_passage_is_shown_twice_in_a_prompt(graded_mirror, tmp_path):
    # every query but the last also judges one shared, highly relevant passage: the worked examples and the
    # asked question must still never show it twice
    shared = {
        "id": "999999",
        "text": "A shared passage that many queries judge perfectly relevant.",
        "label": 3,
    }
    mirror = tmp_path / "mirror"
    shutil.copytree(graded_mirror, mirror)
    with tarfile.open(graded_mirror / ARCHIVE) as archive:
        rows = [
            json.loads(line) for line in archive.extractfile(MEMBER).read().decode().splitlines()
        ]
    for row in rows[:-1]:
        row["ctxs"].append(dict(shared))
    (mirror / ARCHIVE).write_bytes(
        tar_archive({MEMBER: "".join(json.dumps(row) + "\n" for row in rows).encode()})
    )
    out = generate(
        tmp_path / "out",
        "--tasks",
        "rerank",
        "--lengths",
        "8k",
        "--rows",
        str(3 * len(rows)),
        "--sources",
        str(mirror),
    )
    for row in records(out, "rerank", "8k"):
        texts = re.findall(
            r"^(?:\[ID: \d+\]|Passage with ID \d+:) (.*)$", row["prompt"], re.MULTILINE
        )
        assert len(texts) == len(set(texts)), row["id"]
        assert row["prompt"].count(shared["text"]) <= 1, row["id"]


def test_the_manifest_counts_rows_per_source_from_what_was_written(graded):
    manifest = json.loads((graded / "manifest.json").read_text())
    for label in ("2k", "8k"):
        counted = Counter(row["gold"]["sources"][0] for row in records(graded, "rerank", label))
        assert (
            manifest["tasks"]["rerank"]["lengths"][label]["sources"]
            == dict(counted)
            == {"helmet_msmarco": 9}
        )
