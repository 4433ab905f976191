"""Render `baselines --out` files as the control-twin table of docs/benchmarks.md.

``python bench/control_twin_table.py SUITE.baselines.json [...]`` prints, for every task and length,
each strategy's score on the real prompts and on both twins, then the cells whose best judged score
is above its ceiling but within the sampling allowance (passed by the one-sided test), and a count of
passing cells per file. Marks: ``(anchor's)`` a strategy the anchor's construct lets score, reported
on real prompts; ``(rep.)`` a family the suite reports, not judges, on real prompts; bold, a judged
score over its ceiling beyond the allowance; italics, one above its ceiling within the allowance.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

KINDS = ("real", "gold_removed", "context_swapped")
LENGTH_ORDER = {"2k": 0, "4k": 1, "8k": 2, "16k": 3, "32k": 4, "64k": 5, "128k": 6, "256k": 7}


def mark(cell: dict, name: str) -> str:
    """One strategy's score in one cell, marked as the module docstring says."""
    baseline = cell["baselines"].get(name)
    if baseline is None:
        return "-"
    text = f"{baseline['score']:.2f}"
    if not baseline["judged"]:
        return f"{text} (anchor's)" if baseline.get("anchor") else f"{text} (rep.)"
    if baseline["score"] > cell["ceiling"] + 1e-9:
        return f"*{text}*" if cell["passed"] else f"**{text}**"
    return text


def table(cells: list[dict]) -> list[str]:
    """The markdown rows of one file's cells, task by task in file order, lengths in order."""
    by_cell: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for cell in cells:
        by_cell[(cell["task"], cell["label"])][cell["on"]] = cell
    task_order = {task: number for number, (task, _) in reversed(list(enumerate(by_cell)))}
    lines = []
    for (task, label), kinds in sorted(
        by_cell.items(), key=lambda item: (task_order[item[0][0]], LENGTH_ORDER[item[0][1]])
    ):
        real = kinds["real"]
        names = list(real["baselines"])
        for number, name in enumerate(names):
            head = (
                f"| {task} | {label} | {real['samples']} | {real['chance']:.3f} "
                if number == 0
                else "|  |  |  |  "
            )
            scores = " | ".join(mark(kinds[kind], name) if kind in kinds else "-" for kind in KINDS)
            lines.append(f"{head}| {name} | {scores} |")
    return lines


def within_allowance(cells: list[dict]) -> list[str]:
    """Cells whose best judged score is above the ceiling but passed (sampling allowance)."""
    return [
        f"- {cell['task']} {cell['label']} {cell['on']}: `{cell['best']}` {cell['best_score']:.3f}"
        f" against a ceiling of {cell['ceiling']:.3f} ({cell['samples']} rows)"
        for cell in cells
        if cell["passed"] and cell["best_score"] > cell["ceiling"] + 1e-9
    ]


def main(paths: list[str]) -> None:
    """Print the table, the cells within the allowance and the pass counts of every file."""
    print("| task | length | rows | chance | strategy | real | gold removed | context swapped |")
    print("|---|---|---:|---:|---|---:|---:|---:|")
    allowance, counts = [], []
    for path in paths:
        cells = json.loads(Path(path).read_text())["aggregates"]["cells"]
        print("\n".join(table(cells)))
        allowance += within_allowance(cells)
        passed = sum(cell["passed"] for cell in cells)
        counts.append(f"- {Path(path).name}: {passed} of {len(cells)} cells pass")
    print("\nAbove the ceiling, within the allowance:\n" + ("\n".join(allowance) or "- none"))
    print("\n" + "\n".join(counts))


if __name__ == "__main__":
    main(sys.argv[1:])
