"""Time ``generate`` against one tokenization pass over the prompts it emits.

Usage: python bench/bench_generate.py [--sources MIRROR] [--tasks all] [--rows 20] [--lengths 2k,4k,6k,8k,32k,128k] [--workers 2] [--repeat 3]

Runs the generator in fresh subprocesses: once cold (empty token-count and record caches), then warm
(caches filled by the cold run) ``--repeat`` times, measuring wall time, CPU time (with the worker
processes; steadier than wall time on a shared machine) and peak RSS of each; the warm run, the
tokenization pass and the writing floors below are each the best of ``--repeat`` (the fastest wall time),
because on a shared machine one pass can take twice as long as the next. The package's bytecode is compiled first, as
``pip install`` does (a shell with ``PYTHONDONTWRITEBYTECODE`` set would otherwise make every run
compile the edited modules again). Then tokenizes every
emitted prompt once with tiktoken's batch API on two threads (the floor for a generator that
verifies its counts) and prints samples/s, emitted tokens/s and the ratio to that floor. Last, the
floor of any generator: the same records, already built and held in memory, serialised as our writer
does (``json_lines.json_line``: ``json.dumps(record, ensure_ascii=False)`` byte for byte, long strings
escaped as bytes) and written as JSONL, one file per task and length; and the same as a whole script
run, timed like ``generate``: a fresh interpreter that loads the records (pickled, the fastest load
we know) and writes them.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_generate(args: argparse.Namespace, out: Path, cache: Path) -> tuple[float, float, float]:
    """Run one ``longbench100 generate`` in a subprocess; return (wall seconds, CPU seconds with its workers, peak RSS in MiB)."""
    command = [
        sys.executable,
        "-m",
        "longbench100",
        "generate",
        "--sources",
        args.sources,
        "--tasks",
        args.tasks,
        "--lengths",
        args.lengths,
        "--rows",
        str(args.rows),
        "--seed",
        "42",
        "--out",
        str(out),
        "--workers",
        str(args.workers),
        "--quiet",
    ]
    started = time.perf_counter()
    child = subprocess.Popen(
        command, env={**os.environ, "LONGBENCH100_CACHE": str(cache)}, stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"generate failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def tokenization_floor(out: Path, repeat: int) -> tuple[float, int, int]:
    """Seconds to tokenize every emitted prompt once (two threads; the best of ``repeat`` passes), the prompt count
    and their tokens."""
    from longbench100.text.tokenization import load_tokenizer

    tokenizer = load_tokenizer("cl100k_base")
    prompts = [
        json.loads(line)["prompt"]
        for path in sorted(out.glob("*/*.jsonl"))
        for line in open(path, encoding="utf-8")
    ]
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        counts = tokenizer.count_batch(prompts)
        best = min(best, time.perf_counter() - started)
    return best, len(prompts), sum(counts)


def writing_floor(out: Path, scratch: Path) -> float:
    """Seconds to serialise and write the records of ``out`` (read into memory first) as the same JSONL files,
    the fastest way we know: as our writer serialises them (``json_lines.json_line``, byte for byte
    ``json.dumps(record, ensure_ascii=False)``), written in binary."""
    from longbench100.generate.json_lines import json_line

    records = {
        path.relative_to(out): [json.loads(line) for line in open(path, encoding="utf-8")]
        for path in sorted(out.glob("*/*.jsonl"))
    }
    started = time.perf_counter()
    for relative, rows in records.items():
        target = scratch / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as handle:
            for row in rows:
                handle.write(json_line(row))
    elapsed = time.perf_counter() - started
    same = all(
        (scratch / relative).read_bytes() == (out / relative).read_bytes() for relative in records
    )
    if not same:
        raise SystemExit("the writing floor did not reproduce the generated files byte for byte")
    return elapsed


WRITE_SCRIPT = """
import pickle, sys
from pathlib import Path
from longbench100.generate.json_lines import json_line
with open(sys.argv[1], "rb") as handle:
    records = pickle.load(handle)
for relative, rows in records.items():
    target = Path(sys.argv[2]) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as handle:
        for row in rows:
            handle.write(json_line(row))
