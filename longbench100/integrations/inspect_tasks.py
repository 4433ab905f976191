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
from longbench100.folders.layout import controls_folder
from longbench100.scoring.grading import GradeJob, choose_metrics, grade_jobs
from longbench100.catalog.suites import recorded_suite
from longbench100.catalog.task_info import answer_room, parse_task_list


def _comma_list(value: str | list[str]) -> str:
    """``-T tasks=a,b`` reaches a task as a list; a Python caller may pass one comma-separated string."""
    return value if isinstance(value, str) else ",".join(str(item) for item in value)


def data_samples(data: str | Path, tasks: str | list[str] = "all", lengths: str | list[str] | None = None,
                 controls: bool = False) -> list[Sample]:
    """Inspect samples for the records of ``data`` (``tasks``: ``all`` or task names; ``lengths``:
    length labels, default every file), in the data folder's order; with ``controls``, its control
    twins after them."""
    folder = Path(data)
    wanted_tasks = set(parse_task_list(_comma_list(tasks)))
    wanted_labels = {label for label, _ in parse_length_list(_comma_list(lengths))} if lengths else None
    suite = recorded_suite(read_manifest(folder))
    samples = []
    files = data_files(folder)
    if controls:
        if not controls_folder(folder).is_dir():
            raise UserError(f"controls: {folder} holds no control twins ({controls_folder(folder)}); generate writes them")
        files += data_files(controls_folder(folder))
    for file in files:
        for where, value in read_jsonl(file):
            record = parse_record(value, where)
            if record.task not in wanted_tasks or (wanted_labels is not None and record.label not in wanted_labels):
                continue
            answer_tokens = (record.gold or {}).get("answer_tokens")
            samples.append(Sample(
                id=record.id, input=value["prompt"], target=list(record.answers),
                metadata={"task": record.task, "label": record.label,
                          "max_tokens": answer_room(record.task, answer_tokens if isinstance(answer_tokens, int) else None),
                          "record": json.dumps(value, ensure_ascii=False)},
            ))
    if not samples:
        raise UserError(f"{folder}: no records of the selected tasks and lengths")
    metrics = choose_metrics(sorted({sample.metadata["task"] for sample in samples}), "classic", False,
                             families=suite["metrics"] if suite else None)
    for sample in samples:
        sample.metadata["metric"] = metrics[sample.metadata["task"]]
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
        [value] = grade_jobs([GradeJob(record, state.metadata["metric"], reply)], None, progress=False)
        return Score(value=float(value), answer=reply, metadata={"metric": state.metadata["metric"]})

    return score


@task
def longbench100(data: str, tasks: str | list[str] = "all", lengths: str | list[str] | None = None,
                 controls: bool = False) -> Task:
    """Every record of the data folder ``data`` (optionally only ``tasks`` and ``lengths``; with
    ``controls``, and its control twins: ``-T controls=true``) as one Inspect task."""
    return Task(dataset=MemoryDataset(data_samples(data, tasks, lengths, controls), name=Path(data).name),
                solver=answer_with_room(), scorer=longbench100_metric())
