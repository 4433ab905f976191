"""Atomic writes: a file appears whole under its name, or not at all."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from longbench100.core import atomic
from longbench100.core.atomic import MOST_PARTS, write_bytes_atomic, write_lines_atomic


def test_lines_are_written_joined(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "a.jsonl"
    write_lines_atomic(path, (line for line in (b"one\n", b"", b"two\n")))
    assert path.read_bytes() == b"one\ntwo\n"
    write_bytes_atomic(path, b"three\n")
    assert path.read_bytes() == b"three\n"


def test_lines_that_raise_leave_nothing_behind(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"before\n")

    def failing() -> Iterator[bytes]:
        yield b"one\n"
        raise ValueError("cannot make the second line")

    with pytest.raises(ValueError):
        write_lines_atomic(path, failing())
    assert path.read_bytes() == b"before\n"
    assert sorted(file.name for file in tmp_path.iterdir()) == ["a.jsonl"]


def test_many_lines_written_a_few_bytes_at_a_time_are_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_writev = os.writev
    calls: list[int] = []

    def a_few_bytes_at_a_time(handle: int, buffers: list) -> int:  # as a system may
        calls.append(len(buffers))
        return real_writev(handle, [bytes(buffers[0])[:5]])

    monkeypatch.setattr(atomic.os, "writev", a_few_bytes_at_a_time)
    lines = [f"{number}\n".encode() for number in range(3000)] + [b"", b"x" * 20_000]
    path = tmp_path / "a.jsonl"
    write_lines_atomic(path, iter(lines))
    assert path.read_bytes() == b"".join(lines)
    assert max(calls) == MOST_PARTS  # many lines a call, each call continued where it stopped
