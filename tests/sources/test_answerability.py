"""Answerability rules (longbench100.sources.answerability) on small hand-written items, and the loader's per-rule counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from longbench100.core.errors import UserError
from longbench100.sources.answerability import ANSWERABILITY_RULES, failed_rule, rule_counts_line
from longbench100.sources.registry import parse_entry

DOCUMENT = "The clinic in Tromso opens at nine. Patients renew their permits by mail within forty days of the expiry date."


@pytest.mark.parametrize(
    "rule, question, answer, passes",
    [
        ("answer_not_question", "How do I renew my permit?", "By mail, within forty days.", True),
        ("answer_not_question", "I want to learn about permits", "Are you a resident?", False),
        ("question_standalone", "How do I renew my permit?", "by mail", True),
        (
            "question_standalone",
            "That's great to hear! Another concern relates to teaching.",
            "by mail",
            False,
        ),
        ("question_standalone", "OK good. What do I do next?", "by mail", False),
        ("question_standalone", "yes", "by mail", False),
        ("question_standalone", "I have a FFEL loan.", "by mail", False),
        ("question_standalone", "I want to know when the clinic opens", "at nine", True),
        ("question_standalone", "Hello, I need to know when the clinic opens.", "at nine", True),
        (
            "question_standalone",
            "Which of the two tornado outbreaks killed the most people?",
            "the second",
            False,
        ),
        (
            "question_standalone",
            "Which of the two, Tromso or Oslo, is further north?",
            "Tromso",
            True,
        ),
        ("question_standalone", "handmaid's tale how many episodes in series 2", "13", True),
        (
            "question_standalone",
            'Highlight the parts (if any) of this contract related to "Parties".',
            "the clinic",
            True,
        ),
        (
            "question_without_dialogue_pointer",
            "How would I be able to get this mailed to me?",
            "by mail",
            False,
        ),
        ("question_without_dialogue_pointer", "How do I renew a permit by mail?", "by mail", True),
        ("answer_extractive", "When does it open?", "at Nine!", True),
        ("answer_extractive", "When does it open?", "at ten", False),
        ("answer_grounded", "How?", "Patients renew permits by mail.", True),
        (
            "answer_grounded",
            "How?",
            "Yes, much greater. This is our powerhouse, the leasing business.",
            False,
        ),
        ("answer_not_yes_no", "Is it open?", "Yes, it is open at nine.", False),
        ("answer_not_yes_no", "What is open?", "Nobody knows; the clinic.", True),
        ("answer_not_in_question", "When does the clinic open?", "At nine.", True),
        ("answer_not_in_question", "Which is older, Aspirin or Ibuprofen?", "aspirin", False),
        ("answer_not_in_question", "Which town, Oslo or Tromso?", "Os", True),
        (
            "answer_not_in_question",
            "What do patients renew by mail?",
            "Patients renew permits by mail.",
            False,
        ),
        ("answer_not_in_question", "Who renews permits by mail?", "The patients.", True),
    ],
)
def test_each_rule_passes_and_fails_where_it_should(
    rule: str, question: str, answer: str, passes: bool
) -> None:
    assert ANSWERABILITY_RULES[rule](question, (answer,), (DOCUMENT,)) is passes


def test_failed_rule_names_the_first_rule_failed_in_declared_order() -> None:
    rules = ("answer_not_question", "answer_grounded")
    assert failed_rule(rules, "How?", ("Is it open?",), (DOCUMENT,)) == "answer_not_question"
    assert (
        failed_rule(rules, "How?", ("Unrelated powerhouse words.",), (DOCUMENT,))
        == "answer_grounded"
    )
    assert failed_rule(rules, "How?", ("By mail.",), (DOCUMENT,)) is None
    assert (
        rule_counts_line({"answer_grounded": 2, "answer_not_question": 1})
        == "answer_not_question 1, answer_grounded 2"
    )


def test_registry_refuses_an_unknown_rule_in_one_line(tmp_path: Path) -> None:
    entry = tmp_path / "x.toml"
    entry.write_text(
        'name = "x"\nanswerable = ["answer_is_right"]\n[hub]\nrepo_id = "a/b"\n[[files]]\npath = "f.jsonl"\nformat = "jsonl"\n'
        '[files.document]\ntext = "t"\n'
    )
    with pytest.raises(UserError, match="unknown answerability rule 'answer_is_right'"):
        parse_entry(entry)


def _load_rows(tmp_path: Path, rows: list[dict], rules: list[str], item_id: str | None = None):
    """Load ``rows`` (text, q, a) as a one-file QA source declaring the answerability ``rules`` (items take
    their id from field ``item_id`` when given)."""
    import json

    from longbench100.sources.loader import load_source
    from longbench100.sources.locations import resolve_location

    mirror = tmp_path / "mirror"
    (mirror / "a" / "b").mkdir(parents=True)
    (mirror / "a" / "b" / "f.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    registry = tmp_path / "sources"
    registry.mkdir()
    (registry / "x.toml").write_text(
        f'name = "x"\nanswerable = {json.dumps(rules)}\nroles = ["single_doc_qa:real"]\n'
        '[hub]\nrepo_id = "a/b"\n[[files]]\npath = "f.jsonl"\nformat = "jsonl"\n[files.document]\ntext = "text"\n'
        '[files.item]\nkind = "qa"\nquestion = "q"\nanswers = "a"\n'
        + (f'id = "{item_id}"\n' if item_id else "")
    )
    return load_source(resolve_location(str(mirror)), parse_entry(registry / "x.toml"))


def test_loader_drops_and_counts_unanswerable_items(tmp_path: Path) -> None:
    rows = [
        {"text": DOCUMENT, "q": "How do I renew my permit?", "a": "by mail"},
        {"text": DOCUMENT, "q": "When does the clinic open?", "a": "Are you a resident?"},
        {"text": DOCUMENT, "q": "yes", "a": "at nine"},
    ]
    data = _load_rows(tmp_path, rows, ["answer_not_question", "question_standalone"])
    assert [item.question for item in data.items] == ["How do I renew my permit?"]
    assert data.unanswerable == {"answer_not_question": 1, "question_standalone": 1}


CONTRACT_A = "Acme and Birch are each referred to herein as a Party and together as the Parties. Acme pays Birch a royalty of four percent."
CONTRACT_B = "Corvid and Dune are each referred to herein as a Party and together as the Parties. This Agreement renews every June."
CONTRACT_C = (
    "Elm Ltd shall insure the goods shipped to Fir Inc against fire for their replacement value."
)
PARTIES = 'Highlight the parts (if any) of this contract related to "Parties".'


def _item(item_id: str, document: str, question: str, answer: str):
    from longbench100.sources.records import Item

    return Item(id=item_id, source="x", question=question, answers=(answer,), doc_ids=(document,))


def test_answer_document_specific_drops_answers_another_document_words_alike() -> None:
    from longbench100.sources.answerability import answer_document_specific

    items = [
        _item(
            "a",
            "doc-a",
            PARTIES,
            "Acme and Birch are each referred to herein as a Party and together as the Parties.",
        ),
        _item(
            "b",
            "doc-b",
            PARTIES,
            "Corvid and Dune are each referred to herein as a Party and together as the Parties.",
        ),
        _item("c", "doc-c", PARTIES, "Elm Ltd; Fir Inc"),
        # the same contract under another id (a source listing one contract in two rows) is no other document
        _item("a2", "doc-a", "Royalty?", "a royalty of four percent"),
        _item("a3", "doc-a-copy", "Royalty?", "a royalty of four percent"),
        # the same words asked by another question do not count
        _item(
            "b2",
            "doc-b",
            "Renewal?",
            "Acme and Birch are each referred to herein as a Party and together as the Parties.",
        ),
    ]
    texts = {
        "doc-a": CONTRACT_A,
        "doc-a-copy": CONTRACT_A,
        "doc-b": CONTRACT_B,
        "doc-c": CONTRACT_C,
    }
    assert answer_document_specific(
        items, [tuple(texts[doc] for doc in item.doc_ids) for item in items]
    ) == {0, 1}


def test_loader_counts_the_document_specific_rule_after_the_per_item_rules(tmp_path: Path) -> None:
    rows = [
        {
            "text": CONTRACT_A,
            "q": PARTIES,
            "a": "Acme and Birch are each referred to herein as a Party and together as the Parties.",
        },
        {
            "text": CONTRACT_B,
            "q": PARTIES,
            "a": "Corvid and Dune are each referred to herein as a Party and together as the Parties.",
        },
        {"text": CONTRACT_C, "q": PARTIES, "a": "Elm Ltd and Fir Inc"},
        {
            "text": CONTRACT_C,
            "q": 'Highlight the parts (if any) of this contract related to "Insurance".',
            "a": "Is it insured?",
        },
    ]
    data = _load_rows(tmp_path, rows, ["answer_document_specific", "answer_not_question"])
    assert [item.answers[0] for item in data.items] == ["Elm Ltd and Fir Inc"]
    assert data.unanswerable == {"answer_not_question": 1, "answer_document_specific": 2}
    assert (
        rule_counts_line(data.unanswerable) == "answer_not_question 1, answer_document_specific 2"
    )


def test_the_document_specific_rule_compares_texts_and_drops_only_the_failing_items(
    tmp_path: Path,
) -> None:
    parties_a = "Acme and Birch are each referred to herein as a Party and together as the Parties."
    rows = [
        {"text": CONTRACT_A, "q": PARTIES, "a": parties_a, "id": "same"},
        {
            "text": CONTRACT_A,
            "q": PARTIES,
            "a": parties_a,
            "id": "same",
        },  # an identical item: merged, not compared
        {
            "text": CONTRACT_B,
            "q": PARTIES,
            "a": "Corvid and Dune are each referred to herein as a Party and together as the Parties.",
            "id": "b",
        },
        {"text": CONTRACT_C, "q": "Who insures?", "a": "Elm Ltd", "id": "same"},
    ]  # shares an id with a failing item
    data = _load_rows(tmp_path, rows, ["answer_document_specific"], item_id="id")
    assert [item.answers[0] for item in data.items] == ["Elm Ltd"]
    assert data.unanswerable == {"answer_document_specific": 2} and data.duplicate_items == 1


def test_grounded_reads_each_document_once_and_agrees_with_reading_them_joined():
    import random
    import re

    from longbench100.sources.answerability import _STOPWORDS, GROUNDED_SHARE, answer_grounded

    def joined(
        answer: str, documents: list[str]
    ) -> bool:  # the rule over the documents joined by spaces
        words = [
            word for word in re.findall(r"[a-z0-9]+", answer.lower()) if word not in _STOPWORDS
        ]
        vocabulary = set(re.findall(r"[a-z0-9]+", " ".join(documents).lower()))
        return not words or sum(word in vocabulary for word in words) >= GROUNDED_SHARE * len(words)

    rng = random.Random(3)
    vocabulary = [
        "Permit",
        "renew",
        "mail",
        "the",
        "Σ",
        "İstanbul",
        "x1",
        "ΟΔΟΣ",
        "by",
        "lease",
        "é",
        "-",
        " ",
        "\n",
    ]
    results = []
    for _ in range(3000):
        documents = [
            "".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 8)))
            for _ in range(rng.randint(0, 3))
        ]
        answer = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 4)))
        results.append(answer_grounded("Q?", [answer], documents))
        assert results[-1] == joined(answer, documents), (answer, documents)
    assert 0 < sum(results) < len(results)


def test_grounded_counts_a_word_only_where_it_stands_whole():
    from longbench100.sources.answerability import answer_grounded

    inside_only = ["Sandstone and islands", "grandson"]  # "sand", "son", "land" only inside words
    assert not answer_grounded("Q?", ["sand son land"], inside_only)
    # the whole word comes after occurrences inside longer words, or at either end of a document
    assert answer_grounded("Q?", ["sand son land"], ["sandstone, sand", "grandson son", "land"])
    assert answer_grounded("Q?", ["Land 42"], ["x42y then 42", "LAND"])
    assert not answer_grounded("Q?", ["land 42"], ["island 420"])
