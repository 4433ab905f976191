"""longbench100 data as an Inspect task: ``inspect eval longbench100/longbench100 -T data=DATA
--model M``.

(From a source checkout, ``inspect eval longbench100/integrations/inspect_tasks.py -T data=DATA`` works too.)
``DATA`` is a data folder or a published snapshot folder (``publish``'s Parquet files, checked
against their checksums). Each data record becomes one Inspect sample: the stored prompt as the user
message and, as metadata, only what grouping needs (task, length); the scorer grades the reply with
the task's classic metric through the same code as ``score --metric classic`` and reports means per
task and per length. Generation is greedy (temperature 0) with the record's own answer room as
``max_tokens``, as ``predict`` sends it; Inspect's ``--temperature`` and ``--max-tokens`` (or a
``GenerateConfig``) override both. ``score --predictions LOGS`` reads the eval logs back (every
epoch) for judges, Base Ability, LongScore and the report. Needs ``pip install
'longbench100[inspect]'``.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.scorer import Score, Target, grouped, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from longbench100.catalog.suites import recorded_suite
from longbench100.catalog.task_info import answer_room, parse_task_list
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length_list
from longbench100.folders.data_records import DataRecord, parse_record
from longbench100.folders.layout import (
    SNAPSHOT_GENERATION_MANIFEST,
    controls_folder,
    first_rows,
    open_data_folder,
    read_jsonl,
)
from longbench100.integrations.metric_names import harness_metric_name
from longbench100.scoring.grading import GradeJob, choose_metrics, classic_grades


def _comma_list(value: str | list[str]) -> str:
    """``-T tasks=a,b`` reaches a task as a list; a Python caller may pass one comma-separated
    string."""
    return value if isinstance(value, str) else ",".join(str(item) for item in value)


def _folder_values(
    folder: Path, controls: bool = False
) -> tuple[list[tuple[str, dict]], dict | None]:
    """Every record of a data folder or a published snapshot folder as (where, decoded record), and
    its generation manifest; with ``controls``, the control twins after the records."""
    if (folder / SNAPSHOT_GENERATION_MANIFEST).is_file():
        # only snapshots need pyarrow
        from longbench100.publish.checksums import record_files, verify_snapshot  # noqa: PLC0415
        from longbench100.publish.parquet import read_records  # noqa: PLC0415

        manifest = verify_snapshot(folder)
        values = [
            (f"{folder / relative}:{number}", value)
            for relative in record_files(folder, manifest, controls, "-T controls")
            for number, value in enumerate(read_records(folder / relative), start=1)
        ]
        return values, json.loads(
            (folder / SNAPSHOT_GENERATION_MANIFEST).read_text(encoding="utf-8")
        )
    checked = open_data_folder(folder, "-T data")
    files = checked.files
    if controls:
        twins = controls_folder(folder)
        if not twins.is_dir():
            raise UserError(
                f"-T controls: {folder} holds no control twins ({twins}); generate writes them"
            )
        files = files + open_data_folder(twins, "-T controls").files
    return [pair for ref in files for pair in read_jsonl(ref.path)], checked.manifest


def selected_records(
    data: str | Path,
    tasks: str | list[str] = "all",
    lengths: str | list[str] | None = None,
    rows: int | None = None,
    controls: bool = False,
) -> tuple[list[tuple[DataRecord, dict]], dict[str, str]]:
    """The records of ``data`` (``tasks``: ``all`` or task names; ``lengths``: length labels,
    default every file; ``rows``: the first rows of each task and length; ``controls``: the control
    twins too), in the folder's order, each with its decoded JSON, and the classic metric of each
    task."""
    folder = Path(data)
    if not folder.is_dir():
        raise UserError(f"-T data={data}: no such folder")
    if rows is not None and int(rows) < 1:
        raise UserError(f"-T rows={rows}: give 1 or more rows per task and length")
    wanted_tasks = set(parse_task_list(_comma_list(tasks)))
    wanted_labels = (
        {label for label, _ in parse_length_list(_comma_list(lengths))} if lengths else None
    )
    values, manifest = _folder_values(folder, bool(controls))
    chosen = []
    for where, value in values:
        record = parse_record(value, where)
        if record.task in wanted_tasks and (wanted_labels is None or record.label in wanted_labels):
            chosen.append((record, value))
    if rows is not None:
        kept = {record.id for record in first_rows([record for record, _ in chosen], int(rows))}
        chosen = [(record, value) for record, value in chosen if record.id in kept]
    if not chosen:
        raise UserError(f"{folder}: no records of the selected tasks and lengths")
    suite = recorded_suite(manifest)
    metrics = choose_metrics(
        sorted({record.task for record, _ in chosen}),
        "classic",
        False,
        families=suite["metrics"] if suite else None,
    )
    return chosen, metrics


def data_samples(
    data: str | Path,
    tasks: str | list[str] = "all",
    lengths: str | list[str] | None = None,
    rows: int | None = None,
) -> list[Sample]:
    """Inspect samples for the records :func:`selected_records` chooses: the prompt as input, the
    answers as target, and as metadata the task, the length and the answer room (never the prompt or
    the record)."""
    return _samples(selected_records(data, tasks, lengths, rows)[0])


def _samples(chosen: list[tuple[DataRecord, dict]]) -> list[Sample]:
    """One Inspect sample per chosen record (see :func:`data_samples`)."""
    return [
        Sample(
            id=record.id,
            input=value["prompt"],
            target=list(record.answers),
            metadata={"task": record.task, "length": record.label, "max_tokens": _room(record)},
        )
        for record, value in chosen
    ]


def _room(record: DataRecord) -> int:
    """The record's answer room: its ``gold.answer_tokens`` through the task's rule, as ``predict``
    sends it."""
    answer_tokens = (record.gold or {}).get("answer_tokens")
    return answer_room(record.task, answer_tokens if isinstance(answer_tokens, int) else None)


@solver
def answer_with_room():
    """Generate once with the record's own answer room as ``max_tokens``, unless the run sets
    ``--max-tokens``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if active_generate_config().max_tokens is not None:
            return await generate(state)
        return await generate(state, max_tokens=state.metadata["max_tokens"])

    return solve


