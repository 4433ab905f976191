"""Audit document_summarizing / document_organizing data independently of the generator: ``python bench/audit_sections.py DATA``.

Recounts every prompt with tiktoken's cl100k_base (imports nothing from longbench100; the encoding is
loaded as ``audit_generated.py`` loads it) and checks, per record: the recount equals
``prompt_tokens``; prompt plus the recorded answer room (``gold.answer_tokens``) is within the length;
the prompt's "Section i:" headings run 1..K; for document_organizing, the summary shown under each label of
``gold.order`` is the reference of that section. Prints sections, fill of the length (prompt plus answer
room) and rows that mix sources, per task and length; exits 1 when any check fails.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

from audit_generated import cl100k_base

SECTION = re.compile(r"^Section (\d+):\n", re.MULTILINE)
SUMMARY = re.compile(r"^\[([A-Z]{1,2})\] ", re.MULTILINE)
TASKS = ("document_summarizing", "document_organizing")


def shown_summaries(prompt: str) -> dict[str, str]:
    """Label -> summary text, read from the document_organizing prompt's shuffled list."""
    part = prompt.split("Summaries, shuffled:\n", 1)[1].split("\n\nPut the summaries", 1)[0]
    marks = list(SUMMARY.finditer(part))
    return {
        mark.group(1): part[mark.end() : (following.start() - 1) if following else None]
        for mark, following in zip(marks, marks[1:] + [None])
    }


def problems(record: dict, encoding) -> list[str]:
    """What is wrong with one record (empty when nothing is)."""
    found = []
    gold, prompt = record["gold"], record["prompt"]
    tokens = len(encoding.encode(prompt, disallowed_special=()))
    if tokens != record["prompt_tokens"]:
        found.append(f"recount {tokens} != prompt_tokens {record['prompt_tokens']}")
    if tokens + gold["answer_tokens"] > record["length"]:
        found.append(f"over budget: {tokens} + {gold['answer_tokens']} > {record['length']}")
    if [int(number) for number in SECTION.findall(prompt)] != list(range(1, gold["sections"] + 1)):
        found.append("section headings are not 1..K")
    if record["task"] == "document_organizing":
        shown = shown_summaries(prompt)
        if [shown.get(label) for label in gold["order"]] != gold["references"]:
            found.append("order does not map labels to the sections' references")
    return found


def main(data: Path) -> int:
    """Audit every section-task file under DATA and print one line per task and length."""
    encoding = cl100k_base()
    failures = 0
    for task in TASKS:
        files = sorted(
            (data / task).glob("*.jsonl"),
            key=lambda path: json.loads(path.open().readline())["length"],
        )
        for path in files:
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            for row in rows:
                for problem in problems(row, encoding):
                    failures += 1
                    print(f"FAIL {row['id']}: {problem}")
            sections = [row["gold"]["sections"] for row in rows]
            fill = [
                (row["prompt_tokens"] + row["gold"]["answer_tokens"]) / row["length"]
                for row in rows
            ]
            mixed = sum(len(row["gold"]["sources"]) > 1 for row in rows)
            print(
                f"{task:20} {path.stem:>5}  rows {len(rows):3}  sections {min(sections)}-{max(sections)} (median {statistics.median(sections):g})"
                f"  fill median {100 * statistics.median(fill):.1f}% min {100 * min(fill):.1f}%  mixed-source rows {mixed}"
            )
    print("all checks pass" if not failures else f"{failures} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
