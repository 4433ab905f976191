"""HELMET in-context learning with label mapping (tasks/icl.py): classification sources, the mapping,
rounds of demonstrations, label-balanced test items, exact budgets, pairing, determinism and label_match.

The prompts are checked independently of the builder: the synthetic mirror's texts name their class
("Please help with <topic>: ..."), so the class of every demonstration is read from its text.
"""

import re
from pathlib import Path

import pytest

from longbench100.core.errors import UserError
from longbench100.fitting.templates import PromptTemplates
from longbench100.folders.data_records import DataRecord
from longbench100.scoring.grading import GradeJob, grade_jobs
from longbench100.scoring.metrics.label_match import label_match, parse_label
from longbench100.sources.corpus import load_corpus
from longbench100.sources.loader import load_source
from longbench100.sources.locations import resolve_location
from longbench100.sources.registry import parse_entry
from longbench100.tasks import BUILDERS
from longbench100.text.tokenization import load_tokenizer
from tests.support.fixture_mirror import CLASS_NAMES, TEST_PER_CLASS, TRAIN_PER_CLASS
from tests.support.generate_helpers import assert_prompts_fit, generate, records

SHARED_SOURCES = Path(__file__).resolve().parents[3] / "shared" / "sources"
ICL = ("icl_trec_coarse", "icl_trec_fine", "icl_banking77", "icl_clinc150")
RESERVED = 20  # HELMET's answer length for ICL
ROWS = 9
EXAMPLE = re.compile(r"^text: (.*)\nlabel:(?: (\d+))?$")
TOPIC = re.compile(r"^Please help with (\w+):")
TESTED_TOPICS = sorted(CLASS_NAMES[:-1])  # the fixture's last class has no test rows


def examples(prompt: str) -> list[tuple[str, str]]:
    """Every "text: ...\\nlabel: N" block of the prompt after the instruction, the asked one last (its label empty)."""
    blocks = prompt.split("\n\n")[1:]
    found = [EXAMPLE.match(block) for block in blocks]
    assert all(found), [block for block, match in zip(blocks, found) if not match][:1]
    return [(match.group(1), match.group(2) or "") for match in found]


def topic(text: str) -> str:
    return TOPIC.match(text).group(1)


@pytest.fixture(scope="module")
def data(tmp_path_factory, mirror) -> Path:
    out = tmp_path_factory.mktemp("icl") / "data"
    return generate(
        out,
        "--tasks",
        ",".join(ICL),
        "--lengths",
        "1k,2k",
        "--rows",
        str(ROWS),
        "--sources",
        str(mirror),
    )


def test_classification_sources_read_labels_by_name_and_split(mirror):
    location = resolve_location(str(mirror))
    data = load_source(location, location.registry()["trec_fine"])
    train = [item for item in data.items if item.split == "train"]
    test = [item for item in data.items if item.split == "test"]
    assert len(train) == TRAIN_PER_CLASS * len(CLASS_NAMES)
    assert len(test) == TEST_PER_CLASS * (len(CLASS_NAMES) - 1)
    assert all(
        item.kind == "classification" and item.answers == (item.label,) and not item.doc_ids
        for item in data.items
    )
    assert all(
        topic(item.question) == item.label for item in data.items
    )  # the index was named from the schema metadata
    assert len({item.id for item in data.items}) == len(data.items)


def test_a_label_index_without_class_names_is_a_one_line_error(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "owner" / "set").mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist([{"text": "Please help with rain.", "label": 3}]),
        tmp_path / "owner" / "set" / "train.parquet",
    )
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "set.toml").write_text(
        'name = "set"\n[hub]\nrepo_id = "owner/set"\n[[files]]\npath = "train.parquet"\nformat = "parquet"\n'
        '[files.item]\nkind = "classification"\ntext = "text"\nlabel = "label"\nsplit = "train"\n'
    )
    entry = parse_entry(registry / "set.toml")
    location = resolve_location(str(tmp_path))
    with pytest.raises(
        UserError,
        match=r"train.parquet row 1: label 'label' = 3 is not a class index \(the file records no class names",
    ):
        load_source(location, entry)


def test_a_classification_item_needs_its_label_field(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad"\n[hub]\nrepo_id = "o/r"\n[[files]]\npath = "a.parquet"\nformat = "parquet"\n'
        '[files.item]\nkind = "classification"\ntext = "text"\n'
    )
    with pytest.raises(UserError, match=r"a classification item needs the field mapping 'label'"):
        parse_entry(path)


