"""ETHIC's document_summarizing and document_organizing: exact budgets with answer room, the prompt checked against
the gold independently of the builder, pairing, determinism, and the parsers and metrics on real-shaped replies."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.suites import load_suite
from longbench100.catalog.task_info import TASKS
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.predict.data import index_data, load_sample
from longbench100.scoring.grading import GradeJob, grade_jobs
from longbench100.scoring.metrics.metric_table import CLASSIC, METRICS
from longbench100.scoring.metrics.sections import (
    longest_common_subsequence,
    order_exact,
    order_lcs,
    parse_order,
    parse_sections,
    section_rouge,
)
from longbench100.tasks.sections import section_labels
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate, records, tree
from tests.support.openai_stub import OpenAIStub, prompt_text


def tree_without_manifest(root: Path) -> dict[str, bytes]:
    return tree(root, skip=("manifest.json",))


SHARED_SOURCES = Path(__file__).resolve().parents[3] / "shared" / "sources"
TASK_NAMES = ("document_summarizing", "document_organizing")
LENGTHS = (("4k", 4096), ("8k", 8192), ("16k", 16384))
# Written from the templates' wording, not taken from the builder.
SECTION_RE = re.compile(r"^Section (\d+):\n", re.MULTILINE)
SUMMARY_LINE_RE = re.compile(r"^\[([A-Z]{1,2})\] ", re.MULTILINE)


def data_record(task: str, gold: dict, answers: list[str]) -> DataRecord:
    return DataRecord(f"{task}-8k-0000", task, "8k", 8192, 0, tuple(answers), None, None, gold=gold)


@pytest.fixture(scope="module")
def data(mirror, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sections") / "data"
    return generate(
        out,
        "--suite",
        "ethic-documents",
        "--tasks",
        ",".join(TASK_NAMES),
        "--sources",
        str(mirror),
        "--lengths",
        ",".join(label for label, _ in LENGTHS),
        "--rows",
        "6",
    )


def section_texts(prompt: str, count: int, end_marker: str) -> list[str]:
    """The text under each "Section i:" heading, up to the next heading or the closing instruction."""
    marks = list(SECTION_RE.finditer(prompt))
    assert [int(mark.group(1)) for mark in marks] == list(range(1, count + 1))
    ends = [mark.start() for mark in marks[1:]] + [prompt.index(end_marker, marks[-1].end())]
    return [prompt[mark.end() : end].rstrip("\n") for mark, end in zip(marks, ends)]


@pytest.mark.parametrize("task", TASK_NAMES)
def test_whole_prompt_and_answer_room_fit_every_length_recounted(data, task):
    tokenizer = load_tokenizer("cl100k_base")
    per_section, fixed = {"document_summarizing": (160, 16), "document_organizing": (6, 32)}[task]
    for label, length in LENGTHS:
        rows = records(data, task, label)
        assert len(rows) == 6
        for row in rows:
            tokens = tokenizer.count(row["prompt"])
            assert tokens == row["prompt_tokens"]
            gold = row["gold"]
            assert gold["answer_tokens"] == fixed + per_section * gold["sections"]
            assert tokens + gold["answer_tokens"] <= length
            assert gold["sections"] >= 2


@pytest.mark.parametrize("task", TASK_NAMES)
def test_sections_hold_whole_documents_with_their_own_references(data, task, mirror):
    from longbench100.sources.corpus import load_corpus
    from longbench100.sources.locations import resolve_location

    corpus = load_corpus(
        resolve_location(str(mirror)), load_tokenizer("cl100k_base"), progress=False
    )
    items = {item.id: item for name in corpus.sources for item in corpus.sources[name].items}
    end_marker = (
        "Write a summary of each" if task == "document_summarizing" else "Summaries, shuffled:"
    )
    for label, _ in LENGTHS:
        for row in records(data, task, label):
            gold = row["gold"]
            texts = section_texts(row["prompt"], gold["sections"], end_marker)
            assert len(gold["references"]) == len(gold["section_sources"]) == gold["sections"]
            for text, reference, origin in zip(texts, gold["references"], gold["section_sources"]):
                assert text == corpus.documents[origin["id"]].text  # whole, never cut
                item = items[origin["item_id"]]
                assert item.doc_ids == (origin["id"],) and item.summary == reference
            assert (
                len(
                    {
                        corpus.near_duplicates.key(corpus.documents[o["id"]])
                        for o in gold["section_sources"]
                    }
                )
                == gold["sections"]
            )
            spans = gold["spans"]
            covered = sum(end - start for start, end in spans["gold"])
            assert (
                covered / (spans["context"][1] - spans["context"][0]) > 0.95
            )  # IC by construction near 100%


def test_summarizing_asks_for_one_line_per_section_and_its_ideal_reply_scores_one(data):
    for row in records(data, "document_summarizing", "8k"):
        count = row["gold"]["sections"]
        assert f"up to Section {count}." in row["prompt"] and row["prompt"].endswith("Summaries:")
        record = data_record("document_summarizing", row["gold"], row["answers"])
        assert section_rouge(row["answers"][0], record) == pytest.approx(1.0)
        assert section_rouge("", record) == 0.0


def test_organizing_shows_each_summary_once_under_a_shuffled_label(data):
    shuffled = 0
    for label, _ in LENGTHS:
        for row in records(data, "document_organizing", label):
            gold = row["gold"]
            summaries_part = (
                row["prompt"]
                .split("Summaries, shuffled:\n", 1)[1]
                .split("\n\nPut the summaries", 1)[0]
            )
            marks = list(SUMMARY_LINE_RE.finditer(summaries_part))
            shown = [mark.group(1) for mark in marks]
            assert shown == section_labels(gold["sections"])  # A, B, C, ... in the order shown
            text_of = {
                mark.group(1): summaries_part[
                    mark.end() : following.start() - 1 if following else None
                ]
                for mark, following in zip(marks, marks[1:] + [None])
            }
            assert [text_of[label] for label in gold["order"]] == gold["references"]
            assert row["answers"] == [" > ".join(gold["order"])]
            shuffled += gold["order"] != shown
            assert (
                order_lcs(
                    row["answers"][0], data_record("document_organizing", gold, row["answers"])
                )
                == 1.0
            )
    assert shuffled >= 10


@pytest.mark.parametrize("task", TASK_NAMES)
def test_rows_are_paired_a_row_keeps_its_source_and_first_sections_and_grows(data, task):
    by_length = {label: records(data, task, label) for label, _ in LENGTHS}
    for row in range(6):
        origins = [by_length[label][row]["gold"]["section_sources"] for label, _ in LENGTHS]
        assert len({origin[0]["id"] for origin in origins}) == 1
        assert len({origin[0]["source"] for origin in origins}) == 1
        assert len(origins[-1]) > len(origins[0])
        assert all(by_length[label][row]["gold"]["paired"] for label, _ in LENGTHS)
    homes = {by_length["4k"][row]["gold"]["section_sources"][0]["source"] for row in range(6)}
    assert len(homes) >= 3  # rows take their home source in turn


def test_same_options_give_identical_files_whatever_the_workers(data, mirror, tmp_path):
    again = generate(
        tmp_path / "again",
        "--suite",
        "ethic-documents",
        "--tasks",
        ",".join(TASK_NAMES),
        "--sources",
        str(mirror),
        "--lengths",
        "4k,8k,16k",
        "--rows",
        "6",
        "--workers",
        "2",
    )
    assert tree_without_manifest(again) == tree_without_manifest(data)


def test_a_mixed_length_prompt_uses_other_sources_only_after_the_home_source(data):
    for row in records(data, "document_summarizing", "16k"):
        sources = [origin["source"] for origin in row["gold"]["section_sources"]]
        home = sources[0]
        first_other = next(
            (index for index, source in enumerate(sources) if source != home), len(sources)
        )
        assert all(
            source != home for source in sources[first_other:]
        )  # home documents come first, as one block


def test_predict_sends_each_record_its_answer_room_and_score_grades_the_ideal_replies(
    data, tmp_path
):
    rows = [
        row for task in TASK_NAMES for label, _ in LENGTHS for row in records(data, task, label)
    ]
    ideal = {row["prompt"]: row["answers"][0] for row in rows}
    room = {row["prompt"]: row["gold"]["answer_tokens"] for row in rows}
    refs = index_data(data, list(TASK_NAMES), None)
    assert all(load_sample(ref).answer_tokens == room[load_sample(ref).prompt] for ref in refs)
    with OpenAIStub(lambda body: ideal[prompt_text(body)]) as server:
        result = CliRunner().invoke(
            main,
            [
                "predict",
                "--data",
                str(data),
                "--out",
                str(tmp_path / "pred"),
                "--model",
                server.model,
                "--base-url",
                server.base_url,
                "--mode",
                "completion",
            ],
        )
        assert result.exit_code == 0, result.output
        assert sorted(body["max_tokens"] for body in server.bodies) == sorted(room.values())
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "20",
            "--data",
            str(data),
            "--predictions",
            str(tmp_path / "pred"),
            "--out",
            str(tmp_path / "results.json"),
            "--base-lengths",
            "4k,8k",
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["metrics"] == {
        "document_summarizing": "section_rouge",
        "document_organizing": "order_lcs",
    }
    assert [sample["score"] for sample in results["samples"]] == pytest.approx([1.0] * len(ideal))


# ---- parsers and metrics on real-shaped replies (references written here) ----

REFERENCES = [
    "The council opened a new harbor market near the river.",
    "Farmers measured the orchard and sold apples early.",
    "A pilot mapped the canal and found an old quarry.",
]


def summarizing_record(references: list[str] = REFERENCES) -> DataRecord:
    return data_record(
        "document_summarizing", {"references": list(references), "sections": len(references)}, []
    )


@pytest.mark.parametrize(
    "reply",
    [
        "Section 1: {0}\nSection 2: {1}\nSection 3: {2}",
        "Here are the summaries:\n\n**Section 1:** {0}\n\n**Section 2:** {1}\n\n**Section 3:** {2}\n",
        "### Section 1\n{0}\n\n### Section 2\n{1}\n\n### Section 3\n{2}\n\nLet me know if you need more detail.",
        "- Section 1 - {0}\n- Section 2 - {1}\n- Section 3 - {2}",
        "<think>Section 1 is about a market.</think>Section 1: {0}\nSection 2: {1}\nSection 3: {2}",
        "1. {0}\n2. {1}\n3. {2}",
        "Section 1 (The market): {0}\nSection 2 (Apples): {1}\n\nSection 3 (The canal): {2}",
        "Section 1:\n{0}\n\nSummary of section 2:\n{1}\n\nSummary of section 3:\n{2}",  # SmolLM2-135M's shape
    ],
)
def test_section_parser_reads_common_reply_shapes(reply):
    text = reply.format(*REFERENCES)
    found = parse_sections(text)
    assert [found[number].splitlines()[0] for number in (1, 2, 3)] == REFERENCES
    assert section_rouge(text, summarizing_record()) > 0.95


def test_missing_sections_score_zero_and_the_mean_is_over_all_sections():
    record = summarizing_record()
    full = section_rouge(f"Section 1: {REFERENCES[0]}", record)
    assert full == pytest.approx(1 / 3)
    swapped = f"Section 1: {REFERENCES[1]}\nSection 2: {REFERENCES[0]}\nSection 3: {REFERENCES[2]}"
    assert 1 / 3 < section_rouge(swapped, record) < 0.9
    assert section_rouge("I cannot summarise these texts.", record) == 0.0
    assert section_rouge(
        f"Section 1: {REFERENCES[0]}\nSection 1: {REFERENCES[2]}", record
    ) == pytest.approx(1 / 3)  # the first copy counts
    inside = parse_sections(
        "Section 1: The bill changes two rules.\nSection 2 of the act is repealed.\nSection 2: Farmers sold apples."
    )
    assert inside == {
        1: "The bill changes two rules.\nSection 2 of the act is repealed.",
        2: "Farmers sold apples.",
    }


ORDER = ["B", "C", "A"]


@pytest.mark.parametrize(
    "reply",
    [
        "B > C > A",
        "B, C, A",
        "[B] > [C] > [A]",
        "**Order:** B > C > A",
        "1. B\n2. C\n3. A",
        "Section 1: B\nSection 2: C\nSection 3: A",
        "A possible reading of the sections gives this order: B, then C, then A.",
        "<think>Maybe A > B > C? No.</think>\nB -> C -> A",
        "The order is:\nB > C > A\n\nSummary A describes the quarry, which comes last.",
    ],
)
def test_order_parser_reads_common_reply_shapes(reply):
    assert parse_order(reply, set(ORDER)) == ORDER
    record = data_record("document_organizing", {"order": ORDER}, [])
    assert order_lcs(reply, record) == 1.0 and order_exact(reply, record) == 1.0


def test_order_metrics_give_partial_credit_by_longest_common_subsequence():
    record = data_record("document_organizing", {"order": ["A", "B", "C", "D"]}, [])
    assert (
        order_lcs("A > C > B > D", record) == 0.75 and order_exact("A > C > B > D", record) == 0.0
    )
    assert order_lcs("D > C > B > A", record) == 0.25
    assert order_lcs("B", record) == 0.25  # labels not given count as missing
    assert order_lcs("A > A > B > C > D", record) == 1.0  # a repeat counts once
    assert order_lcs("I do not know.", record) == 0.0
    assert longest_common_subsequence(list("ABCBDAB"), list("BDCABA")) == 4
    many = section_labels(30)
    assert many[:3] == ["A", "B", "C"] and many[25:28] == ["Z", "AA", "AB"]
    assert parse_order("AB > Z > AA", set(many)) == ["AB", "Z", "AA"]


def test_metrics_are_registered_and_graded_by_name():
    assert (
        TASKS["document_summarizing"].metric == "section_rouge"
        and TASKS["document_organizing"].metric == "order_lcs"
    )
    assert TASKS["document_organizing"].also == ("order_exact",)
    assert all(
        METRICS[name].kind == CLASSIC for name in ("section_rouge", "order_lcs", "order_exact")
    )
    order_record = data_record("document_organizing", {"order": ORDER}, [])
    jobs = [
        GradeJob(summarizing_record(), "section_rouge", f"Section 2: {REFERENCES[1]}"),
        GradeJob(order_record, "order_lcs", "B > A > C"),
        GradeJob(order_record, "order_exact", "B > A > C"),
    ]
    assert grade_jobs(jobs, None, progress=False) == [
        pytest.approx(1 / 3),
        pytest.approx(2 / 3),
        0.0,
    ]


def test_a_record_of_another_task_is_a_one_line_error():
    with pytest.raises(UserError, match="gold has no 'references'"):
        section_rouge("Section 1: x", data_record("single_doc_sum", {"passages": [1]}, ["x"]))


def test_ethic_documents_suite_lists_the_summaries_and_no_suite_the_order_task():
    suite = load_suite("ethic-documents")
    assert not set(TASK_NAMES) & set(load_suite("ethic").tasks)
    assert suite.tasks == ("document_summarizing",) and suite.base_lengths == ("8k", "16k")
    assert [label for label, _ in suite.lengths] == ["8k", "16k", "32k", "64k", "128k"]
    assert not [
        name
        for name in ("100-longbench", "ruler", "helmet", "helmet-recall", "ethic")
        if "document_organizing" in load_suite(name).tasks
    ]
    assert (
        suite.metric("document_summarizing") == "section_rouge"
        and suite.metric("document_organizing") == "order_lcs"
    )  # by name: its own metric


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="needs ../shared/sources")
def test_shared_sources_fit_from_8k_to_128k(tmp_path):
    out = generate(
        tmp_path / "shared",
        "--suite",
        "ethic-documents",
        "--tasks",
        ",".join(TASK_NAMES),
        "--sources",
        str(SHARED_SOURCES),
        "--lengths",
        "8k,128k",
        "--rows",
        "5",
    )
    tokenizer = load_tokenizer("cl100k_base")
    for task in TASK_NAMES:
        for label, length in (("8k", 8192), ("128k", 131072)):
            rows = records(out, task, label)
            assert len(rows) == 5
            for row in rows:
                assert tokenizer.count(row["prompt"]) + row["gold"]["answer_tokens"] <= length
            assert (
                min(row["prompt_tokens"] + row["gold"]["answer_tokens"] for row in rows)
                > 0.99 * length
                or label == "8k"
            )