"""


def writing_script_floor(out: Path, scratch: Path) -> float:
    """Wall seconds of a fresh interpreter that loads the records of ``out`` (pickled) and writes them as JSONL."""
    records = {
        str(path.relative_to(out)): [json.loads(line) for line in open(path, encoding="utf-8")]
        for path in sorted(out.glob("*/*.jsonl"))
    }
    scratch.mkdir(parents=True, exist_ok=True)
    pickled = scratch / "records.pickle"
    pickled.write_bytes(pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL))
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", WRITE_SCRIPT, str(pickled), str(scratch / "by_script")],
        check=True,
        cwd=HERE.parent,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )
    elapsed = time.perf_counter() - started
    if not all(
        (scratch / "by_script" / relative).read_bytes() == (out / relative).read_bytes()
        for relative in records
    ):
        raise SystemExit("the writing script did not reproduce the generated files byte for byte")
    return elapsed


def same_files(first: Path, second: Path) -> bool:
    """Whether the two output folders hold the same JSONL files, byte for byte."""
    names = sorted(path.relative_to(first) for path in first.rglob("*.jsonl"))
    return names == sorted(path.relative_to(second) for path in second.rglob("*.jsonl")) and all(
        (first / name).read_bytes() == (second / name).read_bytes() for name in names
    )


def main() -> None:
    """Parse options, run cold and warm, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=str(HERE.parent.parent / "shared" / "sources"))
    parser.add_argument(
        "--tasks",
        default="all",
        help="all (the 100-longbench suite) or task names, e.g. niah_single_2",
    )
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--lengths", default="2k,4k,6k,8k,32k,128k")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="warm runs, tokenization passes and writing floors, each the best of this many",
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    compileall.compile_dir(str(HERE.parent / "longbench100"), quiet=1)
    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        cache = scratch_path / "cache"
        cold_wall, cold_cpu, cold_rss = run_generate(args, scratch_path / "cold", cache)
        warm_wall, warm_cpu, warm_rss = min(
            run_generate(args, scratch_path / f"warm{run}", cache) for run in range(args.repeat)
        )
        for run in range(1, args.repeat):
            if not same_files(scratch_path / "warm0", scratch_path / f"warm{run}"):
                raise SystemExit("two warm runs wrote different files")
            shutil.rmtree(scratch_path / f"warm{run}")
        (scratch_path / "warm0").rename(scratch_path / "warm")
        floor, samples, tokens = tokenization_floor(scratch_path / "warm", args.repeat)
        writing = min(
            writing_floor(scratch_path / "warm", scratch_path / f"written{run}")
            for run in range(args.repeat)
        )
        script = min(
            writing_script_floor(scratch_path / "warm", scratch_path / f"script{run}")
            for run in range(args.repeat)
        )
        same = same_files(scratch_path / "cold", scratch_path / "warm")
    print(
        f"workload: tasks {args.tasks} x {args.lengths} x {args.rows} rows -> {samples} samples, {tokens / 1e6:.1f} M prompt tokens; workers={args.workers}"
    )
    print(
        f"one tokenization pass (tiktoken, 2 threads; best of {args.repeat}): {floor:.2f} s; warm: best of {args.repeat} runs"
    )
    print(
        "| run | wall s | CPU s | samples/s | emitted tokens/s | ratio to tokenization pass | peak RSS MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, wall, cpu, rss in (
        ("cold", cold_wall, cold_cpu, cold_rss),
        ("warm", warm_wall, warm_cpu, warm_rss),
    ):
        print(
            f"| {name} | {wall:.1f} | {cpu:.1f} | {samples / wall:.1f} | {tokens / wall / 1e6:.2f} M | {wall / floor:.2f}x | {rss:.0f} |"
        )
    print(
        f"writing the same records as JSONL (serialise + write, records in memory): {writing:.2f} s; "
        f"warm generation is {warm_wall / writing:.1f}x that floor"
    )
    print(
        f"the same as a whole script run (fresh interpreter, pickled records loaded, then written): {script:.2f} s; "
        f"warm generation is {warm_wall / script:.1f}x that floor"
    )
    print(f"cold and warm outputs byte-identical: {same}")


if __name__ == "__main__":
    main()
