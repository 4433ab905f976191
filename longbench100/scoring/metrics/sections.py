"""Metrics of the ETHIC high-coverage tasks (tasks/sections.py), read from real-shaped replies.

- ``section_rouge`` (document_summarizing): the reply is split into per-section summaries ("Section 3:
  ...", also as markdown "**Section 3:**" or "### Section 3"; a plain numbered list "3. ..." when no
  section heading appears); each section's summary is scored against its reference with ROUGE-L (the
  project's default variant, ``classic.rouge_l``) and the sample's score is the mean over ALL sections,
  a missing one scoring 0.
- ``order_lcs`` / ``order_exact`` (document_organizing): the summary labels are read from the reply in order
  (each once); ``order_lcs`` is the length of their longest common subsequence with the true order
  divided by the number of sections (ETHIC's rule), ``order_exact`` is 1 only for the true order.
"""

from __future__ import annotations

import re

from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.scoring.metrics.classic import rouge_l
from longbench100.text.answers import strip_reasoning

# A section heading at the start of a line: optional markdown ("#", "*", "-", ">"), "Section 3", an
# optional "(title)", then an optional closing "**" and punctuation ("Section 3:", "**Section 3.**",
# "### Section 3 -", "Section 3 (The harbor):"); a line "Section 3 of the act ..." is no heading.
_SECTION_HEADING = re.compile(
    r"^[ \t#>*_-]*(?:summary[ \t]+(?:of|for)[ \t]+)?section[ \t]+(\d+)[ \t]*(?:\([^)\n]*\))?[ \t]*(?:\*\*|__)?[ \t]*(?:[:.)\-–—]|$|(?<=\*\*)|(?<=__))[ \t]*(?:\*\*|__)?[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
# The fallback: a numbered list item ("3. ...", "3) ...", "**3.** ...").
_NUMBERED_ITEM = re.compile(r"^[ \t*_]*(\d+)[.)](?:\*\*|__)?[ \t]+", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A label: bracketed ("[B]"), or bare unless it reads as an English word ("A possible order", "I think").
_LABEL = re.compile(r"\[([A-Z]{1,2})\]|(?<![A-Za-z0-9])([A-Z]{1,2})(?![A-Za-z0-9])(?![ \t]+[a-z])")


def gold_field(record: DataRecord, name: str) -> list:
    """``record.gold[name]``; a record without it (another task's data) is a one-line error naming the record."""
    value = (record.gold or {}).get(name)
    if not isinstance(value, list):
        raise UserError(
            f"record {record.id} ({record.task}): its gold has no {name!r} list, so it cannot be scored as a section task"
        )
    return value


def parse_sections(reply: str) -> dict[int, str]:
    """The summary of each section number found in ``reply`` (the first one where a number repeats).

    Text before the first heading is ignored; when every summary but the last is one paragraph, the
    last one ends at its first blank line too (a closing remark after it is not part of it).
    """
    text = strip_reasoning(reply)
    marks = list(_SECTION_HEADING.finditer(text)) or list(_NUMBERED_ITEM.finditer(text))
    bodies = [
        text[mark.end() : following.start() if following else len(text)].replace("**", "").strip()
        for mark, following in zip(marks, marks[1:] + [None])
    ]
    if len(bodies) > 1 and not any(_PARAGRAPH_BREAK.search(body) for body in bodies[:-1]):
        bodies[-1] = _PARAGRAPH_BREAK.split(bodies[-1], 1)[
            0
        ]  # one paragraph each: what follows the last is a closing remark
    found: dict[int, str] = {}
    for mark, body in zip(marks, bodies):
        found.setdefault(int(mark.group(1)), body)
    return found


def section_rouge(prediction: str, record: DataRecord) -> float:
    """Mean ROUGE-L F over every section of ``record`` (``gold["references"]``), 0 for a section not answered."""
    references = gold_field(record, "references")
    summaries = parse_sections(prediction)
    scores = [
        rouge_l(summaries[number], [reference]) if summaries.get(number) else 0.0
        for number, reference in enumerate(references, 1)
    ]
    return sum(scores) / len(scores) if scores else 0.0


def parse_order(reply: str, labels: set[str]) -> list[str]:
    """The labels of ``labels`` in the order ``reply`` gives them, each once.

    A line naming two or more labels is the answer (the one naming the most; the first on a tie);
    otherwise the labels are read across lines (a list of one label per line).
    """
    lines = [_labels_in(line, labels) for line in strip_reasoning(reply).splitlines()]
    best = max(lines, key=lambda found: len(set(found)), default=[])
    sequence = best if len(set(best)) >= 2 else [label for found in lines for label in found]
    return list(dict.fromkeys(sequence))


def _labels_in(text: str, labels: set[str]) -> list[str]:
    """The known labels in ``text``, in order (repeats kept)."""
    found = (match.group(1) or match.group(2) for match in _LABEL.finditer(text))
    return [label for label in found if label in labels]


def longest_common_subsequence(first: list[str], second: list[str]) -> int:
    """The length of the longest common subsequence of two sequences."""
    previous = [0] * (len(second) + 1)
    for item in first:
        current = [0]
        for index, other in enumerate(second):
            current.append(
                previous[index] + 1 if item == other else max(previous[index + 1], current[index])
            )
        previous = current
    return previous[-1]


def order_lcs(prediction: str, record: DataRecord) -> float:
    """LCS of the predicted label order with the true one (``gold["order"]``), divided by the number of sections."""
    order = gold_field(record, "order")
    predicted = parse_order(prediction, set(order))
    return longest_common_subsequence(predicted, order) / len(order) if order else 0.0


def order_exact(prediction: str, record: DataRecord) -> float:
    """1 when the reply gives exactly the true order of every section, else 0."""
    order = gold_field(record, "order")
    return float(parse_order(prediction, set(order)) == order)