@pytest.mark.parametrize("task", ICL)
def test_no_prompt_is_over_budget_recounted_and_the_fill_is_close(data, task):
    for label, length in (("1k", 1024), ("2k", 2048)):
        rows = records(data, task, label)
        assert len(rows) == ROWS
        assert_prompts_fit(rows, length - RESERVED, 0.97)


@pytest.mark.parametrize("task", ICL)
def test_one_integer_per_class_within_a_sample_and_the_answer_is_the_test_class_number(data, task):
    for label in ("1k", "2k"):
        for row in records(data, task, label):
            *shown, (asked, empty) = examples(row["prompt"])
            assert empty == ""
            numbers: dict[str, set[str]] = {}
            for text, number in shown:
                numbers.setdefault(topic(text), set()).add(number)
            assert all(len(found) == 1 for found in numbers.values())  # same class, same integer
            mapping = {name: int(found.pop()) for name, found in numbers.items()}
            assert len(set(mapping.values())) == len(
                mapping
            )  # different classes, different integers
            assert mapping == {
                name: number for name, number in row["gold"]["mapping"].items() if name in mapping
            }
            assert sorted(row["gold"]["mapping"].values()) == list(range(len(CLASS_NAMES)))
            assert row["answers"] == [str(mapping[topic(asked)])]
            assert row["gold"]["label"] == topic(asked) and row["question"] == asked


@pytest.mark.parametrize("task", ICL)
def test_different_rows_get_different_mappings(data, task):
    mappings = [tuple(sorted(row["gold"]["mapping"].items())) for row in records(data, task, "2k")]
    assert len(set(mappings)) == ROWS


@pytest.mark.parametrize("task", ICL)
def test_demonstrations_come_in_balanced_rounds_and_never_repeat_the_test_text(data, task):
    classes = len(CLASS_NAMES)
    for label in ("1k", "2k"):
        for row in records(data, task, label):
            *shown, (asked, _) = examples(row["prompt"])
            topics = [topic(text) for text, _ in shown]
            assert len(topics) >= classes
            for start in range(0, len(topics), classes):
                one_round = topics[start : start + classes]
                assert len(set(one_round)) == len(one_round)  # at most once per round
                assert len(one_round) == classes or start + classes >= len(
                    topics
                )  # only the last round is partial
            assert asked not in {text for text, _ in shown}
            assert row["prompt"].count(asked) == 1
            gold = row["gold"]
            assert gold["demonstrations"] == len(shown) and gold["rounds"] == len(shown) // classes
            assert sum(gold["demonstrations_per_label"].values()) == len(shown)


def test_the_test_text_that_also_is_a_train_text_is_left_out_of_the_demonstrations(mirror):
    # the fixture's first test row of class 0 ("banking77/test-1") repeats a train text ("banking77/train-1")
    corpus = load_corpus(
        resolve_location(str(mirror)),
        load_tokenizer("cl100k_base"),
        only={"banking77"},
        progress=False,
    )
    builder = BUILDERS["icl_banking77"](corpus, PromptTemplates())
    rows = [
        row
        for row in range(len(TESTED_TOPICS) * TEST_PER_CLASS)
        if builder.test_item(42, row).id == "banking77/test-1"
    ]
    assert len(rows) == 1
    plan = builder.row(42, rows[0], 4096)
    duplicate = corpus.sources["banking77"].items[0]
    assert duplicate.id == "banking77/train-1" and duplicate.question == plan.test.question
    assert plan.demonstrations and all(
        item.question != plan.test.question for item in plan.demonstrations
    )
    assert all(item.split == "train" for item in plan.demonstrations)


@pytest.mark.parametrize("task", ICL)
def test_test_items_are_label_balanced_over_rows(data, task):
    rows = records(data, task, "2k")
    assert [row["gold"]["label"] for row in rows] == [
        TESTED_TOPICS[r % len(TESTED_TOPICS)] for r in range(ROWS)
    ]
    assert len({row["gold"]["item_ids"][0] for row in rows}) == ROWS


