"""Reference points for the ETHIC section tasks' metrics: ``python bench/bench_sections.py DATA``.

DATA holds document_summarizing and document_organizing data (e.g. ``generate --suite ethic``). Per length it
prints the mean score of replies that need no model, so a model's scores can be read against them:

- document_summarizing, "lead": each section answered with its first 60 words (markdown headings);
- document_summarizing, "half": the exact references of the first half of the sections only;
- document_organizing, "random": a random order of the labels (seed 0); "alphabetical": A, B, C, ...

and the time ``section_rouge`` takes per record.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

from longbench100.folders.data_records import DataRecord
from longbench100.scoring.metrics.sections import order_lcs, section_rouge
from longbench100.tasks.sections import section_labels

SECTION = re.compile(r"^Section (\d+):\n", re.MULTILINE)
LEAD_WORDS = 60


def as_record(row: dict) -> DataRecord:
    """The scoring view of one data record."""
    return DataRecord(
        row["id"],
        row["task"],
        row["label"],
        row["length"],
        row["row"],
        tuple(row["answers"]),
        row["question"],
        None,
        gold=row["gold"],
    )


def lead_reply(row: dict) -> str:
    """Each section answered with its first LEAD_WORDS words, under "**Section i:**" headings."""
    prompt = row["prompt"]
    marks = list(SECTION.finditer(prompt))
    ends = [mark.start() for mark in marks[1:]] + [prompt.index("Write a summary of each")]
    return "\n".join(
        f"**Section {number}:** {' '.join(prompt[mark.end() : end].split()[:LEAD_WORDS])}"
        for number, (mark, end) in enumerate(zip(marks, ends), 1)
    )


def half_reply(row: dict) -> str:
    """The references of the first half of the sections, the rest left out."""
    references = row["gold"]["references"]
    return "\n".join(
        f"Section {number}: {reference}"
        for number, reference in enumerate(references[: len(references) // 2], 1)
    )


def rows_of(path: Path) -> list[dict]:
    """The records of one data file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def main(data: Path) -> None:
    """Print one line per length."""
    rng = random.Random(0)
    for path in sorted(
        (data / "document_summarizing").glob("*.jsonl"), key=lambda p: rows_of(p)[0]["length"]
    ):
        summaries, orders = rows_of(path), rows_of(data / "document_organizing" / path.name)
        start = time.perf_counter()
        lead = [section_rouge(lead_reply(row), as_record(row)) for row in summaries]
        per_record = (time.perf_counter() - start) / len(summaries)
        half = [section_rouge(half_reply(row), as_record(row)) for row in summaries]
        shuffled, alphabetical = [], []
        for row in orders:
            labels = section_labels(row["gold"]["sections"])
            alphabetical.append(order_lcs(" > ".join(labels), as_record(row)))
            rng.shuffle(labels)
            shuffled.append(order_lcs(" > ".join(labels), as_record(row)))
        print(
            f"{path.stem:>5}: section_rouge lead {statistics.mean(lead):.3f} ({1000 * per_record:.0f} ms/record), half {statistics.mean(half):.3f}; "
            f"order_lcs random {statistics.mean(shuffled):.3f}, alphabetical {statistics.mean(alphabetical):.3f}"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
