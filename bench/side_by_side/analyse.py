"""CPU ratios (anchor / ours) from run.py's JSONL log, as markdown tables.

    python bench/side_by_side/analyse.py LOG.jsonl [MORE.jsonl ...]

For each item (a cell, a length, the whole workload) and each variant of ours, every rep pairs
ours' CPU seconds with the anchor's in the same rep: the anchor's own run of that item, or, where
the anchor has no such run (RULER runs one cell at a time), the sum of its cell runs the item
covers. A pair whose anchor figure is incomplete (a cell missing or failed) is left out, never
counted as zero. Tables give the medians of both CPU figures and the median [min-max] over reps
of the per-rep ratio; then each variant's median over cells; then whether ours' outputs were
byte-identical across reps and variants; then the runs that failed.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

OURS_VARIANTS = {
    "ours_cold": "cold, twins on (default)",
    "ours_warm": "warm, twins on (default)",
    "ours_cold_nc": "cold, --no-controls",
    "ours_warm_nc": "warm, --no-controls",
    "ours_prep": "prepared cold, twins on (default)",
    "ours_prep_nc": "prepared cold, --no-controls",
}
SCOPE_TITLES = {
    "cell": "Per cell (one task at one length per run)",
    "length": "Per length (all the workload's tasks at one length)",
    "whole": "Whole workload",
}

Record = dict[str, Any]


@dataclass(frozen=True)
class Ratio:
    """One item and variant: median CPU of each side and the per-rep ratios anchor / ours."""

    item: str
    scope: str
    variant: str
    anchor_cpu: float
    ours_cpu: float
    median: float
    low: float
    high: float
    reps: int


def read_log(paths: list[str]) -> list[Record]:
    """Every record of the logs, in order."""
    records: list[Record] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                records.extend(json.loads(line) for line in handle if line.strip())
        except (OSError, ValueError) as error:
            raise SystemExit(f"error: cannot read the log {path}: {error}") from None
    return records


def succeeded_runs(records: list[Record]) -> list[Record]:
    """Timed runs that exited 0."""
    return [r for r in records if r.get("kind") == "run" and r["rc"] == 0]


def anchor_cpu(runs: list[Record], ours: Record) -> float | None:
    """The anchor's CPU for the work of one run of ours, in the same rep; None if incomplete."""
    same_rep = [r for r in runs if r["variant"] == "anchor" and r["rep"] == ours["rep"]]
    same_workload = [r for r in same_rep if r["workload"] == ours["workload"]]
    own = [r["cpu_s"] for r in same_workload if r["item"] == ours["item"]]
    if own:
        return float(own[0])
    cells = {
        (r["tasks"][0], r["lengths"][0]): r["cpu_s"] for r in same_workload if r["scope"] == "cell"
    }
    wanted = [(task, length) for task in ours["tasks"] for length in ours["lengths"]]
    if not all(cell in cells for cell in wanted):
        return None
    return float(sum(cells[cell] for cell in wanted))


def ratios(records: list[Record]) -> list[Ratio]:
    """Per item and variant of ours, the paired ratios over reps (items without a pair left out)."""
    runs = succeeded_runs(records)
    pairs: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
    for run in runs:
        if run["variant"] not in OURS_VARIANTS:
            continue
        anchor = anchor_cpu(runs, run)
        if anchor is not None and run["cpu_s"] > 0:
            pairs[(run["item"], run["scope"], run["variant"])].append((anchor, run["cpu_s"]))
    result = []
    for (item, scope, variant), values in pairs.items():
        per_rep = [a / o for a, o in values]
        result.append(
            Ratio(
                item=item,
                scope=scope,
                variant=variant,
                anchor_cpu=statistics.median(a for a, _ in values),
                ours_cpu=statistics.median(o for _, o in values),
                median=statistics.median(per_rep),
                low=min(per_rep),
                high=max(per_rep),
                reps=len(values),
            )
        )
    return result


def cell_summary(found: list[Ratio], variant: str) -> tuple[float, float, float, int] | None:
    """Median, min and max over cells of the per-cell median ratio of one variant."""
    medians = [r.median for r in found if r.scope == "cell" and r.variant == variant]
    if not medians:
        return None
    return statistics.median(medians), min(medians), max(medians), len(medians)


def ratio_text(ratio: Ratio) -> str:
    """'0.57 s, 11.3x [11.0-11.6]'."""
    return f"{ratio.ours_cpu:.2f} s, {ratio.median:.1f}x [{ratio.low:.1f}-{ratio.high:.1f}]"


