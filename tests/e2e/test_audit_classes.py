"""bench/audit_generated.py counts each leftover-text class on its own (issue 46), and leaves real prose alone."""

from __future__ import annotations

import pytest

from tests.support.bench_scripts import load_bench_script

audit = load_bench_script("audit_generated")


def record(prompt: str) -> dict:
    """A minimal data record whose prompt is one passage."""
    return {
        "prompt": f"Passage 1:\n{prompt}\n\nQuestion: what?",
        "task": "single_doc_qa",
        "answers": ["x"],
        "length": 10_000,
        "prompt_tokens": 0,
        "gold": {"passages": [1]},
        "distractors": [],
    }


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Here, $w_{t}$ denotes the score.", "latex"),
        ("If the order ≤ {\\displaystyle \\leq} holds.", "latex"),
        ("with [[Melissa Joan Hart]] and others.", "wiki markup"),
        ("Life cycle and habitat [edit] Fleas are insects.", "wiki edit marks"),
        (
            'The list.\n\nRetrieved from "https://en.wikipedia.org/w/index.php?title=X" Categories:',
            "wikipedia menu text",
        ),
        ("I do n't know what he wants from us at all.", "treebank clitics"),
        (
            "the parties shall\n\nSource: COHERUS BIOSCIENCES, INC., 10-K, 2/27/2020\n\npay all fees.",
            "page footers",
        ),
        (
            "A phase 2 study showed that it was well\nA phase 2 study showed that it was well tolerated.",
            "truncated repeat",
        ),
        ("as in (DISPLAY_FORM4) above.", "paper markup"),
    ],
)
def test_each_class_is_counted(text, name):
    found = audit.audit_record(record(text), audit.cl100k_base(), recount=False)
    assert found[name] >= 1
    assert name in audit.ZERO_REQUIRED


def test_prose_amounts_dialect_and_long_documents_are_not_counted():
    prose = (
        "It cost $5 and $10 in all. \"Ay, you 've got money, and that's a good egg,\" he said. "
        "The total was $ 5 million and $ 3 million."
    )
    found = audit.audit_record(record(prose), audit.cl100k_base(), recount=False)
    assert not any(
        found[name]
        for name in ("latex", "treebank clitics", "wiki markup", "page footers", "truncated repeat")
    )
