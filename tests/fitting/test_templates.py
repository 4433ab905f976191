"""Prompt wording says exactly what the reference answers: passage counts, query-focused summaries, reply format."""

from __future__ import annotations

import pytest

from longbench100.fitting.pieces import distractor_piece, gold_piece
from longbench100.fitting.templates import PromptTemplates, passage_phrase
from longbench100.generate.base_lengths import base_length_warnings
from longbench100.scoring.metrics.parsers import parse_passage_number
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Document, Item
from longbench100.tasks.multi_doc_qa import MultiDocQa
from longbench100.tasks.multi_doc_sum import MultiDocSum
from longbench100.tasks.passage_retrieval import PassageRetrieval
from longbench100.tasks.single_doc_sum import SingleDocSum
from longbench100.tasks.summary_requests import specific_request

GOLD = [
    Document(f"s/gold-{n}", "s", f"Gold text number {n} about the harbour ferry.", tokens=10)
    for n in range(3)
]
OTHER = Document("s/other", "s", "An unrelated note about a village bakery.", tokens=10)


def _prompt(builder_class, item: Item, golds: list[Document]) -> str:
    """Render a builder's template with the gold passages first and one distractor last."""
    builder = builder_class(Corpus({}, {}), PromptTemplates())
    pieces = [gold_piece(doc) for doc in golds] + [distractor_piece(OTHER)]
    return builder.render(pieces, **builder.variables(item))


def _item(
    question: str | None = None, summary: str | None = "A ferry got a new timetable.", docs: int = 1
) -> Item:
    return Item(
        "s/item",
        "s",
        tuple(doc.id for doc in GOLD[:docs]),
        question=question,
        answers=("ferry",) if summary is None else (),
        summary=summary,
    )


@pytest.mark.parametrize(
    ("numbers", "phrase"),
    [([4], "Passage 4"), ([3, 7], "Passages 3 and 7"), ([1, 2, 5], "Passages 1, 2 and 5")],
)
def test_passages_are_named_in_the_singular_or_plural(numbers: list[int], phrase: str) -> None:
    assert passage_phrase(numbers) == phrase


@pytest.mark.parametrize(
    "request_text",
    [
        "Please summarise this report.",
        "You are an editor. Please write a summary of this article.",
        "Summarize the whole transcript",
        "Write a brief summary for the episode.",
        "Summarize these press releases.",
        "",
        None,
    ],
)
def test_requests_for_a_summary_of_the_whole_text_are_generic(request_text: str | None) -> None:
    assert specific_request(_item(request_text)) == ""


@pytest.mark.parametrize(
    "request_text",
    [
        "What did the treasurer propose about the budget?",
        "Summarize the discussion about the new logo and its colours.",
        "How do visitors describe the museum's cafe?",
    ],
)
def test_narrower_requests_are_query_focused(request_text: str) -> None:
    assert specific_request(_item(request_text)) == request_text


def test_multi_doc_qa_takes_only_items_with_two_or_more_supporting_passages() -> None:
    builder = MultiDocQa(Corpus({}, {}, documents={doc.id: doc for doc in GOLD}), PromptTemplates())
    assert not builder.accepts(_item("Which ferry?", None, docs=1))
    assert builder.accepts(_item("Which ferry?", None, docs=2))
    one_text_twice = Item(
        "s/twice", "s", (GOLD[0].id, GOLD[0].id), question="Which ferry?", answers=("ferry",)
    )
    assert not builder.accepts(one_text_twice)  # two ids, one text: one supporting passage


def test_multi_doc_qa_with_several_gold_passages_says_they_combine() -> None:
    prompt = _prompt(MultiDocQa, _item("Which ferry?", None, docs=2), GOLD[:2])
    assert (
        "spread over Passages 1 and 2;" in prompt and "Combine what Passages 1 and 2 say" in prompt
    )


def test_multi_doc_sum_says_same_story_only_for_two_or_more_passages() -> None:
    one = _prompt(MultiDocSum, _item(), GOLD[:1])
    assert "Passage 1 is a news report;" in one and "summary of the news in Passage 1," in one
    assert "same story" not in one and "Passages 1" not in one
    three = _prompt(MultiDocSum, _item(docs=3), GOLD)
    assert (
        "Passages 1, 2 and 3 are news reports about the same story" in three
        and "combines the news in Passages 1, 2 and 3," in three
    )


