"""Data lines appended in parts: the file holds their join, and the kept sha256 is the file's."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from longbench100.generate import output
from longbench100.generate.output import LineAppender


def test_a_line_written_in_parts_is_their_join_even_when_the_system_writes_part_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_writev = os.writev
    calls: list[int] = []

    def a_few_bytes_at_a_time(fd: int, buffers: list) -> int:  # as a system may, for any size
        calls.append(len(buffers))
        return real_writev(fd, [bytes(buffers[0])[:7]])

    final = tmp_path / "task" / "8k.jsonl"
    appender = LineAppender(output.partial_file(final))
    lines = [
        [b'{"id": "a", ', b"", b'"prompt": "', b"x" * 50, b'"}\n'],
        [b"y" * 3000 + b"\n"],
        [bytes([byte]) for byte in b'{"row": 2}'] * 300 + [b"\n"],  # more parts than one call takes
    ]
    appender.write(lines[0])
    monkeypatch.setattr(output.os, "writev", a_few_bytes_at_a_time)
    appender.write(lines[1])
    monkeypatch.setattr(output.os, "writev", real_writev)
    appender.write(lines[2])
    digest = appender.finish(final)
    expected = b"".join(b"".join(line) for line in lines)
    assert final.read_bytes() == expected
    assert digest == hashlib.sha256(expected).hexdigest()
    assert len(calls) > 1  # the short writes were continued
