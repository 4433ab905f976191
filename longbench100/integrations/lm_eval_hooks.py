"""The functions an exported lm-evaluation-harness task calls (its YAML names them with ``!function``).

Each exported document holds the data record's prompt, the metric ``score --metric classic`` grades
it with, and the whole record as JSON text, so grading here is the same code as ``score``.
"""

from __future__ import annotations

import json

from longbench100.folders.data_records import parse_record
from ..scoring.grading import GradeJob, classic_grades


def doc_to_text(doc: dict) -> str:
    """The prompt exactly as stored in the data record (no template, no added whitespace)."""
    return doc["prompt"]


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    """Grade the model's reply with the record's metric: ``{"score": 0-1}``."""
    record = parse_record(json.loads(doc["record"]), doc["id"])
    [score] = classic_grades([GradeJob(record, doc["metric"], results[0])])
    return {"score": score}
