"""NDCG@10 for re-ranking (scoring/metrics/ranking.py): the library's numbers against the textbook formula, and the
ranking parser on replies written the way chatty models write them."""

import json
import math
import random
import string
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.task_info import TASKS, TaskInfo
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length
from longbench100.folders.data_records import DataRecord
from longbench100.scoring.grading import GradeJob, grade_jobs
from longbench100.scoring.metrics.metric_table import METRICS
from longbench100.scoring.metrics.ranking import (
    helmet_ranking,
    ndcg_at_10,
    ndcg_at_10_lenient,
    ndcg_cut,
    parse_ranking,
)


def textbook_ndcg(ranking: list[str], relevance: dict[str, int], k: int = 10) -> float:
    """Järvelin-Kekäläinen NDCG@k with linear gain: sum of grade / log2(rank + 1) over the first k ranks, divided
    by the same sum for the grades sorted from the highest (the convention trec_eval uses)."""
    dcg = sum(
        relevance.get(doc, 0) / math.log2(rank + 1) for rank, doc in enumerate(ranking[:k], start=1)
    )
    ideal = sorted(relevance.values(), reverse=True)[:k]
    idcg = sum(grade / math.log2(rank + 1) for rank, grade in enumerate(ideal, start=1))
    return dcg / idcg


def rerank_record(relevance: dict[str, int]) -> DataRecord:
    """A rerank-shaped record: gold.relevance grades every passage, answers list the ids best first."""
    best_first = sorted(relevance, key=lambda key: -relevance[key])
    return DataRecord(
        id="rerank-8k-0000-p0",
        task="kv_retrieval",
        label="8k",
        length=8192,
        row=0,
        answers=tuple(best_first),
        question="q",
        closed_book_prompt=None,
        gold={"relevance": relevance},
    )


def random_case(
    rng: random.Random, alphabet: str = string.ascii_letters + string.digits
) -> tuple[list[str], dict[str, int]]:
    """Random passage ids with random grades (at least one relevant) and a random partial ranking of them."""
    count = rng.randint(1, 40)
    ids = list(
        dict.fromkeys("".join(rng.choices(alphabet, k=rng.randint(1, 6))) for _ in range(count))
    )
    relevance = {identifier: rng.choice([0, 0, 0, 1, 2, 3]) for identifier in ids}
    relevance[rng.choice(ids)] = rng.randint(1, 3)
    ranking = rng.sample(ids, rng.randint(1, len(ids)))
    return ranking, relevance


def test_ndcg_equals_the_textbook_formula_on_random_rankings():
    rng = random.Random(20261122)
    for _ in range(500):
        ranking, relevance = random_case(rng)
        assert ndcg_cut(ranking, relevance) == pytest.approx(
            textbook_ndcg(ranking, relevance), abs=1e-9
        )


def test_ndcg_at_10_reads_the_reply_and_matches_the_textbook_formula():
    rng = random.Random(7)
    for _ in range(200):
        ranking, relevance = random_case(rng, string.digits)  # HELMET's passage ids are integers
        reply = "Ranking: " + " > ".join(f"[{identifier}]" for identifier in ranking)
        assert ndcg_at_10(reply, rerank_record(relevance)) == pytest.approx(
            textbook_ndcg(ranking, relevance), abs=1e-9
        )
        ranking, relevance = random_case(rng)
        reply = "Ranking: " + " > ".join(f"[{identifier}]" for identifier in ranking)
        assert ndcg_at_10_lenient(reply, rerank_record(relevance)) == pytest.approx(
            textbook_ndcg(ranking, relevance), abs=1e-9
        )


