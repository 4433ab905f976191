"""CPU of single-cell ``generate`` runs, cold (an empty cache folder) and warm (that folder again).

Usage: python bench/bench_cold_cells.py --sources DIR [--tree DIR ...]
       [--cells suite:task:length ...] [--rows 25] [--reps 3] [--tokenizer cl100k_base]
       [--option=--no-controls ...]

Each run is a fresh ``python -m longbench100 generate --suite S --tasks T --lengths L`` process with
the run's options; its cost is the user + system CPU of it and every process it started
(``RUSAGE_CHILDREN``), with the wall time and peak memory beside it. Several ``--tree`` folders
(checkouts of the package; without one, this one) are run in turns within each repetition, the
order alternating from one repetition to the next, so a change of load weighs on each alike.
One line per cell, tree and kind: the median and the spread of the CPU seconds over the repetitions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

CELLS = (
    "ruler:niah_single_1:4k",
    "ruler:niah_single_2:4k",
    "ruler:niah_multikey_1:4k",
    "ruler:niah_single_1:128k",
    "ruler:niah_single_2:128k",
    "ruler:niah_multikey_1:128k",
    "100-longbench:kv_retrieval:8k",
    "100-longbench:single_doc_qa:8k",
)
"""RULER's niah cells as its own scripts build them one at a time, and two of the paper's cells."""


@dataclass(frozen=True)
class Cost:
    """What one run took: CPU (user + system, its whole process tree), wall seconds, peak memory."""

    cpu: float
    wall: float
    peak_mib: float


def run_cell(tree: Path, cell: str, cache: Path, out: Path, options: argparse.Namespace) -> Cost:
    """Generate one cell with the package of ``tree`` into ``out`` (removed first), caching in
    ``cache``."""
    suite, task, length = cell.split(":")
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "longbench100", "generate", "--suite", suite, "--tasks", task]
    command += ["--lengths", length, "--rows", str(options.rows), "--tokenizer", options.tokenizer]
    command += ["--sources", str(options.sources), "--out", str(out), "--quiet", *options.option]
    environment = {**os.environ, "PYTHONPATH": str(tree), "LONGBENCH100_CACHE": str(cache)}
    log = out.with_suffix(".log")
    with log.open("wb") as messages:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, env=environment, cwd=tree, stdout=subprocess.DEVNULL, stderr=messages
        )
        _, status, usage = os.wait4(process.pid, 0)  # the run and the workers it waited for
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        said = log.read_text(encoding="utf-8", errors="replace").strip()
        raise SystemExit(f"{cell} with {tree}: exit status {process.returncode}: {said}")
    return Cost(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024)


def _summary(costs: list[Cost]) -> str:
    """The median CPU with its range, and the median wall time and peak memory."""
    cpus = [cost.cpu for cost in costs]
    wall = statistics.median(cost.wall for cost in costs)
    peak = max(cost.peak_mib for cost in costs)
    return (
        f"cpu {statistics.median(cpus):6.2f} s ({min(cpus):.2f}-{max(cpus):.2f})  "
        f"wall {wall:6.2f} s  peak {peak:5.0f} MiB"
    )


def main() -> None:
    """Run every cell cold then warm, each tree in turn, and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=Path, required=True)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument("--cells", nargs="+", default=list(CELLS))
    parser.add_argument("--rows", type=int, default=25)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tokenizer", default="cl100k_base")
    parser.add_argument(
        "--option", action="append", default=[], help="a further generate option (repeatable)"
    )
    options = parser.parse_args()
    trees = [tree.resolve() for tree in options.tree] or [HERE.parent]
    costs: dict[tuple[str, Path, str], list[Cost]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as scratch:
        for cell in options.cells:
            for repetition in range(options.reps):
                order = trees if repetition % 2 == 0 else trees[::-1]
                for tree in order:
                    cache, out = Path(scratch) / "cache", Path(scratch) / "out"
                    shutil.rmtree(cache, ignore_errors=True)
                    for kind in ("cold", "warm"):
                        cost = run_cell(tree, cell, cache, out, options)
                        costs.setdefault((cell, tree, kind), []).append(cost)
            for tree in trees:
                for kind in ("cold", "warm"):
                    summary = _summary(costs[cell, tree, kind])
                    print(f"{cell:32} {kind:4} {summary}  {tree}", flush=True)


if __name__ == "__main__":
    main()
