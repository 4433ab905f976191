"""``export lm-eval``: a data folder as lm-evaluation-harness tasks, one per task and length, grouped per suite.

The export folder is what ``lm_eval --include_path OUT`` reads: one YAML file per task and length
(``longbench100_<task>_<label>``), one group per task over its lengths (``longbench100_<task>``),
one group per suite over those (``longbench100_<suite>``), the documents as JSONL under ``docs/``
(prompt, length, metric, the whole record) and a tiny hooks module that loads them relative to its
own folder (so the export can be moved or shared) and hands grading to
:mod:`longbench100.integrations.lm_eval_hooks`. Each task reports its metric by what it is
(``acc``, ``f1``, ``rouge_l``, ``ndcg@10``, ...) and again per length (``acc_8k``); a suite group
averages each metric over its tasks, overall and per length, and never mixes two metrics.
``score --predictions`` reads lm-eval's ``--log_samples`` output for judges, LongScore and the
report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from longbench100.catalog.suites import group_by_suite, recorded_suite
from longbench100.catalog.task_info import answer_room
from longbench100.core.atomic import write_bytes_atomic
from longbench100.core.errors import UserError
from longbench100.folders.data_records import parse_record
from longbench100.folders.guard import mark_folder, replace_outputs
from longbench100.folders.layout import (
    DataFileRef,
    controls_folder,
    open_data_folder,
    read_jsonl,
)

from ..scoring.grading import choose_metrics
from .metric_names import harness_metric_name, length_metric_name

TASK_PREFIX = "longbench100"
CONTROLS_SUFFIX = "_controls"
HOOKS_MODULE = "longbench100_hooks"
_HOOKS_SOURCE = '''"""Written by `longbench100 export lm-eval`: lm-eval loads this file next to the task YAMLs."""

from pathlib import Path

from longbench100.integrations.lm_eval_hooks import (  # noqa: F401
    doc_to_text,
    load_documents,
    process_results,
)


def load_docs(documents: str, **_metadata) -> dict:
    """One task's documents, named relative to this folder (lm-eval's custom_dataset)."""
    return load_documents(Path(__file__).parent / documents)
'''


@dataclass(frozen=True)
class ExportedTask:
    """One lm-eval task written by the export: its name, our task and length, documents, answer
    room and metric."""

    name: str
    task: str
    label: str
    documents: int
    max_gen_toks: int
    metric: str = ""


def lm_eval_task_name(task: str, label: str) -> str:
    """The lm-eval task name of one of our tasks at one length: ``longbench100_<task>_<label>``."""
    return f"{TASK_PREFIX}_{task}_{label}"


def export_lm_eval(
    data_dir: Path, out_dir: Path, controls: bool = False
) -> tuple[list[ExportedTask], dict[str, list[str]]]:
    """Write the lm-eval tasks of every data file under ``data_dir`` into ``out_dir``; with
    ``controls``, those of its control twins too (``longbench100_<task>_<label>_controls``, group
    ``longbench100_controls``).

    Returns the exported tasks and the groups (group name -> task names). A task's ``max_gen_toks``
    is the largest answer room of its records (lm-eval sets generation per task, not per document).
    """
    folder = open_data_folder(data_dir, "DATA")
    files = folder.files
    twins = controls_folder(data_dir)
    if controls and not twins.is_dir():
        raise UserError(
            f"--controls: {data_dir} holds no control twins ({twins}); generate writes them unless --no-controls"
        )
    twin_files = open_data_folder(twins, "--controls").files if controls else []
    mark_folder(out_dir, "lm-eval-export")  # only once the data is known to be whole
    suite = recorded_suite(folder.manifest)
    metrics = choose_metrics(
        sorted({ref.task for ref in files}),
        "classic",
        False,
        families=suite["metrics"] if suite else None,
    )
    written: list[Path] = []

    def write(path: Path, text: str) -> None:
        """Write one file of the export and remember it."""
        write_bytes_atomic(path, text.encode("utf-8"))
        written.append(path)

    exported = _export_files(files, metrics, out_dir, "", write)
    groups = _groups(exported, suite)
    for task_name, metric in dict.fromkeys((task.task, task.metric) for task in exported):
        members = [task.name for task in exported if task.task == task_name]
        yaml = _group_yaml(task_group_name(task_name), members, [harness_metric_name(metric)])
        write(out_dir / f"{task_group_name(task_name)}.yaml", yaml)
    for group, members in groups.items():
        tasks = [task for task in exported if task_group_name(task.task) in members]
        yaml = _group_yaml(group, members, _suite_metric_names(tasks))
        write(out_dir / f"{group}.yaml", yaml)
    if controls:
        twin_tasks = _export_files(
            [ref for ref in twin_files if ref.task in metrics],
            metrics,
            out_dir,
            CONTROLS_SUFFIX,
            write,
        )
        group = f"{TASK_PREFIX}{CONTROLS_SUFFIX}"
        groups[group] = [task.name for task in twin_tasks]
        yaml = _group_yaml(group, groups[group], _suite_metric_names(twin_tasks))
        write(out_dir / f"{group}.yaml", yaml)
        exported += twin_tasks
    write(out_dir / f"{HOOKS_MODULE}.py", _HOOKS_SOURCE)
    replace_outputs(out_dir, written)  # a YAML of an earlier export's other data goes
    return exported, groups


def _export_files(
    files: list[DataFileRef],
    metrics: dict[str, str],
    out_dir: Path,
    suffix: str,
    write: Callable[[Path, str], None],
) -> list[ExportedTask]:
    """Write one lm-eval task per data file (its name ending in ``suffix``) and its documents, each
    file through ``write``."""
    exported = []
    for ref in files:
        lines, rooms = [], []
        for where, value in read_jsonl(ref.path):
            record = parse_record(value, where)
            answer_tokens = (record.gold or {}).get("answer_tokens")
            rooms.append(
                answer_room(ref.task, answer_tokens if isinstance(answer_tokens, int) else None)
            )
            document = {
                "id": record.id,
                "prompt": value["prompt"],
                "label": ref.label,
                "target": (record.answers or ("",))[0],
                "metric": metrics[ref.task],
                "record": json.dumps(value, ensure_ascii=False),
            }
            lines.append(json.dumps(document, ensure_ascii=False) + "\n")
        if not lines:
            continue
        documents = out_dir / "docs" / ref.task / f"{ref.label}{suffix}.jsonl"
        documents.parent.mkdir(parents=True, exist_ok=True)
        write(documents, "".join(lines))
        task = ExportedTask(
            lm_eval_task_name(ref.task, ref.label) + suffix,
            ref.task,
            ref.label,
            len(lines),
            max(rooms),
            metrics[ref.task],
        )
        yaml = _task_yaml(task, documents.relative_to(out_dir).as_posix())
        write(out_dir / f"{task.name}.yaml", yaml)
        exported.append(task)
    return exported


def task_group_name(task: str) -> str:
    """The lm-eval group of one of our tasks over its lengths: ``longbench100_<task>``."""
    return f"{TASK_PREFIX}_{task}"


def _groups(exported: list[ExportedTask], suite: dict | None) -> dict[str, list[str]]:
    """One group per suite the exported tasks belong to: ``longbench100_<suite>`` -> its task
    groups, in data order."""
    tasks = list(dict.fromkeys(task.task for task in exported))
    return {
        f"{TASK_PREFIX}_{name}": [task_group_name(task) for task in tasks if task in members]
        for name, members in group_by_suite(tasks, suite).items()
    }


def _suite_metric_names(tasks: list[ExportedTask]) -> list[str]:
    """The metrics a suite group averages: each metric of its tasks, then each metric at each
    length."""
    overall = [harness_metric_name(task.metric) for task in tasks]
    per_length = [length_metric_name(task.metric, task.label) for task in tasks]
    return list(dict.fromkeys(overall + per_length))


def _task_yaml(task: ExportedTask, documents: str) -> str:
    """The YAML of one lm-eval task (written by hand: the ``!function`` tags are not plain YAML);
    ``documents`` is the documents file relative to the export folder."""
    metrics = "".join(
        f"""  - metric: "{name}"
    aggregation: mean
    higher_is_better: true
"""
        for name in (harness_metric_name(task.metric), length_metric_name(task.metric, task.label))
    )
    return f"""# Written by `longbench100 export lm-eval`: {task.task} at {task.label}, {task.documents} documents.
task: {task.name}
dataset_path: ""
custom_dataset: !function {HOOKS_MODULE}.load_docs
dataset_kwargs:
  documents: {json.dumps(documents)}
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
{metrics}metadata:
  version: 2.0
"""


def _group_yaml(group: str, members: list[str], metric_names: list[str]) -> str:
    """The YAML of one group: its members and the mean of each named metric over the tasks that
    report it (each task weighs the same)."""
    tasks = "".join(f"  - {name}\n" for name in members)
    metrics = "".join(
        f"""  - metric: "{name}"
    aggregation: mean
    weight_by_size: false
"""
        for name in metric_names
    )
    return f"""# Written by `longbench100 export lm-eval`: {group}, each metric's mean.
group: {group}
task:
{tasks}aggregate_metric_list:
{metrics}metadata:
  version: 2.0
"""