# HELMET's reader (utils.parse_rankings), worked out by hand from its rules for each reply shape:
# drop "[", "]", ":"; lower-case; delete "id"; take the longest run "N > N > ..."; unknown ids stay.
HELMET_REPLIES = [
    ("Ranking: [ID: 12] > [ID: 7] > [ID: 3]", ["12", "7", "3"]),  # the asked format
    ("ID12 > ID7 > ID3", ["12", "7", "3"]),
    ("[12] > [7]\nso the rest follow: [3] > [5] > [9]", ["3", "5", "9"]),  # the longest chain wins
    (
        "1. [ID: 12]\n2. [ID: 7]\n3. [ID: 3]",
        ["12"],
    ),  # a numbered list: runs of one number; the first longest is the first id
    ("12, 7, 3", ["12"]),  # commas are no chain: the first integer alone
    (
        "The most relevant is passage 7, then 12.",
        ["12"],
    ),  # the longest run, even of one number, wins: "12" over "7"
    (
        "<think>12 > 3 > 7 > 5</think>Ranking: 7 > 12",
        ["12", "3", "7", "5"],
    ),  # reasoning is read like any text
    ("[99] > [12] > [7]", ["99", "12", "7"]),  # an unknown id keeps its place
    ("[12] > [7] > [12] > [3]", ["12", "7", "3"]),  # a repeat keeps its first place
    (
        "None of them is relevant.",
        ["none of them is relevant."],
    ),  # no integer: the whole reply, one unknown id
]


@pytest.mark.parametrize("reply, expected", HELMET_REPLIES)
def test_the_default_reader_parses_as_helmet_does(reply, expected):
    assert helmet_ranking(reply) == expected


def test_helmet_reading_ranks_unknown_ids_as_non_relevant_and_lists_by_their_first_id():
    relevance = {"12": 2, "7": 1, "3": 0, "5": 0}
    record = rerank_record(relevance)
    assert ndcg_at_10("[99] > [12] > [7]", record) == pytest.approx(
        textbook_ndcg(["99", "12", "7"], relevance)
    )
    assert (
        ndcg_at_10("[99] > [12] > [7]", record)
        < ndcg_at_10_lenient("[99] > [12] > [7]", record)
        == pytest.approx(1.0)
    )
    numbered = "1. [ID: 12]\n2. [ID: 7]"
    assert ndcg_at_10(numbered, record) == pytest.approx(textbook_ndcg(["12"], relevance))
    assert ndcg_at_10(numbered, record) < ndcg_at_10_lenient(numbered, record) == pytest.approx(1.0)


def test_ndcg_by_hand_and_its_cutoff():
    relevance = {"a": 3, "b": 2, "c": 0, "d": 1}
    ideal = 3 + 2 / math.log2(3) + 1 / 2
    assert ndcg_cut(["c", "a"], relevance) == pytest.approx((3 / math.log2(3)) / ideal)
    assert ndcg_cut(["a", "b", "d", "c"], relevance) == pytest.approx(1.0)
    assert ndcg_cut(["d", "b", "a"], relevance) < ndcg_cut(["a", "b", "d"], relevance)
    assert ndcg_cut([], relevance) == 0.0
    # only the first ten places count: the relevant passage at place 11 earns nothing
    many = {f"n{i}": 0 for i in range(10)} | {"hit": 1}
    assert ndcg_cut([f"n{i}" for i in range(10)] + ["hit"], many) == 0.0
    assert ndcg_cut([f"n{i}" for i in range(9)] + ["hit"], many) == pytest.approx(1 / math.log2(11))


def test_ndcg_at_10_is_registered_and_graded_through_grade_jobs():
    assert METRICS["ndcg_at_10"].grade is ndcg_at_10
    record = rerank_record({"4": 2, "9": 0, "15": 1})
    scores = grade_jobs(
        [
            GradeJob(record, "ndcg_at_10", "[4] > [15] > [9]"),
            GradeJob(record, "ndcg_at_10", "[9] > [15] > [4]"),
            GradeJob(record, "ndcg_at_10", "I cannot rank these."),
        ],
        None,
    )
    assert scores[0] == pytest.approx(1.0)
    assert 0 < scores[1] < 1 and scores[2] == 0.0


@pytest.mark.parametrize(
    "relevance, message",
    [
        (None, "gold.relevance must be a non-empty object"),
        ({}, "gold.relevance must be a non-empty object"),
        ({"1": 0, "2": 0}, "grades every passage 0"),
        ({"1": 2, "2": -1}, "passage '2' is -1"),
        ({"1": 2, "2": "high"}, "passage '2' is 'high'"),
        ({"1": True}, "passage '1' is True"),
    ],
)
def test_a_bad_relevance_object_is_a_one_line_error_naming_the_record(relevance, message):
    record = DataRecord(
        id="rerank-8k-0003-p1",
        task="kv_retrieval",
        label="8k",
        length=8192,
        row=3,
        answers=("1",),
        question=None,
        closed_book_prompt=None,
        gold=None if relevance is None else {"relevance": relevance},
    )
    with pytest.raises(UserError, match=message) as error:
        ndcg_at_10("[1] > [2]", record)
    assert "record rerank-8k-0003-p1" in str(error.value) and "\n" not in str(error.value)


