"""CPU of a warm ``generate`` with and without its control twins, for one or more checkouts.

Usage: python bench/bench_controls_cost.py --sources DIR --out SCRATCH [--reps 3]
       [--code CHECKOUT ...] -- GENERATE_OPTIONS...

Each rep runs, for every checkout in turn (interleaved, so the machine's load falls on each alike),
``python -m longbench100 generate GENERATE_OPTIONS`` into a fresh folder, with the twins and with
``--no-controls``. One warm-up run per checkout fills the cache first. CPU is user + system time
of the whole process tree (the command and its worker processes), from ``getrusage`` of the
children. Prints one line per run, then each checkout's median CPU with and without twins and the
twins' share on top of the run without them.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cpu_seconds(code: Path, arguments: list[str]) -> float:
    """User + system CPU seconds of one ``generate`` run of checkout ``code`` and its workers."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "longbench100", "generate", *arguments, "-q"],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    """Run the interleaved reps and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", required=True)
    parser.add_argument("--out", type=Path, required=True, help="scratch folder for the runs")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--code", type=Path, nargs="*", default=[HERE.parent])
    parser.add_argument("options", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    options = [option for option in args.options if option != "--"]
    base = [*options, "--sources", args.sources]
    cpu: dict[tuple[Path, bool], list[float]] = {}
    for code in args.code:  # the warm-up: fills the cache
        shutil.rmtree(args.out, ignore_errors=True)
        cpu_seconds(code, [*base, "--out", str(args.out)])
    for rep in range(args.reps):
        for code in args.code:
            for twins in (True, False):
                shutil.rmtree(args.out, ignore_errors=True)
                flag = [] if twins else ["--no-controls"]
                seconds = cpu_seconds(code, [*base, *flag, "--out", str(args.out)])
                cpu.setdefault((code, twins), []).append(seconds)
                print(f"rep {rep + 1} {code} {'twins' if twins else 'no twins'}: {seconds:.2f} s")
    for code in args.code:
        with_twins = statistics.median(cpu[(code, True)])
        without = statistics.median(cpu[(code, False)])
        print(
            f"{code}: median CPU {with_twins:.2f} s with twins, {without:.2f} s without "
            f"(+{100 * (with_twins / without - 1):.0f}%)"
        )
    shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
