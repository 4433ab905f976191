"""The functions an exported lm-evaluation-harness task calls (its YAML names them with
``!function``).

Each exported document holds the data record's prompt, its length label, the metric ``score --metric
classic`` grades it with, and the whole record as JSON text, so grading here is the same code as
``score``.
"""

from __future__ import annotations

import json
from pathlib import Path

from longbench100.folders.data_records import parse_record

from ..scoring.grading import GradeJob, classic_grades
from .metric_names import harness_metric_name, length_metric_name


def load_documents(path: Path) -> dict:
    """The documents of one exported task as lm-eval's ``custom_dataset``: ``{"test": Dataset}``."""
    # lm-eval's own dependency, present wherever lm-eval runs
    from datasets import Dataset  # noqa: PLC0415

    with path.open(encoding="utf-8") as handle:
        return {"test": Dataset.from_list([json.loads(line) for line in handle if line.strip()])}


def doc_to_text(doc: dict) -> str:
    """The prompt exactly as stored in the data record (no template, no added whitespace)."""
    return doc["prompt"]


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    """Grade the model's reply with the record's metric, under the metric's name and its name at
    this length (``{"acc": 1.0, "acc_8k": 1.0}``, 0-1)."""
    record = parse_record(json.loads(doc["record"]), doc["id"])
    [score] = classic_grades([GradeJob(record, doc["metric"], results[0])])
    return {
        harness_metric_name(doc["metric"]): score,
        length_metric_name(doc["metric"], doc["label"]): score,
    }
