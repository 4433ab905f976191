"""Output files: one JSONL per task and length, appended through a ``.partial`` file and renamed when complete.

A crash leaves the ``.partial`` file with whole lines (a torn last line is cut off on resume), so
``--resume`` continues after the last row written without losing or duplicating rows.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from longbench100.core.atomic import write_parts
from longbench100.core.errors import UserError

_ROW = re.compile(rb'"row": (\d+)')
_PROMPT_TOKENS = re.compile(rb'"prompt_tokens": (\d+)')  # unescaped quotes: only the record's key
LOW_FILL = 0.5
"""A median fill (prompt tokens over the budget) below this means the sources cannot fill the
length."""
_GOLD_SOURCE = re.compile(
    rb'"gold": \{"sources": \["((?:[^"\\]|\\.)*)"'
)  # unescaped quotes: only the record's own key


def partial_file(final: Path) -> Path:
    """The in-progress twin of a data file."""
    return final.with_name(final.name + ".partial")


def holds_rows(out: Path) -> bool:
    """Whether an output folder holds finished work: a data file (even an empty one, a length that is done)
    or a ``.partial`` file with at least one complete line."""
    if any(out.glob("*/*.jsonl")):
        return True
    for partial in out.glob("*/*.jsonl.partial"):
        with open(partial, "rb") as handle:
            if any(b"\n" in chunk for chunk in iter(lambda: handle.read(1 << 16), b"")):
                return True
    return False


def completed_rows(partial: Path) -> list[int]:
    """The ``row`` of every complete line of ``partial`` (none when absent); cuts a torn last line off."""
    if not partial.exists():
        return []
    data = partial.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        with open(partial, "r+b") as handle:
            handle.truncate(len(complete))
    return written_rows(partial)


def written_rows_in(out: Path) -> int:
    """Complete rows in an output folder: finished data files and complete lines of ``.partial`` files."""
    count = 0
    for path in [*out.glob("*/*.jsonl"), *out.glob("*/*.jsonl.partial")]:
        with open(path, "rb") as handle:
            count += sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))
    return count


def written_rows(path: Path) -> list[int]:
    """The ``row`` of every line of a data file, read from the head of each line (prompts are not parsed)."""
    rows: list[int] = []
    with open(path, "rb") as handle:
        for line in handle:
            match = _ROW.search(line, 0, 400)
            if match is None:
                raise UserError(f"{path}: line {len(rows) + 1} is not a longbench100 record")
            rows.append(int(match.group(1)))
    return rows


def median_fill(path: Path, budget: int, prompt_tokens: list[int] | None = None) -> float | None:
    """The median of ``prompt_tokens / budget`` over the lines of a data file (``None`` when it has
    none): over ``prompt_tokens`` when the caller knows every line's count (it wrote them all), else
    read from each line's ``prompt_tokens`` key (prompts are not parsed)."""
    if prompt_tokens is None:
        with open(path, "rb") as handle:
            prompt_tokens = [
                int(match.group(1)) for line in handle if (match := _PROMPT_TOKENS.search(line))
            ]
    fills = sorted(tokens / budget for tokens in prompt_tokens)
    return fills[len(fills) // 2] if fills else None


def written_sources(path: Path) -> dict[str, int]:
    """How many lines of a data file name each first ``gold.sources`` entry (tasks that choose their own items
    record their ground-truth source there; lines without one are not counted)."""
    counts: dict[str, int] = {}
    with open(path, "rb") as handle:
        for line in handle:
            match = _GOLD_SOURCE.search(line)
            if match is not None:
                source = match.group(1).decode("utf-8")
                counts[source] = counts.get(source, 0) + 1
    return counts


class LineAppender:
    """Appends complete JSON lines to a ``.partial`` file, flushing each one to the operating system, and
    keeps the sha256 of the whole file as it grows (the lines a resumed run found there included), so the
    manifest need not read the finished file back."""

    def __init__(self, partial: Path) -> None:
        partial.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(partial, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.path = partial
        self._digest = hashlib.sha256()
        with open(partial, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                self._digest.update(chunk)

    def write(self, line: Sequence[bytes]) -> None:
        """Append one line (UTF-8, ending in its newline), given as the parts it joins (written
        together, not joined first); a torn line from a crash is cut off on resume."""
        for part in line:
            self._digest.update(part)
        write_parts(self._fd, line)

    def finish(self, final: Path) -> str:
        """Sync, close and atomically rename the partial file to its final name; return the file's sha256."""
        os.fsync(self._fd)
        os.close(self._fd)
        os.replace(self.path, final)
        return self._digest.hexdigest()

    def close(self) -> None:
        """Close without renaming (the run was interrupted)."""
        os.close(self._fd)