IDS = ["12", "7", "3", "41", "5", "28"]

REPLIES = [
    # the requested format
    ("[12] > [7] > [3]", ["12", "7", "3"]),
    # the prompt's own "ID:" markers echoed back, with spaces and without brackets
    ("[ID: 41] > [ID: 5] > [ID: 12]", ["41", "5", "12"]),
    ("ID: 12 > ID: 7 > ID: 28", ["12", "7", "28"]),
    ("ID3 > ID41 > ID7", ["3", "41", "7"]),
    # a chatty preamble and an explanation that mentions the ids again afterwards
    (
        "Sure! Based on how well each passage answers the query, here is my ranking:\n\n"
        "[28] > [3] > [12] > [5]\n\nPassage [28] directly answers the question, while [3] only touches on it "
        "and [41] is off-topic.",
        ["28", "3", "12", "5"],
    ),
    # reasoning first, naming the passages in document order, then the final chain
    (
        "Let me look at each passage. [3] talks about enzyme kinetics. [5] is about a clinical trial. "
        "[12] describes the exact mechanism asked about.\n\nFinal ranking: [12] > [5] > [3]",
        ["12", "5", "3"],
    ),
    # a reasoning block whose order differs from the answer
    (
        "<think>Maybe [7] > [3] > [41]? No, [41] is better than both.</think>\n[41] > [7] > [3]",
        ["41", "7", "3"],
    ),
    # a numbered list with bold ids and explanations that name other passages
    (
        "Here is the ranking from most to least relevant:\n\n"
        "1. **[ID: 5]** - gives the dosage the question asks for (unlike [12]).\n"
        "2. **[ID: 28]** - mentions the drug but not the dose.\n"
        "3. **[ID: 12]** - related background only.\n\nLet me know if you need more detail!",
        ["5", "28", "12"],
    ),
    # a numbered list of bare ids: the item numbers are not ids even where they coincide with one
    ("1. 41\n2. 3\n3. 5\n4. 7", ["41", "3", "5", "7"]),
    # a bulleted list with nested notes and continuation lines
    (
        "Ranking:\n- Passage 7: the best match\n  - it cites [28] as a source\n  which is useful\n- Passage 12\n"
        "- Passage 5",
        ["7", "12", "5"],
    ),
    # notes on some passages in one list, then the ranking in another: the longer list (or the later one) counts
    (
        "Notes:\n- [3]: background only\n- [41]: off-topic\n\nRanking:\n1. [12]\n2. [7]\n3. [3]",
        ["12", "7", "3"],
    ),
    ("Notes:\n- [3]: background only\n- [41]: off-topic\n\nRanking:\n1. [12]\n2. [7]", ["12", "7"]),
    # a comma-separated answer, and prose that names them
    ("12, 7, 3, 41", ["12", "7", "3", "41"]),
    ("The most relevant passage is 28, followed by 41 and then 7.", ["28", "41", "7"]),
    # repeated ids keep their first place; unknown ids and words are ignored
    ("[7] > [99] > [7] > [12] > [banana] > [3] > [12]", ["7", "12", "3"]),
    # "Passage N" in the chain, after reasoning that names the passages in another order
    (
        "Passage 3 covers the background. Passage 41 is off-topic.\nFinal ranking: Passage 12 > Passage 7 > Passage 3",
        ["12", "7", "3"],
    ),
    ("Document [ID: 5] > Document [ID: 28] > Document [ID: 41]", ["5", "28", "41"]),
    # arrows and markdown around the links
    ("**[5]** → **[3]** -> **[41]**", ["5", "3", "41"]),
    # nothing to rank
    ("I'm sorry, but none of the passages seem relevant to the query.", []),
    ("", []),
]


@pytest.mark.parametrize("reply, expected", REPLIES)
def test_parse_ranking_on_real_shaped_replies(reply, expected):
    assert parse_ranking(reply, IDS) == expected


def test_parse_ranking_with_letter_ids_matches_case_only_when_unambiguous():
    assert parse_ranking("[b7x] > [A2] > [q9]", ["A2", "B7X", "Q9"]) == ["B7X", "A2", "Q9"]
    # "aB" could be either id: only the exact spellings count
    assert parse_ranking("[aB] > [AB] > [ab]", ["ab", "AB"]) == ["AB", "ab"]


