"""``label_match``: the ICL tasks' metric (tasks/icl.py): the reply's label number equals the sample's mapped label.

Real replies are not always a bare number: "label: 12", "The label is 12.", "**Label:** 12", or the
number followed by more invented examples ("12\n\ntext: ...\nlabel: 40"). The parser reads the reply
up to the first invented example that follows it; within that part an explicit "label ... N" cue
wins, else the first integer counts. Reasoning blocks (``<think>...</think>``) are ignored.
"""

from __future__ import annotations

import re

from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.text.answers import strip_reasoning

_LABEL_CUE = re.compile(
    r"\blabel\b[\s*_]*(?:number\s*)?(?:is\b|:|=|would\s+be\b|should\s+be\b)?[\s\"'*_`]*(\d+)",
    re.IGNORECASE,
)
_INTEGER = re.compile(r"(?<![\d.])\d+(?!\d)")
_NEW_EXAMPLE = re.compile(r"^[ \t]*text[ \t]*:", re.IGNORECASE | re.MULTILINE)


def parse_label(reply: str) -> int | None:
    """The label number ``reply`` gives, or ``None`` when it gives none.

    The reply is cut into parts at lines that open a new "text:" example; the first part that holds
    a number decides: its first "label ... N" cue, else its first integer.
    """
    text = strip_reasoning(reply)
    starts = [0] + [match.start() for match in _NEW_EXAMPLE.finditer(text) if match.start() > 0]
    for start, end in zip(starts, starts[1:] + [len(text)]):
        part = text[start:end]
        found = _LABEL_CUE.search(part) or _INTEGER.search(part)
        if found:
            return int(found.group(found.lastindex or 0))
    return None


def label_match(prediction: str, record: DataRecord) -> float:
    """1.0 when the reply's label number equals ``gold["mapped_label"]``, else 0.0."""
    gold = record.gold or {}
    if not isinstance(gold.get("mapped_label"), int):
        raise UserError(
            f"record {record.id}: gold has no integer mapped_label, which label_match needs (regenerate the data)"
        )
    return 1.0 if parse_label(prediction) == gold["mapped_label"] else 0.0
