"""HELMET's long-document tasks (long_doc_qa, long_doc_sum): one document is the whole context, cut as HELMET cuts
it, exactly to the budget, answers kept inside what remains; checked from the prompt text, not the builder."""

import json
from pathlib import Path

import pytest

from longbench100.catalog.suites import load_suite
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate, records

SHARED_SOURCES = Path(__file__).resolve().parents[3] / "shared" / "sources"
OMITTED = " ... [the rest of the text is omitted]"
QA_HEAD = "You are given a long document and a question about it. Answer the question as briefly as you can, with a single phrase if possible.\n\n"
SUM_HEAD = "You are given a long document and asked to summarise it. Write a concise summary of one paragraph that covers its main points.\n\n"
QA_LENGTHS = (("400", 400), ("700", 700))
SUM_LENGTHS = (("1100", 1100), ("1200", 1200))


def normalised(text: str) -> str:
    return " ".join("".join(char if char.isalnum() else " " for char in text.lower()).split())


def context_of(prompt: str, head: str, tail: str) -> str:
    assert prompt.startswith(head)
    return prompt[len(head) : prompt.rindex(tail)]


@pytest.fixture(scope="module")
def data(mirror, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("long_document")
    generate(
        out / "qa",
        "--tasks",
        "long_doc_qa",
        "--sources",
        str(mirror),
        "--rows",
        "4",
        "--lengths",
        ",".join(label for label, _ in QA_LENGTHS),
    )
    generate(
        out / "sum",
        "--tasks",
        "long_doc_sum",
        "--sources",
        str(mirror),
        "--rows",
        "4",
        "--lengths",
        ",".join(label for label, _ in SUM_LENGTHS),
    )
    return out


def test_qa_document_is_the_whole_context_cut_exactly_and_the_answer_kept(data):
    tokenizer = load_tokenizer("cl100k_base")
    for label, length in QA_LENGTHS:
        rows = records(data / "qa", "long_doc_qa", label)
        assert len(rows) == 4
        for row in rows:
            prompt = row["prompt"]
            assert (
                tokenizer.count(prompt) == row["prompt_tokens"]
                and row["prompt_tokens"] + 128 == length
            )
            context = context_of(prompt, QA_HEAD, "\n\nQuestion: ")
            assert (
                context.endswith(OMITTED)
                or row["gold"]["kept_chars"] == row["gold"]["document_chars"]
            )
            kept = context.removesuffix(OMITTED)
            assert len(kept) == row["gold"]["kept_chars"] <= row["gold"]["document_chars"]
            assert "Passage" not in prompt and prompt.endswith(
                f"Question: {row['question']}\nAnswer:"
            )
            assert any(normalised(answer) in normalised(kept) for answer in row["answers"])
            assert (
                row["closed_book_prompt"].endswith(f"Question: {row['question']}\nAnswer:")
                and kept not in row["closed_book_prompt"]
            )


def test_the_same_item_keeps_a_longer_opening_at_a_longer_length(data):
    short, long = (records(data / "qa", "long_doc_qa", label) for label, _ in QA_LENGTHS)
    pairs = [
        (first, second)
        for first, second in zip(short, long)
        if first["gold"]["item_ids"] == second["gold"]["item_ids"]
    ]
    assert pairs  # paired rows
    for first, second in pairs:
        kept_short = context_of(first["prompt"], QA_HEAD, "\n\nQuestion: ").removesuffix(OMITTED)
        kept_long = context_of(second["prompt"], QA_HEAD, "\n\nQuestion: ").removesuffix(OMITTED)
        assert kept_long.startswith(kept_short) and len(kept_long) > len(kept_short)


def test_summaries_fill_exactly_with_their_answer_room(data):
    tokenizer = load_tokenizer("cl100k_base")
    for label, length in SUM_LENGTHS:
        rows = records(data / "sum", "long_doc_sum", label)
        assert rows
        for row in rows:
            assert tokenizer.count(row["prompt"]) + 1024 == length
            context_of(row["prompt"], SUM_HEAD, "\n\nNow write the summary of the document.")
            assert row["answers"][0] and row["gold"]["spans"]["gold"]


def test_a_document_shorter_than_the_length_is_not_used(mirror, tmp_path):
    out = generate(
        tmp_path / "big",
        "--tasks",
        "long_doc_qa",
        "--sources",
        str(mirror),
        "--rows",
        "2",
        "--lengths",
        "64k",
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tasks"]["long_doc_qa"]["lengths"]["64k"]["rows"] == 0
    assert manifest["shortfalls"][0]["reason"] == "no ground-truth item fits this length"


def test_helmet_suite_uses_the_long_document_tasks():
    suite = load_suite("helmet")
    assert "long_doc_qa" in suite.tasks and "long_doc_sum" in suite.tasks
    assert "single_doc_qa" not in suite.tasks and "single_doc_sum" not in suite.tasks


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="needs ../shared/sources")
def test_legal_contracts_reach_32k_on_the_shared_mirror(tmp_path):
    out = generate(
        tmp_path / "shared",
        "--suite",
        "helmet",
        "--tasks",
        "long_doc_qa",
        "--sources",
        str(SHARED_SOURCES),
        "--rows",
        "4",
        "--lengths",
        "8k,32k",
    )
    for label in ("8k", "32k"):
        rows = records(out, "long_doc_qa", label)
        assert len(rows) == 4 and all(
            row["gold"]["sources"] == ["legal_contract_qa"] for row in rows
        )


def test_answer_form_follows_the_gold():
    from longbench100.tasks.long_doc_qa import answer_form

    assert answer_form(["relu, selu, tanh"], True) == "phrase"
    clause = " ".join(["the licensee shall not assign this agreement"] * 3)
    assert answer_form([clause], True) == "quote" and answer_form([clause], False) == "sentences"


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="needs ../shared/sources")
def test_on_the_shared_mirror_the_prompt_asks_for_the_gold_it_has_room_for_and_short_lengths_say_so(
    tmp_path,
):
    tokenizer = load_tokenizer("cl100k_base")
    out = generate(
        tmp_path / "rows",
        "--suite",
        "helmet",
        "--tasks",
        "long_doc_qa",
        "--sources",
        str(SHARED_SOURCES),
        "--rows",
        "24",
        "--lengths",
        "8k,32k",
    )
    for label, length in (("8k", 8192), ("32k", 32768)):
        rows = records(out, "long_doc_qa", label)
        assert len({tuple(row["gold"]["item_ids"]) for row in rows}) == len(
            rows
        )  # no item asked twice at a length
        for row in rows:
            assert row["prompt_tokens"] + row["gold"]["answer_tokens"] == length
            assert (
                max(tokenizer.count(answer) for answer in row["answers"])
                <= row["gold"]["answer_tokens"]
            )
            head = row["prompt"][: row["prompt"].index("\n\n")]
            long_copied = max(len(answer.split()) for answer in row["answers"]) > 15 and any(
                normalised(answer) in normalised(row["prompt"]) for answer in row["answers"]
            )
            assert ("copied word for word" in head) == long_copied
            assert ("single phrase" in head) == (
                max(len(answer.split()) for answer in row["answers"]) <= 15
            )
    manifest = json.loads((out / "manifest.json").read_text())
    short = {
        (item["label"]): item for item in manifest["shortfalls"] if item["task"] == "long_doc_qa"
    }
    assert "32k" in short and "items fit this length" in short["32k"]["reason"]
