"""Print a baseline run as a table and write it as JSON that ``longbench100 show`` reads."""

from __future__ import annotations

from pathlib import Path

from longbench100.baselines.check import REAL, Z_ONE_SIDED, BaselineRun, BaselineScore, CellVerdict
from longbench100.core.atomic import write_json_atomic

RUN_NAME = "no-model baselines"
"""What ``show`` prints as the model of a baselines file."""


def format_table(run: BaselineRun) -> str:
    """One line per task and length: chance, the limit's ceiling, the best judged baseline, the verdict, every baseline."""
    lines = [
        f"{'task':<20} {'len':>5} {'on':<15} {'n':>4} {'chance':>6} {'limit':>6} {'best shortcut':<28} {'verdict':<7} all baselines"
    ]
    for cell in run.cells:
        best = cell.best
        best_text = f"{best.name} {best.score:.3f}" if best else "-"
        others = (
            ", ".join(f"{b.name} {b.score:.2f}{_marker(b)}" for b in cell.baselines) or "none apply"
        )
        lines.append(
            f"{cell.task:<20} {cell.label:>5} {cell.on:<15} {cell.samples:>4} {cell.chance:>6.3f} {cell.ceiling:>6.3f} {best_text:<28} "
            f"{'ok' if cell.passed else 'OVER':<7} {others}"
        )
    failed = run.failed
    lines.append(
        f"{len(run.cells) - len(failed)} of {len(run.cells)} cells keep every judged shortcut within its limit "
        f"(OVER: above the limit by more than {Z_ONE_SIDED} standard errors)"
        + (f"; over: {', '.join(_cell_name(c) for c in failed)}" if failed else "")
    )
    return "\n".join(lines)


def _marker(baseline: BaselineScore) -> str:
    """What the table writes after a baseline not held to the limit: the anchor's shortcut, or
    reported."""
    if baseline.judged:
        return ""
    return " (anchor's)" if baseline.anchor else " (reported)"


def _cell_name(cell: CellVerdict) -> str:
    """``task label``, with the control kind when the cell is one."""
    return f"{cell.task} {cell.label}" + ("" if cell.on == REAL else f" ({cell.on})")


def run_json(run: BaselineRun) -> dict:
    """The run as a results-like object: ``samples`` hold each baseline's answer per sample (for ``show``),
    ``aggregates.cells`` the verdicts."""
    return {
        "model": RUN_NAME,
        "data": str(run.data_dir),
        "samples": [{**sample, "metric": "classic"} for sample in run.samples],
        "aggregates": {"cells": [cell.to_json() for cell in run.cells], "passed": not run.failed},
    }


def write_run(run: BaselineRun, path: Path) -> None:
    """Write :func:`run_json` to ``path`` atomically."""
    write_json_atomic(path, run_json(run), indent=1)


def summary_record(run: BaselineRun) -> dict:
    """What a manifest keeps of a check: the verdict, the task-lengths and control cells judged and,
    per failing cell, its best shortcut."""
    controls = sum(cell.on != REAL for cell in run.cells)
    return {
        "passed": not run.failed,
        "cells": len(run.cells) - controls,
        **({"control_cells": controls} if controls else {}),
        "over": [_over(cell) for cell in run.failed],
    }


def _over(cell: CellVerdict) -> dict:
    best = cell.best
    return {
        "task": cell.task,
        "label": cell.label,
        "on": cell.on,
        "best": best.name if best else None,
        "score": round(best.score, 4) if best else None,
        "ceiling": round(cell.ceiling, 4),
    }
