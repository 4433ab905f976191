"""Which data records ``score`` grades when predictions are incomplete: a missing prediction is
never a zero.

A failed request (``prediction`` null) is a missing answer too: it is never graded. Without
``--allow-missing`` failed requests are refused first, naming their task and length cells and
``predict --retry-failed``, then incomplete predictions, naming the incomplete cells. With it, a
record without an answer (absent or failed) is left out: a cell without any answer is left out (its
figures null), and of the other cells:

- ``paired`` (the default) keeps a task's row only where it has a prediction at every length the
  task was predicted at, so each length of a task rests on the same rows and LongScore compares like
  with like (an lm-eval ``--limit`` run, Inspect's ``--limit`` counted over the whole dataset);
- ``per-length`` keeps every predicted record: each length rests on its own rows.

results.json records, per incomplete cell, its rows, how many had a prediction and how many were
scored.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord

MISSING_ROWS_MODES = ("paired", "per-length")
_SHOWN_CELLS = 4


@dataclass(frozen=True)
class RowSelection:
    """The records to grade and how the data's records were covered.

    ``missing`` counts the records without a prediction, ``failed`` those whose request failed
    (neither is graded); ``left_out_cells`` are the (task, label) cells without any answer;
    ``incomplete`` maps task -> label -> ``{"rows", "predicted",
    "scored"}`` for every cell where some row is not scored.
    """

    records: list[DataRecord]
    missing: int
    failed: int
    left_out_cells: list[tuple[str, str]]
    incomplete: dict[str, dict[str, dict[str, int]]]

    @property
    def unscored_tasks(self) -> dict[str, str]:
        """{task: reason} for the tasks of the data with no record left to grade."""
        scored = {record.task for record in self.records}
        return {
            task: "no scored rows (--allow-missing left every row out)"
            for task in self.incomplete
            if task not in scored
        }


def _cell_counts(
    records: list[DataRecord], predicted: set[str]
) -> dict[tuple[str, str], list[int]]:
    """(task, label) -> [rows, rows with a prediction], in data order."""
    counts: dict[tuple[str, str], list[int]] = {}
    for record in records:
        cell = counts.setdefault((record.task, record.label), [0, 0])
        cell[0] += 1
        cell[1] += record.id in predicted
    return counts


def _short_cells(
    records: list[DataRecord], answered: set[str], failed: bool
) -> tuple[int, int, str]:
    """(records not in ``answered``, cells with such records, ``task label N of M rows, ...``) where
    N counts the answered records, or with ``failed`` the others (``N of M rows failed``)."""
    short = [
        (cell, rows, done)
        for cell, (rows, done) in _cell_counts(records, answered).items()
        if done < rows
    ]
    shown = ", ".join(
        f"{task} {label} {rows - done} of {rows} rows failed"
        if failed
        else f"{task} {label} {done} of {rows} rows"
        for (task, label), rows, done in short[:_SHOWN_CELLS]
    )
    more = f" and {len(short) - _SHOWN_CELLS} more" if len(short) > _SHOWN_CELLS else ""
    return sum(rows - done for _, rows, done in short), len(short), shown + more


def refuse_failed(records: list[DataRecord], failed: set[str], source: object, retry: str) -> None:
    """Raise a one-line :class:`UserError` naming the cells whose requests failed (``prediction``
    null) and how to redo them (``retry``): a failed request is a missing answer, never a zero."""
    count, cells, shown = _short_cells(
        records, {record.id for record in records} - failed, failed=True
    )
    if not count:
        return
    raise UserError(
        f"predictions {source}: {count} of {len(records)} requests failed (prediction null), in "
        f"{cells} task and length cells ({shown}); {retry}, "
        "or pass --allow-missing to leave them out like missing rows (never as zeros)"
    )


def refuse_incomplete(records: list[DataRecord], predicted: set[str], source: object) -> None:
    """Raise a one-line :class:`UserError` naming the cells where some record has no prediction."""
    missing, cells, shown = _short_cells(records, predicted, failed=False)
    if not missing:
        return
    raise UserError(
        f"predictions {source} are incomplete: {missing} of {len(records)} records have no "
        f"prediction, in {cells} task and length cells ({shown}); complete the run, choose "
        "what to score with --tasks/--lengths, or pass --allow-missing to "
        "score only the rows predicted at every length (never as zeros)"
    )


def select_rows(
    records: list[DataRecord], predicted: set[str], mode: str, failed: frozenset[str] = frozenset()
) -> RowSelection:
    """The records to grade under ``mode`` (``paired`` or ``per-length``; see the module
    docstring): those in ``predicted`` (answered); ``failed`` names the records whose request
    failed, counted apart from the missing ones."""
    if mode not in MISSING_ROWS_MODES:
        raise UserError(f"--missing-rows {mode}: choose from {', '.join(MISSING_ROWS_MODES)}")
    counts = _cell_counts(records, predicted)
    left_out = [cell for cell, (_, done) in counts.items() if done == 0]
    empty = set(left_out)
    unpaired: dict[str, set[int]] = defaultdict(set)
    for record in records:
        if record.id not in predicted and (record.task, record.label) not in empty:
            unpaired[record.task].add(record.row)
    kept = [
        record
        for record in records
        if record.id in predicted
        and (mode == "per-length" or record.row not in unpaired[record.task])
    ]
    scored = _cell_counts(kept, predicted)
    incomplete: dict[str, dict[str, dict[str, int]]] = {}
    for (task, label), (rows, done) in counts.items():
        kept_rows = scored.get((task, label), [0, 0])[0]
        if kept_rows < rows:
            incomplete.setdefault(task, {})[label] = {
                "rows": rows,
                "predicted": done,
                "scored": kept_rows,
            }
    failures = sum(record.id in failed for record in records)
    missing = sum(record.id not in predicted for record in records) - failures
    return RowSelection(kept, missing, failures, left_out, incomplete)


def rows_scored_text(labels: dict[str, dict[str, int]]) -> str:
    """``2k 2 of 3, 4k 2 of 3``: the rows scored of each incomplete length of one task."""
    return ", ".join(
        f"{label} {cell['scored']} of {cell['rows']}" for label, cell in labels.items()
    )


def coverage_lines(selection: RowSelection, mode: str) -> list[str]:
    """The terminal lines that say how many rows each incomplete figure rests on."""
    return [
        f"{task}: rows scored {rows_scored_text(labels)} (--allow-missing, {mode}; "
        "missing predictions and failed requests are not scored)"
        for task, labels in selection.incomplete.items()
    ]
