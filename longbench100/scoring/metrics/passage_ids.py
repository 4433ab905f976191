"""The ``id_f1`` metric: F1 of the passage numbers a reply names against the record's gold passages.

Replies name passages in many ways: "4, 19, 23", "[4, 19, 23]", "Passages 4, 19 and 23",
"Passages 12-14", "The supporting passages are 4 and 19.", or reasoning that walks through
passages before a conclusion ("... Answer: 4, 19"). The parser reads, in this order of preference:

1. the first number list after the last conclusion cue ("answer:", "passages are", "ids:");
2. else every number list introduced by "Passage(s)" (so "Passage 4 reports 25 patients" gives 4);
3. else every whole number in the reply.

Ranges ("12-14", "12 to 14") stand for every number in them (up to ``MAX_RANGE`` numbers); decimals
and percentages are not passage numbers. Reasoning blocks (``<think>...</think>``) are ignored.
"""

from __future__ import annotations

import re

from longbench100.folders.data_records import DataRecord
from longbench100.text.answers import strip_reasoning

MAX_RANGE = 200
_ITEM = r"\d+(?:\s*(?:-|–|—|\bto\b)\s*\d+)?"
_JOIN = r"\s*(?:,|;|/|&|\band\b|\bor\b)\s*(?:and\s+)?(?:(?:passages?|paragraphs?)\s*)?"
_LIST = re.compile(rf"{_ITEM}(?:{_JOIN}{_ITEM})*", re.IGNORECASE)
_ITEM_PARTS = re.compile(r"(\d+)(?:\s*(?:-|–|—|\bto\b)\s*(\d+))?", re.IGNORECASE)
_NOT_IDS = re.compile(r"\d*\.\d+|\d+\s*%")
_CUED = re.compile(
    rf"\b(?:passages?|paragraphs?|documents?|docs?)\b[^\d\n]{{0,12}}?({_LIST.pattern})",
    re.IGNORECASE,
)
_CONCLUSION = re.compile(
    r"\b(?:answer|passages?|paragraphs?|documents?|ids?|numbers?)\b[\s*]*(?:is|are|:|=)[\s*:]*(?=[\[(]?\s*(?:passages?\s*)?\d)",
    re.IGNORECASE,
)


def _numbers(text: str) -> set[int]:
    """The numbers of one list, ranges expanded."""
    numbers: set[int] = set()
    for start, end in _ITEM_PARTS.findall(text):
        low, high = int(start), int(end or start)
        numbers |= set(range(low, high + 1)) if 0 <= high - low <= MAX_RANGE else {low, high}
    return numbers


def parse_passage_ids(reply: str) -> set[int]:
    """The passage numbers a reply names (empty when it names none)."""
    text = _NOT_IDS.sub(" ", strip_reasoning(reply))
    conclusions = list(_CONCLUSION.finditer(text))
    if conclusions:
        found = _LIST.search(text, conclusions[-1].end())
        if found:
            return _numbers(found.group(0))
    cued = _CUED.findall(text)
    if cued:
        return set().union(*(_numbers(group) for group in cued))
    return set().union(*(_numbers(match.group(0)) for match in _LIST.finditer(text)))


def id_f1(prediction: str, record: DataRecord) -> float:
    """F1 (0-1) of the passage numbers in ``prediction`` against ``record.gold["passages"]``."""
    gold = set((record.gold or {}).get("passages") or [])
    predicted = parse_passage_ids(prediction)
    hits = len(predicted & gold)
    if not hits:
        return 0.0
    precision, recall = hits / len(predicted), hits / len(gold)
    return 2 * precision * recall / (precision + recall)
