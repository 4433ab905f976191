"""The ``name_set_f1`` metric (recalling): F1 of the names (or references) a reply lists against the record's gold.

As ETHIC scores recalling: the reply is split into items on commas, semicolons and line breaks (list
markers, numbering and a leading "Names:" or "References:" dropped), each item and each gold name is normalised the
SQuAD way (lower case, no punctuation or articles, single spaces), and F1 is taken over the two sets.
Reasoning blocks are ignored; an empty reply scores 0 (1 only when the gold is empty too).
"""

from __future__ import annotations

import re

from longbench100.catalog.entities import reply_label_pattern
from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.text.answers import normalize_answer, strip_reasoning

_SEPARATOR = re.compile(r"[,;\n]")
_MARKER = re.compile(rf"^\s*(?:[-*•]|\d+[.)]|(?:{reply_label_pattern()})\s*:)\s*", re.IGNORECASE)


def reply_names(reply: str) -> set[str]:
    """The normalised names a reply lists."""
    items = (_MARKER.sub("", part) for part in _SEPARATOR.split(strip_reasoning(reply)))
    return {name for name in (normalize_answer(item) for item in items) if name}


def name_set_f1(prediction: str, record: DataRecord) -> float:
    """F1 of the reply's set of names against ``gold["mentions"]``."""
    mentions = (record.gold or {}).get("mentions")
    if not isinstance(mentions, list):
        raise UserError(
            f"record {record.id} ({record.task}): its gold has no 'mentions' list, so it cannot be scored as recalling"
        )
    gold = {name for name in (normalize_answer(mention) for mention in mentions) if name}
    predicted = reply_names(prediction)
    if not gold or not predicted:
        return float(gold == predicted)
    hits = len(gold & predicted)
    if not hits:
        return 0.0
    precision, recall = hits / len(predicted), hits / len(gold)
    return 2 * precision * recall / (precision + recall)