PROBE = (
    "rerank_probe"  # a test-only task graded by ndcg_at_10, so this test needs no rerank builder
)


def write_rerank_folder(
    root: Path, relevance: dict[str, int], replies: dict[str, str]
) -> tuple[Path, Path]:
    """A data folder of PROBE records (one per label, each grading ``relevance``) and their predictions, ``replies``
    by label."""
    for label, reply in replies.items():
        record = {
            "id": f"{PROBE}-{label}-0000",
            "task": PROBE,
            "label": label,
            "length": parse_length(label),
            "row": 0,
            "prompt": "passages and a query",
            "answers": list(relevance),
            "question": "query",
            "closed_book_prompt": None,
            "gold": {"relevance": relevance},
        }
        for folder, line in (
            (root / "data", record),
            (root / "pred", {"id": record["id"], "prediction": reply}),
        ):
            (folder / PROBE).mkdir(parents=True, exist_ok=True)
            (folder / PROBE / f"{label}.jsonl").write_text(json.dumps(line) + "\n")
    return root / "data", root / "pred"


def test_score_grades_rerank_records_with_ndcg_at_10(tmp_path, monkeypatch):
    monkeypatch.setitem(
        TASKS, PROBE, TaskInfo(PROBE, "information_retrieval", "ndcg_at_10", False, 200)
    )
    relevance = {"11": 2, "12": 0, "13": 1, "14": 0}
    replies = {
        "2k": "[11] > [13] > [12] > [14]",
        "4k": "Sure, here it is:\n[ID: 13] > [ID: 11]",
        "6k": "14 > 12",
        "8k": "<think>11 first</think>I can't tell which passage is better.",
    }
    data, predictions = write_rerank_folder(tmp_path, relevance, replies)
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "0",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads(out.read_text())
    assert results["metrics"] == {PROBE: "ndcg_at_10"}
    scores = {sample["label"]: sample["score"] for sample in results["samples"]}
    assert scores == pytest.approx(
        {
            "2k": 1.0,
            "4k": textbook_ndcg(["13", "11"], relevance),
            "6k": 0.0,
            "8k": textbook_ndcg(["11"], relevance),
        }
    )  # HELMET reads the reasoning's "11"
    assert 0 < scores["4k"] < 1

    relevance["11"] = "best"
    data, predictions = write_rerank_folder(tmp_path, relevance, replies)
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "0",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 2
    last_line = result.output.strip().splitlines()[-1]
    assert last_line.startswith(
        f"error: record {PROBE}-2k-0000 ({PROBE} 2k): gold.relevance grade of passage '11'"
    )


def test_results_and_report_say_whether_the_relevance_was_graded_or_binary(tmp_path, monkeypatch):
    monkeypatch.setitem(
        TASKS, PROBE, TaskInfo(PROBE, "information_retrieval", "ndcg_at_10", False, 200)
    )
    replies = {"2k": "[11] > [13]", "4k": "[13] > [11]"}
    for name, relevance in (
        ("graded", {"11": 3, "12": 0, "13": 1}),
        ("binary", {"11": 1, "12": 0, "13": 1}),
    ):
        data, predictions = write_rerank_folder(tmp_path / name, relevance, replies)
        out = tmp_path / f"{name}.json"
        result = CliRunner().invoke(
            main,
            [
                "score",
                "--n-boot",
                "0",
                "--model-name",
                name,
                "--base-lengths",
                "2k",
                "--data",
                str(data),
                "--predictions",
                str(predictions),
                "--out",
                str(out),
            ],
        )
        assert result.exit_code == 0, result.output
        assert {
            tuple(sample["relevance_grades"]) for sample in json.loads(out.read_text())["samples"]
        } == {tuple(sorted(set(relevance.values())))}
    report = tmp_path / "report"
    result = CliRunner().invoke(
        main,
        [
            "report",
            str(tmp_path / "graded.json"),
            str(tmp_path / "binary.json"),
            "--out",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    text = (report / "report.md").read_text()
    assert "- graded: 2 of 2 samples graded beyond relevant / not relevant, 0 binary" in text
    assert "- binary: 0 of 2 samples graded beyond relevant / not relevant, 2 binary" in text
