"""Checked cache files: read back only under their own name and with their content intact."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from longbench100.core.checked_files import read_checked, write_checked


def test_content_is_read_back(tmp_path: Path) -> None:
    write_checked(tmp_path / "a.bin", b"\x00one\ntwo")
    assert read_checked(tmp_path / "a.bin") == b"\x00one\ntwo"


def test_long_content_is_read_back_whole(tmp_path: Path) -> None:
    content = b"\n".join(b"line %d \x00" % number for number in range(100_000))
    write_checked(tmp_path / "a.bin", content)
    assert read_checked(tmp_path / "a.bin") == content


def test_a_file_without_a_header_line_or_a_folder_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"x" * 5000 + b"\n" + b"content")
    (tmp_path / "b.bin").mkdir()
    assert read_checked(tmp_path / "a.bin") is None
    assert read_checked(tmp_path / "b.bin") is None


def test_absent_file_reads_as_none(tmp_path: Path) -> None:
    assert read_checked(tmp_path / "a.bin") is None


def test_file_under_another_name_reads_as_none(tmp_path: Path) -> None:
    write_checked(tmp_path / "a.bin", b"content")
    shutil.copyfile(tmp_path / "a.bin", tmp_path / "b.bin")
    assert read_checked(tmp_path / "b.bin") is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data.replace(b"42", b"43"),
        lambda data: data[: len(data) // 2],
        lambda data: b"",
        lambda data: data + b"0",
    ],
    ids=["digit", "truncated", "empty", "appended"],
)
def test_damaged_file_reads_as_none(tmp_path: Path, damage) -> None:
    path = tmp_path / "a.bin"
    write_checked(path, b'{"count": 42}')
    path.write_bytes(damage(path.read_bytes()))
    assert read_checked(path) is None


def test_cache_folder_taken_by_a_file_keeps_nothing(tmp_path: Path) -> None:
    (tmp_path / "records").write_text("not a folder", encoding="utf-8")
    write_checked(tmp_path / "records" / "a.bin", b"content")
    assert read_checked(tmp_path / "records" / "a.bin") is None