def scope_table(found: list[Ratio], scope: str) -> list[str]:
    """One markdown table: items down, variants of ours across."""
    by_item: dict[str, dict[str, Ratio]] = defaultdict(dict)
    for ratio in found:
        if ratio.scope == scope:
            by_item[ratio.item][ratio.variant] = ratio
    if not by_item:
        return []
    variants = [v for v in OURS_VARIANTS if any(v in row for row in by_item.values())]
    lines = [
        f"**{SCOPE_TITLES[scope]}.** CPU seconds (median over reps) and ratio anchor / ours "
        "(median [min-max] over reps):",
        "",
        "| item | reps | anchor CPU s | "
        + " | ".join(f"ours {OURS_VARIANTS[v]}" for v in variants)
        + " |",
        "|---|---|---|" + "---|" * len(variants),
    ]
    for item in sorted(by_item, key=item_order):
        row = by_item[item]
        first = next(iter(row.values()))
        cells = [ratio_text(row[v]) if v in row else "n/a" for v in variants]
        lines.append(
            f"| {item} | {first.reps} | {first.anchor_cpu:.2f} | " + " | ".join(cells) + " |"
        )
    return [*lines, ""]


def item_order(item: str) -> tuple[str, int, str]:
    """Workload, then length in tokens (all last), then task."""
    workload, rest = item.split("/")
    task, length = rest.split("@")
    size = 10**9 if length == "all" else int(length.rstrip("k"))
    return workload, size, task


def determinism_lines(records: list[Record]) -> list[str]:
    """Whether each item's outputs hash alike across reps and variants."""
    data: dict[str, set[str]] = defaultdict(set)
    twins: dict[str, set[str]] = defaultdict(set)
    anchors: dict[str, set[str]] = defaultdict(set)
    for run in succeeded_runs(records):
        if run["variant"] == "anchor":
            anchors[run["item"]].add(str(run["data_sha256"]))
            continue
        data[run["item"]].add(str(run["data_sha256"]))
        if run["controls"]:
            twins[run["item"]].add(str(run["controls_sha256"]))
    lines = [
        "**Byte-identity of the outputs** (distinct digests per item over reps and variants):",
        "",
    ]
    for item in sorted(set(data) | set(anchors), key=item_order):
        parts = [f"ours data {len(data[item])}", f"ours twins {len(twins[item])}"]
        if item in anchors:
            parts.append(f"anchor {len(anchors[item])}")
        verdict = "identical" if len(data[item]) <= 1 and len(twins[item]) <= 1 else "DIFFERS"
        lines.append(f"- {item}: {', '.join(parts)} ({verdict})")
    return [*lines, ""]


def context_lines(records: list[Record]) -> list[str]:
    """When, on what, and under which load the runs were made."""
    runs = [r for r in records if r.get("kind") == "run"]
    lines = []
    for meta in records:
        if meta.get("kind") == "start":
            lines.append(
                f"- started {meta['date']}, ours at {meta['ours_commit']}, "
                f"anchors {meta['anchors']}, {meta['cpus']} CPUs; uptime: {meta['uptime']}"
            )
        elif meta.get("kind") == "end":
            lines.append(f"- ended {meta['date']}; uptime: {meta['uptime']}")
    if runs:
        loads = [r["load_before"][0] for r in runs] + [r["load_after"][0] for r in runs]
        lines.append(f"- 1-minute load around the runs: {min(loads):.2f}-{max(loads):.2f}")
    failed = [r for r in runs if r["rc"] != 0]
    lines += [f"- FAILED: {r['item']} {r['variant']} rep {r['rep']} rc={r['rc']}" for r in failed]
    return [*lines, ""]


def report(records: list[Record]) -> str:
    """Every table, as markdown."""
    found = ratios(records)
    lines = context_lines(records)
    for scope in SCOPE_TITLES:
        lines += scope_table(found, scope)
    summaries = [(v, cell_summary(found, v)) for v in OURS_VARIANTS]
    for variant, summary in summaries:
        if summary:
            median, low, high, count = summary
            lines.append(
                f"- ours {OURS_VARIANTS[variant]}, median over {count} cells: {median:.1f}x "
                f"(cells {low:.1f}-{high:.1f}x)"
            )
    lines += ["", *determinism_lines(records)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Print the tables for the logs named on the command line."""
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        raise SystemExit("usage: analyse.py LOG.jsonl [MORE.jsonl ...]")
    print(report(read_log(paths)))


if __name__ == "__main__":
    main()
