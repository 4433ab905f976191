"""The filler check's answers kept between runs: a second run learns what the first worked out and
compares no shingles again; the answers are the ones worked out; a damaged file is ignored; nothing
is written where nothing was worked out."""

from __future__ import annotations

import marshal
import random
from pathlib import Path

import pytest

from longbench100.sources import near_duplicates
from longbench100.sources.kept_near_copies import (
    keep_near_copy_answers,
    kept_answers_path,
    recall_near_copy_answers,
)
from longbench100.sources.near_duplicates import near_copy_of_any
from tests.support.fixture_mirror import paragraph

TASKS = ("single_doc_qa", "passage_count")
SHARED = paragraph(random.Random(1), 20)
PASSAGES = [
    paragraph(random.Random(2), 40) + " " + SHARED + " " + paragraph(random.Random(3), 40),
    paragraph(random.Random(4), 30),
]
QUESTIONS = [  # (filler opening, passages placed beside it)
    (SHARED + " " + paragraph(random.Random(5), 4), PASSAGES),  # shares the first passage
    (paragraph(random.Random(6), 12), PASSAGES),  # shares nothing
    (SHARED, PASSAGES[1:]),  # the passage it shares is not placed
]


@pytest.fixture
def fresh_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own, and a filler check that has learned and worked out
    nothing yet (as in a new process)."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))
    monkeypatch.setattr(near_duplicates, "_answers", {})
    monkeypatch.setattr(near_duplicates, "_worked_out", {})
    return tmp_path


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget every answer, as a new run starts."""
    monkeypatch.setattr(near_duplicates, "_answers", {})
    monkeypatch.setattr(near_duplicates, "_worked_out", {})


def test_a_second_run_answers_from_what_the_first_kept(
    fresh_process: Path, monkeypatch: pytest.MonkeyPatch
):
    recalled = recall_near_copy_answers(TASKS)
    assert recalled == {}
    answers = [near_copy_of_any(text, others) for text, others in QUESTIONS]
    assert answers == [True, False, False]
    keep_near_copy_answers(recalled, TASKS)
    assert kept_answers_path(TASKS).is_file()

    _new_process(monkeypatch)
    assert len(recall_near_copy_answers(TASKS)) == len(QUESTIONS)

    def compared(text: str, others: list[str]) -> bool:
        raise AssertionError(f"compared again: {text[:40]!r}")

    monkeypatch.setattr(near_duplicates, "_worked_out_near_copy", compared)
    assert [near_copy_of_any(text, others) for text, others in QUESTIONS] == answers
    assert near_duplicates.worked_out_near_copy_answers() == {}


def test_a_kept_answer_is_the_one_worked_out_for_the_same_texts_only(fresh_process: Path):
    for text, others in QUESTIONS:
        assert near_copy_of_any(text, others) == near_duplicates._worked_out_near_copy(
            text, list(others)
        )
    text, others = QUESTIONS[0]
    assert near_copy_of_any(text, others)
    assert not near_copy_of_any(text, others[1:])  # other passages: another question
    assert not near_copy_of_any(text + " More words of its own follow here.", others[1:])
    assert len(near_duplicates.worked_out_near_copy_answers()) == len(QUESTIONS) + 2
    assert near_copy_of_any(text, [*reversed(others), others[0]])  # the same passages, as a set
    assert len(near_duplicates.worked_out_near_copy_answers()) == len(QUESTIONS) + 2


def test_a_damaged_or_foreign_file_is_ignored(fresh_process: Path):
    path = kept_answers_path(TASKS)
    path.parent.mkdir(parents=True)
    for damaged in [
        b"\x00torn",
        marshal.dumps(["a", 1]),
        marshal.dumps({b"short": True}),
        marshal.dumps({bytes(16): "yes"}),
    ]:
        path.write_bytes(damaged)
        assert recall_near_copy_answers(TASKS) == {}
    text, others = QUESTIONS[0]
    assert near_copy_of_any(text, others)


def test_nothing_is_written_where_nothing_was_worked_out(fresh_process: Path):
    keep_near_copy_answers({}, TASKS)
    assert not kept_answers_path(TASKS).exists()
    assert kept_answers_path(TASKS) != kept_answers_path(("single_doc_qa",))


def test_an_unwritable_cache_only_costs_the_comparing(fresh_process: Path):
    folder = kept_answers_path(TASKS).parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where the answers' folder should be")  # nothing can be written there
    text, others = QUESTIONS[0]
    assert near_copy_of_any(text, others)
    keep_near_copy_answers({}, TASKS)  # no error
    assert folder.read_text() == "a file where the answers' folder should be"
