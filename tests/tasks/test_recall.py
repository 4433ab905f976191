"""The RULER / HELMET recall tasks: exact budgets, gold checked independently of the builders, depths,
pairing, determinism, suites and the two match metrics."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.suites import load_suite
from longbench100.cli import main
from longbench100.folders.data_records import DataRecord
from longbench100.generate import run as run_module
from longbench100.scoring.grading import GradeJob, grade_jobs
from longbench100.scoring.metrics.parsers import string_match_all, substring_match
from longbench100.text.tokenization import load_tokenizer
from tests.support.cleaning_calls import record_cleaning
from tests.support.generate_helpers import assert_prompts_fit, generate, records, tree

SHARED_SOURCES = Path(__file__).resolve().parents[3] / "shared" / "sources"
NIAH = (
    "niah_single_1",
    "niah_single_2",
    "niah_single_3",
    "niah_multikey_1",
    "niah_multikey_2",
    "niah_multikey_3",
    "niah_multivalue",
    "niah_multiquery",
)
# Written here from the spec's wording, not taken from the builder: "... magic numbers for <key> is: <value>."
NEEDLE_RE = re.compile(
    r"One of the special magic (?:numbers|uuids) for ([\w' -]+?) is: ([\w-]+)\."
)  # keys may hold spaces ("contact lens")
RESERVED = 128  # RULER's answer room for niah and json_kv


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("recall") / "data"
    return generate(
        out,
        "--suite",
        "ruler",
        "--tasks",
        ",".join(NIAH) + ",json_kv",
        "--lengths",
        "4k,8k",
        "--rows",
        "11",
        "--sources",
        "demo",
    )


def context_of(record: dict) -> str:
    """The haystack part of a niah prompt: between the instruction paragraph and the question."""
    return record["prompt"].split("\n\n", 1)[1].rsplit("\n\nQuestion:", 1)[0]


@pytest.mark.parametrize("task", (*NIAH, "json_kv"))
def test_no_prompt_is_over_budget_recounted_and_the_fill_is_close(demo, task):
    for label, length in (("4k", 4096), ("8k", 8192)):
        rows = records(demo, task, label)
        assert len(rows) == 11
        assert_prompts_fit(rows, length - RESERVED, 0.99)


@pytest.mark.parametrize("task", NIAH)
def test_every_gold_needle_is_there_once_and_its_values_are_recoverable(demo, task):
    for label in ("4k", "8k"):
        for row in records(demo, task, label):
            prompt = row["prompt"]
            for needle in row["gold"]["needles"]:
                assert prompt.count(needle) == 1
            found: dict[str, list[str]] = {}
            for key, value in NEEDLE_RE.findall(prompt):
                found.setdefault(key, []).append(value)
            asked = row["gold"]["keys"]
            assert all(key in row["question"] for key in asked)
            assert sorted(value for key in asked for value in found[key]) == sorted(row["answers"])
            assert len(set(row["answers"])) == len(row["answers"])
            expected_needles = {"niah_multivalue": 4, "niah_multiquery": 4}.get(task, 1)
            assert len(row["answers"]) == expected_needles
            if task == "niah_multikey_1":
                assert len(found) == 4  # the gold key and three distractor keys
            if task in ("niah_multikey_2", "niah_multikey_3"):
                assert len(found) > 50 and all(len(values) == 1 for values in found.values())
            if task in ("niah_single_1",):
                assert len(found) == 1


@pytest.mark.parametrize("task", NIAH)
def test_depths_fall_in_the_rows_stratum_and_are_where_the_needle_is(demo, task):
    count = load_tokenizer("cl100k_base").count  # the recorded depth is in tokens
    for label in ("4k", "8k"):
        for row in records(demo, task, label):
            gold = row["gold"]
            stratum = row["row"] % 11
            assert stratum / 11 <= gold["target_depth"] <= (stratum + 1) / 11
            context = context_of(row)
            measured = context.index(gold["needles"][0]) / len(context)
            assert abs(measured - gold["target_depth"]) <= 0.05
            in_tokens = count(context[: context.index(gold["needles"][0])]) / count(context)
            assert abs(gold["depth"] - in_tokens) <= 0.002


def test_needle_keys_come_from_rulers_key_space_so_near_misses_are_rare(demo):
    near_misses, prompts = 0, 0
    for label in ("4k", "8k"):
        for row in records(demo, "niah_multikey_2", label):
            adjective, noun = row["gold"]["keys"][0].split("-", 1)
            others = [
                key for key, _ in NEEDLE_RE.findall(row["prompt"]) if key != row["gold"]["keys"][0]
            ]
            near_misses += sum(
                key.split("-", 1)[0] == adjective or key.split("-", 1)[1] == noun for key in others
            )
            prompts += 1
    assert (
        near_misses / prompts < 1.5
    )  # ~500 needles at 8k: 910 x 6,782 keys give ~0.6 per prompt, our old 131 x 122 lists ~8


def test_essay_haystacks_are_real_prose_with_provenance_and_noise_is_not(demo):
    for row in records(demo, "niah_single_2", "4k"):
        assert row["distractors"] and all(
            item["source"] and item["id"] for item in row["distractors"]
        )
        assert "The river runs slowly" not in row["prompt"]
        assert [item["truncated"] for item in row["distractors"]].count(True) <= 1
    for row in records(demo, "niah_single_1", "4k"):
        assert row["distractors"] == []
        assert context_of(row).count("The river runs slowly past the old mill.") > 20


def test_a_small_pool_is_used_again_and_says_so(tmp_path):
    out = generate(
        tmp_path / "p",
        "--tasks",
        "niah_single_2",
        "--lengths",
        "32k",
        "--rows",
        "1",
        "--sources",
        "demo",
    )
    (row,) = records(out, "niah_single_2", "32k")
    assert row["gold"]["pool_passes"] >= 2  # the demo prose is shorter than 32k tokens
    assert row["prompt"].count(row["gold"]["needles"][0]) == 1
    assert row["prompt_tokens"] >= 0.99 * (32768 - RESERVED)
    ids = [(item["source"], item["id"]) for item in row["distractors"]]
    assert len(ids) > len(set(ids))


def test_rows_are_paired_across_lengths(demo):
    for task in (*NIAH, "json_kv"):
        short, long = records(demo, task, "4k"), records(demo, task, "8k")
        for a, b in zip(short, long):
            assert a["answers"] == b["answers"] and a["question"] == b["question"]
            assert a["gold"]["target_depth"] == b["gold"]["target_depth"]
            assert a["prompt"] != b["prompt"]


def test_json_kv_is_valid_json_with_the_asked_pair_at_the_rows_position(demo):
    for label in ("4k", "8k"):
        for row in records(demo, "json_kv", label):
            prompt = row["prompt"]
            members = json.loads(
                prompt[prompt.index("{") : prompt.rindex("}") + 1], object_pairs_hook=list
            )
            keys = [key for key, _ in members]
            assert len(set(keys)) == len(keys) == row["gold"]["pairs"]
            key = row["gold"]["key"]
            assert dict(members)[key] == row["answers"][0] and f'"{key}"' in row["question"]
            position = keys.index(key) / (len(keys) - 1)
            assert abs(position - row["gold"]["target_depth"]) <= 0.01
            stratum = row["row"] % 6
            assert stratum / 6 <= row["gold"]["target_depth"] <= (stratum + 1) / 6


def test_no_fixed_set_of_places_holds_the_gold(demo):
    """The old paired grid put row r's gold at one of 11 (6 for json_kv) fixed depths; drawn within
    the row's stratum, the 22 rows' depths are all different, and off the old grid points."""
    old_grid = {"json_kv": [step / 5 for step in range(6)]}
    for task in ("niah_multikey_2", "json_kv"):
        depths = [row["gold"]["target_depth"] for row in records(demo, task, "8k")]
        assert len(set(depths)) == len(depths)
        grid = old_grid.get(task, [step / 10 for step in range(11)])
        assert all(min(abs(depth - point) for point in grid) > 1e-4 for depth in depths)


def test_generation_is_deterministic(tmp_path):
    args = (
        "--tasks",
        "niah_single_2,niah_multikey_3,json_kv",
        "--lengths",
        "4k",
        "--rows",
        "3",
        "--sources",
        "demo",
    )
    assert tree(generate(tmp_path / "a", *args)) == tree(generate(tmp_path / "b", *args))


def test_reserve_output_replaces_the_tasks_own_reservation(tmp_path):
    out = generate(
        tmp_path / "r",
        "--tasks",
        "niah_single_1",
        "--lengths",
        "4k",
        "--rows",
        "2",
        "--sources",
        "demo",
        "--reserve-output",
        "8",
    )
    assert all(
        4096 - RESERVED < row["prompt_tokens"] <= 4096 - 8
        for row in records(out, "niah_single_1", "4k")
    )
    assert (
        json.loads((out / "manifest.json").read_text())["tasks"]["niah_single_1"][
            "reserved_output_tokens"
        ]
        == 8
    )


def test_the_manifest_records_the_tasks_own_reservation(demo):
    tasks = json.loads((demo / "manifest.json").read_text())["tasks"]
    assert {tasks[task]["reserved_output_tokens"] for task in (*NIAH, "json_kv")} == {RESERVED}


def test_the_ruler_and_helmet_suites_list_the_recall_tasks():
    assert load_suite("ruler").tasks == (
        *NIAH,
        "variable_tracking",
        "common_words",
        "frequent_words",
        "qa_1",
        "qa_2",
    )
    assert load_suite("ruler").base_lengths == ("4k", "8k")
    helmet = load_suite("helmet-recall")
    assert helmet.tasks == ("json_kv", "niah_multikey_2", "niah_multikey_3", "niah_multivalue")
    assert (
        helmet.metrics["json_kv"] == "substring_match"
        and helmet.metrics["niah_multivalue"] == "string_match_all"
    )


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="../shared/sources is absent")
def test_the_ruler_suite_builds_from_the_shared_sources(tmp_path):
    out = generate(
        tmp_path / "s",
        "--suite",
        "ruler",
        "--lengths",
        "4k",
        "--rows",
        "3",
        "--sources",
        str(SHARED_SOURCES),
    )
    for task in NIAH:
        for row in records(out, task, "4k"):
            assert row["prompt_tokens"] <= 4096 - RESERVED
            assert all(row["prompt"].count(needle) == 1 for needle in row["gold"]["needles"])


@pytest.mark.parametrize(
    ("reply", "golds", "score"),
    [
        (
            "The special magic numbers for calm-otter are 1234567, 7654321, 1111111 and 2222222.",
            ["1234567", "7654321", "1111111", "2222222"],
            1.0,
        ),
        (
            '**Answer:** "1234567" and 7654321 (I could not find more).',
            ["1234567", "7654321", "1111111", "2222222"],
            0.5,
        ),
        ("<think>maybe 1234567?</think> I do not know.", ["1234567"], 0.0),
        (
            "The UUID is 0A1B2C3D-0000-4000-8000-00000000ABCD.",
            ["0a1b2c3d-0000-4000-8000-00000000abcd"],
            1.0,
        ),
        ("123456", ["1234567"], 0.0),
    ],
)
def test_string_match_all_on_real_shaped_replies(reply, golds, score):
    assert string_match_all(reply, golds) == score


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('The value is "5f0e7a56-1c2d-4e3f-8a9b-0c1d2e3f4a5b".', 1.0),
        ("Value: 5F0E7A56-1C2D-4E3F-8A9B-0C1D2E3F4A5B", 1.0),
        ("5f0e7a56-1c2d-4e3f-8a9b-0c1d2e3f4a5", 0.0),  # cut off
        ("I cannot find that key.", 0.0),
    ],
)
def test_substring_match_on_real_shaped_replies(reply, score):
    assert substring_match(reply, ["5f0e7a56-1c2d-4e3f-8a9b-0c1d2e3f4a5b"]) == score


def test_grading_dispatches_the_recall_metrics():
    record = DataRecord(
        "niah_multivalue-4k-0000",
        "niah_multivalue",
        "4k",
        4096,
        0,
        ("1234567", "7654321"),
        None,
        None,
    )
    jobs = [
        GradeJob(record, "string_match_all", "It is 7654321."),
        GradeJob(record, "substring_match", "1234567"),
    ]
    assert grade_jobs(jobs, None, progress=False) == [0.5, 1.0]


def test_score_grades_the_recall_tasks_with_their_metrics(demo, tmp_path):
    from tests.scoring.test_predictions import write_predictions

    def answer(record: dict) -> str:  # every value on even rows; half of them on odd rows
        values = (
            record["answers"]
            if record["row"] % 2 == 0
            else record["answers"][: max(1, len(record["answers"]) // 2)]
        )
        return (
            "The values are: " + ", ".join(f'"{value}"' for value in values)
            if record["row"] % 4 != 3
            else "I cannot tell."
        )

    predictions = write_predictions(tmp_path / "pred", demo, answer=answer)
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "10",
            "--data",
            str(demo),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads(out.read_text())
    assert results["settings"]["metrics"]["niah_multivalue"] == "string_match_all"
    assert results["settings"]["metrics"]["json_kv"] == "substring_match"
    by_id = {sample["id"]: sample["score"] for sample in results["samples"]}
    assert by_id["niah_multivalue-4k-0000"] == 1.0 and by_id["niah_multivalue-4k-0001"] == 0.5
    assert by_id["niah_multiquery-8k-0003"] == 0.0 and by_id["niah_single_1-4k-0001"] == 1.0
    assert by_id["json_kv-4k-0002"] == 1.0 and by_id["json_kv-4k-0003"] == 0.0


def test_an_essay_task_writes_the_same_cold_warm_alone_or_beside_whole_loads(tmp_path, monkeypatch):
    """An essay's pool cleans what its rows draw; whether its sources are also loaded whole (by
    another task of the run, or cached whole by an earlier run), whether the cache is cold or warm
    and how many processes build the rows, its files are the same."""
    monkeypatch.setattr(run_module, "SERIAL_BELOW", 0)  # as many processes as asked
    args = ("--lengths", "4k,8k", "--rows", "4", "--sources", "demo")
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    alone = generate(tmp_path / "alone", "--tasks", "niah_single_2", *args)
    warm = generate(tmp_path / "warm", "--tasks", "niah_single_2", *args, "--workers", "2")
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "whole-cache"))
    tasks = "kv_retrieval,niah_single_2"  # kv_retrieval loads the essay's sources whole
    beside = generate(tmp_path / "beside", "--tasks", tasks, *args, "--workers", "2")
    after = generate(tmp_path / "after", "--tasks", "niah_single_2", *args)  # records cached
    for folder in (warm, beside, after):
        for name in ("niah_single_2", "controls/niah_single_2"):
            for label in ("4k", "8k"):
                path = f"{name}/{label}.jsonl"
                assert (folder / path).read_bytes() == (alone / path).read_bytes(), path
    sources = json.loads((alone / "manifest.json").read_text())["sources"]
    assert sources["demo_qa"]["documents"] is None and sources["demo_qa"]["raw_documents"] > 0
    loaded = json.loads((beside / "manifest.json").read_text())["sources"]["demo_qa"]
    assert loaded["documents"] > 0 and "raw_documents" not in loaded


def test_an_essay_run_with_its_twins_cleans_only_what_it_draws(tmp_path, monkeypatch):
    """The control twins read an essay's pool as its rows do: a document is cleaned when a row or a
    twin draws it, never to tell the pool apart (the twins' recipes are keyed by the pool's key)."""
    cleaned = record_cleaning(monkeypatch)
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    args = ("--tasks", "niah_single_2", "--lengths", "4k", "--rows", "1", "--sources", "demo")
    out = generate(tmp_path / "out", *args)
    assert (out / "controls" / "niah_single_2" / "4k.jsonl").is_file()
    sources = json.loads((out / "manifest.json").read_text())["sources"]
    pool = sum(source["raw_documents"] for source in sources.values())
    assert 0 < len(cleaned) < pool / 2