def test_query_focused_summaries_get_the_query_as_the_task() -> None:
    query = "What did the harbour master say about the ferry timetable?"
    single = _prompt(SingleDocSum, _item(query), GOLD[:1])
    assert single.endswith(f"Using only Passage 1, respond to this request: {query}\n\nAnswer:")
    assert "concise summary" not in single and "main points" not in single
    multi = _prompt(MultiDocSum, _item(query, docs=2), GOLD[:2])
    assert "Passages 1 and 2 hold what the request at the end needs" in multi
    assert (
        multi.endswith(f"Using only Passages 1 and 2, respond to this request: {query}\n\nAnswer:")
        and "news" not in multi
    )
    builder = SingleDocSum(Corpus({}, {}), PromptTemplates())
    assert builder.question(_item(query), [1]) == query


def test_generic_summaries_keep_the_summary_wording() -> None:
    prompt = _prompt(SingleDocSum, _item("Please summarise this report."), GOLD[:1])
    assert prompt.endswith(
        "Write a concise summary of Passage 1, covering its main points and nothing from the other passages.\n\nSummary:"
    )
    assert "request" not in prompt


def test_passage_retrieval_asks_for_a_number_the_parser_reads() -> None:
    prompt = _prompt(PassageRetrieval, _item(), GOLD[:1])
    assert (
        "Reply with the number of that passage only, for example 5." in prompt
        and '"Passage 5"' not in prompt
    )
    assert prompt.startswith("Below are 2 numbered passages")
    for reply in (
        "5",
        " 5",
        "5.",
        "Passage 5",
    ):  # what the prompt asks for, alone or after its closing "Answer: Passage"
        assert parse_passage_number(reply) == 5


def test_base_length_warnings_name_the_task_and_the_fix() -> None:
    rows = {
        "kv_retrieval": {"2k": 3, "4k": 3, "6k": 3, "8k": 3},
        "single_doc_qa": {"2k": 0, "4k": 3, "6k": 3, "8k": 3},
        "multi_doc_sum": {"2k": 0, "4k": 0, "6k": 0, "8k": 3, "16k": 3},
    }
    assert base_length_warnings(rows) == [
        "single_doc_qa has no rows at base length 2k; its Base Ability will rest on 4k, 6k only",
        "multi_doc_sum has no rows at any base length (2k, 4k, 6k), so it gets no Base Ability or LongScore: "
        "score it with --base-lengths 8k,16k, or generate a length its items fit",
    ]
    assert base_length_warnings({"kv_retrieval": {"8k": 3}})[0].startswith(
        "none of the base lengths (2k, 4k, 6k) was generated"
    )
    assert base_length_warnings({"kv_retrieval": {"2k": 3, "4k": 3, "6k": 3, "8k": 3}}) == []
    assert base_length_warnings(
        {"kv_retrieval": {"2k": 3, "4k": 3, "6k": 3}}
    ) == [  # no length to measure LongScore at
        "every generated length (2k, 4k, 6k) is a base length: Base Ability can be measured but LongScore needs at "
        "least one longer length; add one to --lengths"
    ]


def test_base_lengths_left_out_of_the_run_are_named() -> None:
    rows = {"kv_retrieval": {"4k": 3, "8k": 3}, "single_doc_qa": {"4k": 3, "8k": 3}}
    assert base_length_warnings(rows) == [
        "base lengths 2k, 6k were not generated; every task's Base Ability will rest on 4k only "
        "(add them to --lengths, or score with --base-lengths set to lengths you generated)",
    ]
    assert base_length_warnings({"kv_retrieval": {"2k": 3, "4k": 3, "8k": 3}})[0].startswith(
        "base length 6k was not generated; every task's Base Ability will rest on 2k, 4k only (add it to --lengths"
    )


def test_passage_count_does_not_claim_copies_when_every_paragraph_differs() -> None:
    blocks = [
        {"kind": "passage", "number": n, "text": text}
        for n, text in enumerate(["A ferry left at noon.", "A bakery opened."], 1)
    ]
    prompt = PromptTemplates().render("passage_count", {"blocks": blocks, "gold_numbers": []})
    assert "Below are 2 numbered paragraphs." in prompt
    assert "Some paragraphs are exact copies" not in prompt and "may be exact copies" in prompt


def test_a_template_is_parsed_once_to_validate_and_fingerprint_it(monkeypatch) -> None:
    templates = PromptTemplates()
    parsed: list[str] = []
    original = templates._environment.parse
    monkeypatch.setattr(
        templates._environment,
        "parse",
        lambda source, *rest: parsed.append(source) or original(source, *rest),
    )
    templates.validate("single_doc_qa")
    first = templates.fingerprint("single_doc_qa")
    first["sha256"] = "changed by the caller"
    assert templates.fingerprint("single_doc_qa") == PromptTemplates().fingerprint("single_doc_qa")
    assert len(parsed) == 1
