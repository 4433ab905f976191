"""Cache entries name the file they were written to and carry a checksum: one moved or copied
under another entry's name (another key), or damaged in place, is worked out again, never read
back as that key's value."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

from longbench100.core import checked_files
from longbench100.core.cache_entries import cached_json, read_json_entry, write_json_entry
from longbench100.core.marshal_cache import read_marshal, write_marshal


def _keep(path: Path, value: int) -> int:
    """The value cached_json gives at ``path`` when it would work out ``value``."""
    return cached_json(path, lambda: value, lambda kept: kept, _as_int)


def _as_int(stored: object) -> int:
    """``stored`` when it is an int (the entries' decoder)."""
    if not isinstance(stored, int):
        raise TypeError(stored)
    return stored


def test_json_entry_is_read_back_under_its_own_name(tmp_path: Path) -> None:
    _keep(tmp_path / "a.json", 1)
    assert _keep(tmp_path / "a.json", 2) == 1


def test_json_entry_moved_under_another_name_is_worked_out_again(tmp_path: Path) -> None:
    _keep(tmp_path / "a.json", 1)
    _keep(tmp_path / "b.json", 2)
    shutil.copyfile(tmp_path / "a.json", tmp_path / "b.json")
    assert _keep(tmp_path / "b.json", 2) == 2
    assert _keep(tmp_path / "b.json", 3) == 2  # and kept again under its own name


def test_json_entry_without_its_name_is_worked_out_again(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("1", encoding="utf-8")
    assert _keep(tmp_path / "a.json", 2) == 2


def test_json_entry_damaged_in_place_is_worked_out_again(tmp_path: Path) -> None:
    _keep(tmp_path / "a.json", 41)
    damaged = (tmp_path / "a.json").read_bytes().replace(b"41", b"17")
    (tmp_path / "a.json").write_bytes(damaged)
    assert _keep(tmp_path / "a.json", 2) == 2


def test_marshal_entry_is_read_back_under_its_own_name(tmp_path: Path) -> None:
    write_marshal(tmp_path / "a.marshal", {"x": [1, 2]})
    assert read_marshal(tmp_path / "a.marshal") == {"x": [1, 2]}


def test_marshal_entry_moved_under_another_name_reads_as_absent(tmp_path: Path) -> None:
    write_marshal(tmp_path / "a.marshal", {"x": [1, 2]})
    shutil.copyfile(tmp_path / "a.marshal", tmp_path / "b.marshal")
    assert read_marshal(tmp_path / "b.marshal") is None


def test_json_entry_in_a_cache_that_cannot_be_written_is_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path, data: bytes) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(checked_files, "write_bytes_atomic", refuse)
    write_json_entry(tmp_path / "a.json", {"counts": [1]})
    with pytest.raises(ValueError):
        read_json_entry(tmp_path / "a.json")
    assert _keep(tmp_path / "a.json", 5) == 5
