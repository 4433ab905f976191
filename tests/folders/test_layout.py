"""The data folder's files chosen by task and length, as coverage, dolce probes and predict ask."""

from pathlib import Path

import pytest

from longbench100.core.errors import UserError
from longbench100.folders.layout import open_data_folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A hand-made data folder (no manifest) with three files."""
    for task, label in (("kv_retrieval", "2k"), ("kv_retrieval", "4k"), ("passage_count", "2k")):
        (tmp_path / task).mkdir(exist_ok=True)
        (tmp_path / task / f"{label}.jsonl").write_text("")
    return tmp_path


def _cells(refs) -> list[tuple[str, str]]:
    return [(ref.task, ref.label) for ref in refs]


def test_files_of_keeps_the_chosen_tasks_and_lengths_in_canonical_order(folder: Path) -> None:
    checked = open_data_folder(folder)
    assert _cells(checked.files_of(None, None)) == _cells(checked.files)
    assert _cells(checked.files_of(["kv_retrieval"], None)) == [
        ("kv_retrieval", "2k"),
        ("kv_retrieval", "4k"),
    ]
    assert _cells(checked.files_of(None, {"2k"})) == [
        ("kv_retrieval", "2k"),
        ("passage_count", "2k"),
    ]
    assert checked.files_of(["passage_count"], {"4k"}) == []


def test_choosing_no_file_is_one_line_naming_the_folder(folder: Path) -> None:
    checked = open_data_folder(folder)
    assert _cells(checked.chosen_files(("passage_count",), None)) == [("passage_count", "2k")]
    with pytest.raises(UserError) as refused:
        checked.chosen_files(("passage_count",), ("4k",))
    assert str(refused.value) == (
        f"--data {folder}: no data files for the chosen tasks and lengths"
    )
