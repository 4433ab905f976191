"""``export lm-eval``: a data folder as lm-evaluation-harness tasks, one per task and length, grouped per suite.

The export folder is what ``lm_eval --include_path OUT`` reads: one YAML file per task and length
(``longbench100_<task>_<label>``), one group YAML per suite (``longbench100_<suite>``), the documents
as JSONL under ``docs/`` (prompt, metric, the whole record) and a tiny hooks module that hands grading
to :mod:`longbench100.integrations.lm_eval_hooks`. lm-eval then prints our per-task scores (the
classic metric, as ``score --metric classic``); ``score --predictions`` reads its ``--log_samples``
output for judges, LongScore and the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from longbench100.core.atomic import write_bytes_atomic
from longbench100.folders.layout import DataFileRef, controls_folder, list_data_files
from longbench100.core.errors import UserError
from longbench100.folders.data_records import parse_record, read_jsonl, read_manifest
from ..scoring.grading import choose_metrics
from longbench100.catalog.suites import group_by_suite, recorded_suite
from longbench100.catalog.task_info import answer_room

TASK_PREFIX = "longbench100"
CONTROLS_SUFFIX = "_controls"
HOOKS_MODULE = "longbench100_hooks"
_HOOKS_SOURCE = '''"""Written by `longbench100 export lm-eval`: lm-eval loads this file next to the task YAMLs."""

from longbench100.integrations.lm_eval_hooks import doc_to_text, process_results  # noqa: F401
'''


@dataclass(frozen=True)
class ExportedTask:
    """One lm-eval task written by the export: its name, our task and length, documents and answer room."""

    name: str
    task: str
    label: str
    documents: int
    max_gen_toks: int


def lm_eval_task_name(task: str, label: str) -> str:
    """The lm-eval task name of one of our tasks at one length: ``longbench100_<task>_<label>``."""
    return f"{TASK_PREFIX}_{task}_{label}"


def export_lm_eval(data_dir: Path, out_dir: Path, controls: bool = False) -> tuple[list[ExportedTask], dict[str, list[str]]]:
    """Write the lm-eval tasks of every data file under ``data_dir`` into ``out_dir``; with
    ``controls``, those of its control twins too (``longbench100_<task>_<label>_controls``, group
    ``longbench100_controls``).

    Returns the exported tasks and the groups (group name -> task names). A task's ``max_gen_toks``
    is the largest answer room of its records (lm-eval sets generation per task, not per document).
    """
    files = list_data_files(data_dir)
    if not files:
        raise UserError(f"{data_dir}: no <task>/<label>.jsonl data files to export")
    twins = controls_folder(data_dir)
    if controls and not twins.is_dir():
        raise UserError(f"--controls: {data_dir} holds no control twins ({twins}); generate writes them unless --no-controls")
    suite = recorded_suite(read_manifest(data_dir))
    metrics = choose_metrics(sorted({ref.task for ref in files}), "classic", False, families=suite["metrics"] if suite else None)
    exported = _export_files(files, metrics, out_dir, "")
    groups = _groups(exported, suite)
    if controls:
        twin_tasks = _export_files(list_data_files(twins, sorted(metrics)), metrics, out_dir, CONTROLS_SUFFIX)
        groups[f"{TASK_PREFIX}{CONTROLS_SUFFIX}"] = [task.name for task in twin_tasks]
        exported += twin_tasks
    for group, members in groups.items():
        write_bytes_atomic(out_dir / f"{group}.yaml", _group_yaml(group, members).encode("utf-8"))
    write_bytes_atomic(out_dir / f"{HOOKS_MODULE}.py", _HOOKS_SOURCE.encode("utf-8"))
    return exported, groups


def _export_files(files: list[DataFileRef], metrics: dict[str, str], out_dir: Path, suffix: str) -> list[ExportedTask]:
    """Write one lm-eval task per data file (its name ending in ``suffix``) and its documents."""
    exported = []
    for ref in files:
        lines, rooms = [], []
        for where, value in read_jsonl(ref.path):
            record = parse_record(value, where)
            answer_tokens = (record.gold or {}).get("answer_tokens")
            rooms.append(answer_room(ref.task, answer_tokens if isinstance(answer_tokens, int) else None))
            document = {"id": record.id, "prompt": value["prompt"], "target": (record.answers or ("",))[0],
                        "metric": metrics[ref.task], "record": json.dumps(value, ensure_ascii=False)}
            lines.append(json.dumps(document, ensure_ascii=False) + "\n")
        if not lines:
            continue
        documents = out_dir / "docs" / ref.task / f"{ref.label}{suffix}.jsonl"
        documents.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(documents, "".join(lines).encode("utf-8"))
        task = ExportedTask(lm_eval_task_name(ref.task, ref.label) + suffix, ref.task, ref.label, len(lines), max(rooms))
        write_bytes_atomic(out_dir / f"{task.name}.yaml", _task_yaml(task, documents.resolve()).encode("utf-8"))
        exported.append(task)
    return exported


def _groups(exported: list[ExportedTask], suite: dict | None) -> dict[str, list[str]]:
    """One group per suite the exported tasks belong to: ``longbench100_<suite>`` -> its lm-eval tasks."""
    by_suite = group_by_suite(sorted({task.task for task in exported}, key=[t.task for t in exported].index), suite)
    return {f"{TASK_PREFIX}_{name}": [task.name for task in exported if task.task in members]
            for name, members in by_suite.items()}


def _task_yaml(task: ExportedTask, documents: Path) -> str:
    """The YAML of one lm-eval task (written by hand: the ``!function`` tags are not plain YAML)."""
    return f"""# Written by `longbench100 export lm-eval`: {task.task} at {task.label}, {task.documents} documents.
task: {task.name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {json.dumps(str(documents))}
test_split: test
output_type: generate_until
doc_to_text: !function {HOOKS_MODULE}.doc_to_text
doc_to_target: target
process_results: !function {HOOKS_MODULE}.process_results
generation_kwargs:
  until: []
  max_gen_toks: {task.max_gen_toks}
  do_sample: false
  temperature: 0
metric_list:
  - metric: score
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def _group_yaml(group: str, members: list[str]) -> str:
    """The YAML of one group: its tasks and the mean of their scores (each task weighs the same)."""
    tasks = "".join(f"  - {name}\n" for name in members)
    return f"""# Written by `longbench100 export lm-eval`: every exported task of this suite.
group: {group}
task:
{tasks}aggregate_metric_list:
  - metric: score
    aggregation: mean
    weight_by_size: false
metadata:
  version: 1.0
"""