@scorer(metrics=[grouped(mean(), "task", all="samples"), grouped(mean(), "length", all=False)])
def longbench100_metric(
    data: str,
    tasks: str | list[str] = "all",
    lengths: str | list[str] | None = None,
    rows: int | None = None,
    controls: bool = False,
):
    """The record's classic metric (as ``score --metric classic``), 0-1. The scorer reads the
    records of the task's selection itself: Inspect logs a scorer's arguments, so they name the
    data rather than hold it."""
    chosen, metrics = selected_records(data, tasks, lengths, rows, controls)
    records = {record.id: record for record, _ in chosen}

    async def score(state: TaskState, target: Target) -> Score:
        record = records[str(state.sample_id)]
        reply = state.output.completion
        [value] = classic_grades([GradeJob(record, metrics[record.task], reply)])
        return Score(
            value=value,
            answer=reply,
            metadata={"metric": harness_metric_name(metrics[record.task])},
        )

    return score


@task
def longbench100(
    data: str | None = None,
    tasks: str | list[str] = "all",
    lengths: str | list[str] | None = None,
    rows: int | None = None,
    controls: bool = False,
) -> Task:
    """Every record of the data folder or snapshot ``data`` (optionally only ``tasks``, ``lengths``
    and the first ``rows`` of each task and length; with ``controls``, the control twins too:
    ``-T controls=true``) as one Inspect task: greedy, each record's answer room."""
    if data is None:
        raise PrerequisiteError(
            "longbench100: give the data folder: -T data=DATA (a generated data folder "
            "or a published snapshot)"
        )
    try:
        chosen, _ = selected_records(data, tasks, lengths, rows, controls)
    except UserError as error:
        raise PrerequisiteError(f"longbench100: {error}") from None
    return Task(
        dataset=MemoryDataset(_samples(chosen), name=Path(data).name),
        solver=answer_with_room(),
        scorer=longbench100_metric(str(data), tasks, lengths, rows, controls),
        config=GenerateConfig(temperature=0),
    )
