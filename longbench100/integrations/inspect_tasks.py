"""longbench100 data as an Inspect task: ``inspect eval longbench100/longbench100 -T data=DATA --model M``.

(From a source checkout, ``inspect eval longbench100/integrations/inspect_tasks.py -T data=DATA`` works too.) Each
data record becomes one Inspect sample: the stored prompt as the user message, the record's answer
room as ``max_tokens``, and a scorer that grades the reply with the task's classic metric through the
same code as ``score --metric classic``. ``score --predictions LOGS`` reads the eval logs back for
judges, Base Ability, LongScore and the report. Needs ``pip install inspect-ai``.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length_list
from longbench100.folders.data_records import data_files, parse_record, read_jsonl, read_manifest
from longbench100.scoring.grading import GradeJob, choose_metrics, classic_grades
from longbench100.catalog.suites import recorded_suite
from longbench100.catalog.task_info import answer_room, parse_task_list


def _comma_list(value: str | list[str]) -> str:
    """``-T tasks=a,b`` reaches a task as a list; a Python caller may pass one comma-separated string."""
    return value if isinstance(value, str) else ",".join(str(item) for item in value)


def data_samples(data: str | Path, tasks: str | list[str] = "all", lengths: str | list[str] | None = None) -> list[Sample]:
    """Inspect samples for the records of ``data`` (``tasks``: ``all`` or task names; ``lengths``: length
    labels, default every file), in the data folder's order."""
    folder = Path(data)
    wanted_tasks = set(parse_task_list(_comma_list(tasks)))
    wanted_labels = {label for label, _ in parse_length_list(_comma_list(lengths))} if lengths else None
    suite = recorded_suite(read_manifest(folder))
    chosen = []
    for file in data_files(folder):
        for where, value in read_jsonl(file):
            record = parse_record(value, where)
            wanted = wanted_labels is None or record.label in wanted_labels
            if record.task in wanted_tasks and wanted:
                chosen.append((record, value))
    if not chosen:
        raise UserError(f"{folder}: no records of the selected tasks and lengths")
    metrics = choose_metrics(sorted({record.task for record, _ in chosen}), "classic", False,
                             families=suite["metrics"] if suite else None)
    samples = []
    for record, value in chosen:
        answer_tokens = (record.gold or {}).get("answer_tokens")
        room = answer_room(record.task, answer_tokens if isinstance(answer_tokens, int) else None)
        samples.append(Sample(
            id=record.id, input=value["prompt"], target=list(record.answers),
            metadata={"task": record.task, "label": record.label, "max_tokens": room,
                      "record": json.dumps(value, ensure_ascii=False),
                      "metric": metrics[record.task]},
        ))
    return samples


@solver
def answer_with_room():
    """Generate once, with the record's own answer room as ``max_tokens`` (as ``predict`` sends it)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, max_tokens=state.metadata["max_tokens"])

    return solve


@scorer(metrics=[mean(), stderr()])
def longbench100_metric():
    """The record's classic metric (as ``score --metric classic``), 0-1."""

    async def score(state: TaskState, target: Target) -> Score:
        record = parse_record(json.loads(state.metadata["record"]), str(state.sample_id))
        reply = state.output.completion
        [value] = classic_grades([GradeJob(record, state.metadata["metric"], reply)])
        return Score(value=value, answer=reply, metadata={"metric": state.metadata["metric"]})

    return score


@task
def longbench100(data: str, tasks: str | list[str] = "all", lengths: str | list[str] | None = None) -> Task:
    """Every record of the data folder ``data`` (optionally only ``tasks`` and ``lengths``) as one Inspect task."""
    return Task(dataset=MemoryDataset(data_samples(data, tasks, lengths), name=Path(data).name),
                solver=answer_with_room(), scorer=longbench100_metric())
