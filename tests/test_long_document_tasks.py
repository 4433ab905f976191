"""HELMET's long-document tasks (long_doc_qa, long_doc_sum): one document is the whole context, cut as HELMET cuts
it, exactly to the budget, answers kept inside what remains; checked from the prompt text, not the builder."""

import json
from pathlib import Path

import pytest

from longbench100.catalog.suites import load_suite
from longbench100.text.tokenization import load_tokenizer
from tests.generate_helpers import generate, records

SHARED_SOURCES = Path(__file__).resolve().parents[2] / "shared" / "sources"
OMITTED = " ... [the rest of the text is omitted]"
QA_HEAD = "You are given a long document and a question about it. Answer the question as briefly as you can, with a single phrase if possible.\n\n"
SUM_HEAD = "You are given a long document and asked to summarise it. Write a concise summary of one paragraph that covers its main points.\n\n"
QA_LENGTHS = (("400", 400), ("700", 700))
SUM_LENGTHS = (("1100", 1100), ("1200", 1200))


def normalised(text: str) -> str:
    return " ".join("".join(char if char.isalnum() else " " for char in text.lower()).split())


def context_of(prompt: str, head: str, tail: str) -> str:
    assert prompt.startswith(head)
    return prompt[len(head):prompt.rindex(tail)]


@pytest.fixture(scope="module")
def data(mirror, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("long_document")
    generate(out / "qa", "--tasks", "long_doc_qa", "--sources", str(mirror), "--rows", "4", "--lengths", ",".join(label for label, _ in QA_LENGTHS))
    generate(out / "sum", "--tasks", "long_doc_sum", "--sources", str(mirror), "--rows", "4", "--lengths", ",".join(label for label, _ in SUM_LENGTHS))
    return out


def test_qa_document_is_the_whole_context_cut_exactly_and_the_answer_kept(data):
    tokenizer = load_tokenizer("cl100k_base")
    for label, length in QA_LENGTHS:
        rows = records(data / "qa", "long_doc_qa", label)
        assert len(rows) == 4
        for row in rows:
            prompt = row["prompt"]
            assert tokenizer.count(prompt) == row["prompt_tokens"] and row["prompt_tokens"] + 128 == length
            context = context_of(prompt, QA_HEAD, "\n\nQuestion: ")
            assert context.endswith(OMITTED) or row["gold"]["kept_chars"] == row["gold"]["document_chars"]
            kept = context.removesuffix(OMITTED)
            assert len(kept) == row["gold"]["kept_chars"] <= row["gold"]["document_chars"]
            assert "Passage" not in prompt and prompt.endswith(f"Question: {row['question']}\nAnswer:")
            assert any(normalised(answer) in normalised(kept) for answer in row["answers"])
            assert row["closed_book_prompt"].endswith(f"Question: {row['question']}\nAnswer:") and kept not in row["closed_book_prompt"]


def test_the_same_item_keeps_a_longer_opening_at_a_longer_length(data):
    short, long = (records(data / "qa", "long_doc_qa", label) for label, _ in QA_LENGTHS)
    pairs = [(first, second) for first, second in zip(short, long) if first["gold"]["item_ids"] == second["gold"]["item_ids"]]
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
    out = generate(tmp_path / "big", "--tasks", "long_doc_qa", "--sources", str(mirror), "--rows", "2", "--lengths", "64k")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tasks"]["long_doc_qa"]["lengths"]["64k"]["rows"] == 0
    assert manifest["shortfalls"][0]["reason"] == "no ground-truth item fits this length"


def test_helmet_suite_uses_the_long_document_tasks():
    suite = load_suite("helmet")
    assert "long_doc_qa" in suite.tasks and "long_doc_sum" in suite.tasks
    assert "single_doc_qa" not in suite.tasks and "single_doc_sum" not in suite.tasks


@pytest.mark.skipif(not SHARED_SOURCES.is_dir(), reason="needs ../shared/sources")
def test_legal_contracts_reach_32k_on_the_shared_mirror(tmp_path):
    out = generate(tmp_path / "shared", "--suite", "helmet", "--tasks", "long_doc_qa", "--sources", str(SHARED_SOURCES),
                   "--rows", "4", "--lengths", "8k,32k")
    for label in ("8k", "32k"):
        rows = records(out, "long_doc_qa", label)
        assert len(rows) == 4 and all(row["gold"]["sources"] == ["legal_contract_qa"] for row in rows)
