"""The layout of a generated data folder: ``<task>/<label>.jsonl`` files, listed in one canonical order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol, Sequence, TypeVar

from longbench100.core.errors import UserError
from longbench100.core.lengths import canonical_label, parse_length
from longbench100.catalog.task_info import TASKS


@dataclass(frozen=True)
class DataFileRef:
    """One data file: its task, canonical length label, budget in tokens and path."""

    task: str
    label: str
    length: int
    path: Path


def data_file_path(folder: Path, task: str, label: str) -> Path:
    """``folder/<task>/<label>.jsonl``."""
    return folder / task / f"{label}.jsonl"


CONTROLS_FOLDER = "controls"


def controls_folder(folder: Path) -> Path:
    """``folder/controls``: the control twins of a data folder, laid out as a data folder of their
    own."""
    return folder / CONTROLS_FOLDER


def list_data_files(folder: Path, tasks: Iterable[str] | None = None) -> list[DataFileRef]:
    """The data files under ``folder`` (of ``tasks``, default all), in task order and then by length.

    Files whose name is not a length label (``notes.jsonl``) and unknown task folders are ignored.
    """
    refs = []
    for task in tasks if tasks is not None else TASKS:
        for path in (folder / task).glob("*.jsonl"):
            try:
                length = parse_length(path.stem)
            except UserError:
                continue
            refs.append(DataFileRef(task, canonical_label(length), length, path))
    order = list(TASKS)
    return sorted(refs, key=lambda ref: (order.index(ref.task), ref.length))


class _RowOfFile(Protocol):
    task: str
    label: str
    row: int


Row = TypeVar("Row", bound=_RowOfFile)


def first_rows(rows: Sequence[Row], limit: int) -> list[Row]:
    """Keep the ``limit`` lowest-numbered rows of each task and length (``--limit``), in their original order."""
    numbers: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        numbers.setdefault((row.task, row.label), []).append(row.row)
    kept = {key: set(sorted(values)[:limit]) for key, values in numbers.items()}
    return [row for row in rows if row.row in kept[row.task, row.label]]
