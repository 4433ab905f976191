"""Filler cuts kept between runs: a second run cuts no filler the first one cut; an answer is only
given for the very text and tokenizer it was worked out for; a corpus without a content key, a
damaged or foreign file, keep nothing wrong."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from longbench100.core.checked_files import write_checked
from longbench100.fitting import kept_filler_cuts
from longbench100.fitting.kept_filler_cuts import keep_filler_cuts, recall_filler_cuts
from longbench100.fitting.packing import cut_prefix, document_cut
from longbench100.sources.records import Document
from longbench100.text.tokenization import load_tokenizer

TASKS = ("single_doc_qa",)
TEXT = (
    "The river rose in the night. By morning the road was gone and the bridge with it. Nobody in "
    "the village had seen it coming, though the rain had fallen for a week. The mayor called a "
    "meeting. Everyone came, even the miller, who never came to anything at all. "
) * 4


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own, and no run left under way."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))
    monkeypatch.setattr(kept_filler_cuts, "_run", None)
    return tmp_path


@pytest.fixture
def cuts_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The token limits the filler was actually cut for (not answered from what was known)."""
    made: list[int] = []

    def counted(tokenizer, text, max_tokens):
        made.append(max_tokens)
        return cut_prefix(tokenizer, text, max_tokens)

    monkeypatch.setattr("longbench100.fitting.packing.cut_prefix", counted)
    return made


def _document(text: str = TEXT) -> Document:
    return Document("tale/1", "tale", text, tokens=200)


def test_a_second_run_cuts_no_filler_the_first_cut(cache: Path, cuts_made: list[int]) -> None:
    tokenizer = load_tokenizer("cl100k_base")
    document = _document()
    recall_filler_cuts(tokenizer, {document.id: document}, "key", "code", TASKS)
    cuts = [document_cut(tokenizer, document, limit) for limit in (30, 60, 2, 30)]
    assert cuts == [cut_prefix(tokenizer, TEXT, limit) for limit in (30, 60, 2, 30)]
    assert cuts[0] is not None and cuts[2] is None  # one that fits and one that cannot
    assert cuts_made == [30, 60, 2]  # the repeat within the run was known
    keep_filler_cuts()

    again = _document(TEXT[:-1] + " ")  # the next run's document: the same text, read again
    recall_filler_cuts(tokenizer, {again.id: again}, "key", "code", TASKS)
    assert [document_cut(tokenizer, again, limit) for limit in (30, 60, 2)] == cuts[:3]
    assert cuts_made == [30, 60, 2]
    keep_filler_cuts()


def test_another_text_under_the_same_id_or_another_tokenizer_is_cut_anew(
    cache: Path, cuts_made: list[int]
) -> None:
    tokenizer = load_tokenizer("cl100k_base")
    document = _document()
    recall_filler_cuts(tokenizer, {document.id: document}, "key", "code", TASKS)
    document_cut(tokenizer, document, 40)
    shorter = _document(TEXT[: len(TEXT) // 2])  # same id, other text (a task's own copy)
    assert document_cut(tokenizer, shorter, 40) == cut_prefix(tokenizer, shorter.text, 40)
    other = load_tokenizer("o200k_base")
    assert document_cut(other, document, 40) == cut_prefix(other, TEXT, 40)
    assert cuts_made == [40, 40, 40]
    keep_filler_cuts()
    kept = kept_filler_cuts._valid(
        marshal.loads(next((cache / "filler_cuts").iterdir()).read_bytes().partition(b"\n")[2])
    )
    assert set(kept) == {("tale/1", len(TEXT), 40)}  # only the corpus document's cut is kept


def test_without_a_content_key_or_a_run_nothing_is_kept(cache: Path, cuts_made: list[int]) -> None:
    tokenizer = load_tokenizer("cl100k_base")
    document = _document()
    document_cut(tokenizer, document, 40)  # no run under way: cut, not known
    recall_filler_cuts(tokenizer, {document.id: document}, None, "code", TASKS)
    document_cut(tokenizer, document, 40)
    document_cut(tokenizer, document, 40)
    keep_filler_cuts()
    assert cuts_made == [40, 40] and not (cache / "filler_cuts").exists()


@pytest.mark.parametrize(
    "content",
    [
        b"\x00torn",
        marshal.dumps(["a", 1]),
        marshal.dumps({("tale/1", len(TEXT), 40): (len(TEXT) + 5, 3)}),  # longer than the text
        marshal.dumps({("tale/1", len(TEXT)): (10, 3)}),
    ],
    ids=["torn", "not-a-dict", "longer-than-its-text", "a-short-key"],
)
def test_a_damaged_or_foreign_file_is_ignored(
    cache: Path, cuts_made: list[int], content: bytes
) -> None:
    tokenizer = load_tokenizer("cl100k_base")
    document = _document()
    recall_filler_cuts(tokenizer, {document.id: document}, "key", "code", TASKS)
    assert kept_filler_cuts._run is not None and kept_filler_cuts._run.path is not None
    path = kept_filler_cuts._run.path
    keep_filler_cuts()
    write_checked(path, content)  # as a run writes it: only its content is wrong
    recall_filler_cuts(tokenizer, {document.id: document}, "key", "code", TASKS)
    assert document_cut(tokenizer, document, 40) == cut_prefix(tokenizer, TEXT, 40)
    assert cuts_made == [40]
    keep_filler_cuts()