@pytest.mark.parametrize("task", ICL)
def test_rows_are_paired_and_a_longer_length_adds_demonstrations(data, task):
    for short, long in zip(records(data, task, "1k"), records(data, task, "2k")):
        assert (
            short["question"] == long["question"]
            and short["gold"]["mapping"] == long["gold"]["mapping"]
        )
        assert short["answers"] == long["answers"]
        short_shown, long_shown = examples(short["prompt"])[:-1], examples(long["prompt"])[:-1]
        assert len(long_shown) > len(short_shown) and long_shown[: len(short_shown)] == short_shown


def test_spans_cover_the_demonstrations_and_mark_those_of_the_test_class(data):
    for row in records(data, "icl_clinc150", "2k"):
        spans = row["gold"]["spans"]
        gold_texts = [row["prompt"][start:end] for start, end in spans["gold"]]
        expected = [
            f"text: {text}\nlabel: {number}"
            for text, number in examples(row["prompt"])[:-1]
            if topic(text) == row["gold"]["label"]
        ]
        assert gold_texts == expected
        context = row["prompt"][spans["context"][0] : spans["context"][1]]
        assert (
            context.startswith("text: ")
            and context.count("\nlabel: ") == row["gold"]["demonstrations"]
        )


def test_generation_is_deterministic(tmp_path, mirror):
    args = (
        "--tasks",
        "icl_trec_coarse,icl_clinc150",
        "--lengths",
        "1k",
        "--rows",
        "3",
        "--sources",
        str(mirror),
    )
    first, second = generate(tmp_path / "a", *args), generate(tmp_path / "b", *args)
    files = sorted(path.relative_to(first) for path in first.rglob("*.jsonl"))
    assert files and all(
        (first / name).read_bytes() == (second / name).read_bytes() for name in files
    )


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("12", 12),
        ("label: 12", 12),
        ("The label is 12.", 12),
        ("**Label:** 12", 12),
        ("label:12\n", 12),
        ("12\n\ntext: how do I top up 40 pounds\nlabel: 40", 12),
        ("text: my card from last week\nlabel: 5\n\ntext: another\nlabel: 7", 5),
        ("Based on the 40 examples above, the label is 12.", 12),
        ("<think>it could be 3</think>label 9", 9),
        (" 7 (card_arrival)", 7),
        ('Label: "33"', 33),
        ("I cannot tell.", None),
        ("", None),
    ],
)
def test_parse_label_reads_real_shaped_replies(reply, expected):
    assert parse_label(reply) == expected


def _record(mapped: int | None) -> DataRecord:
    gold = {"mapped_label": mapped} if mapped is not None else {}
    return DataRecord(
        "icl_banking77-8k-0000",
        "icl_banking77",
        "8k",
        8192,
        0,
        (str(mapped),),
        "Where is my card?",
        None,
        gold=gold,
    )


def test_label_match_compares_the_parsed_number_with_the_mapped_label():
    assert label_match("label: 12", _record(12)) == 1.0
    assert label_match("label: 21", _record(12)) == 0.0
    assert label_match("1", _record(12)) == 0.0  # a prefix of the right number is wrong
    with pytest.raises(UserError, match="icl_banking77-8k-0000: gold has no integer mapped_label"):
        label_match("12", _record(None))


def test_grade_jobs_dispatches_label_match():
    jobs = [
        GradeJob(_record(4), "label_match", "The label is 4."),
        GradeJob(_record(4), "label_match", "5"),
    ]
    assert grade_jobs(jobs, None, progress=False) == [1.0, 0.0]


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="../shared/sources is not available")
def test_real_classification_sets(tmp_path):
    out = generate(
        tmp_path / "real",
        "--tasks",
        ",".join(ICL),
        "--lengths",
        "8k",
        "--rows",
        "2",
        "--sources",
        str(SHARED_SOURCES),
    )
    classes = {"icl_trec_coarse": 6, "icl_trec_fine": 50, "icl_banking77": 77, "icl_clinc150": 151}
    tokenizer = load_tokenizer("cl100k_base")
    for task, count in classes.items():
        for row in records(out, task, "8k"):
            assert tokenizer.count(row["prompt"]) == row["prompt_tokens"] <= 8192 - RESERVED
            assert sorted(row["gold"]["mapping"].values()) == list(range(count))
            assert row["gold"]["demonstrations"] >= count and row["gold"]["item_ids"][0].split("/")[
                1
            ].startswith("test-")
            assert all(
                ident.split("/")[1].startswith("train-")
                for ident in row["gold"]["demonstration_ids"]
            )
