"""Time ``longbench100 --help`` and each command's ``--help`` as fresh processes, and a bare Python.

Usage: python bench/bench_startup.py [--runs 7]

Each line: the command path, the fastest and the median wall seconds of ``python -m longbench100
<path> --help`` over the runs (the fastest is the least disturbed by other load on the machine), and
the number of modules that help leaves imported.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.commands.test_cli_startup import command_paths  # noqa: E402 - after the path is set

_COUNT = (
    "import sys; from longbench100.cli import main\n"
    "try: main.main(sys.argv[1:], prog_name='longbench100')\n"
    "except SystemExit: pass\n"
    "print(len(sys.modules), file=sys.stderr)"
)


def wall(arguments: list[str]) -> float:
    """Wall seconds of one subprocess."""
    started = time.perf_counter()
    subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL, cwd=HERE.parent)
    return time.perf_counter() - started


def module_count(path: tuple[str, ...]) -> int:
    """Modules imported once ``path --help`` has printed."""
    done = subprocess.run(
        [sys.executable, "-c", _COUNT, *path, "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE.parent,
    )
    return int(done.stderr.split()[-1])


def _times(seconds: list[float]) -> str:
    """The fastest and the median of ``seconds``."""
    return f"fastest {min(seconds):.3f} s  median {statistics.median(seconds):.3f} s"


def main() -> None:
    """Print one line per command path, the bare interpreter first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    from longbench100.cli import main as cli

    bare = [wall([sys.executable, "-c", "pass"]) for _ in range(runs)]
    print(f"{'(bare interpreter)':<28} {_times(bare)}")
    for path in command_paths(cli):
        times = [wall([sys.executable, "-m", "longbench100", *path, "--help"]) for _ in range(runs)]
        print(f"{' '.join(path) or '(group)':<28} {_times(times)}  {module_count(path)} modules")


if __name__ == "__main__":
    main()
