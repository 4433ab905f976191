"""Time the anchors' own generators beside ``longbench100 generate``, in interleaved pairs.

    python bench/side_by_side/run.py --work WORK --sources MIRROR --log LOG.jsonl
        [--reps 3] [--first-rep 1] [--workloads ruler,paper] [--cells PATTERN,...]
        [--variants ...] [--ours-python PY] [--ours-checkout DIR]

WORK is the folder bench/side_by_side/setup.sh prepared (anchors, their venvs, offline data).
Ours runs with WORK/venv-ours/bin/python unless --ours-python names another interpreter;
--ours-checkout puts a checkout first on PYTHONPATH (to time a worktree without installing it).

Workloads (what each side generates):
* ruler: niah_single_1, niah_single_2, niah_multikey_1 at 4k/32k/128k, 25 rows, cl100k_base.
  RULER's data/prepare.py has to run once per cell (task x length). Ours runs once per cell, once
  per length (the three tasks in one invocation) and once for the whole workload; the analysis
  sets a length or whole-workload run of ours against the sum of RULER's cells it covers.
* paper: the eight tasks of 100-LongBench, 20 rows. The paper's generate_dataset.py runs
  unmodified for the whole workload (--lengths 8,32,128: its base set at 8k, then 8k, 32k, 128k),
  against ours at 2k,8k,32k,128k (2k standing in for the base set). Its script cannot run one task
  or one length without the base, so per length paper_driver.py runs the script's per-length loop
  for one length; there is no per-cell figure for the paper.

Variants of ours: cold (a fresh, empty LONGBENCH100_CACHE for each run: the machine's very first
run), prepared (a cold cell on a machine that has read its sources once: each run gets a fresh copy
of a cache that only `longbench100 sources verify --tokenizer cl100k_base` has filled, made once,
untimed, so every source is read, cleaned and counted but nothing of any task or length is
cached), warm (a cache filled before the timed runs by running each selected item once), each with
the control twins on (the default) and off (--no-controls, the like-for-like figure: the anchors
write no twins). Each rep runs every selected item's variants
back to back, the order reversed on even reps. CPU is user+sys of the whole process tree (os.wait4
counts every waited-for descendant: RULER's niah.py subprocess, ours' workers); the machine's load
average is logged before and after each run, and `uptime` at the start and end. Every output
folder is hashed (ours: data files and control twins apart, the manifest left out since it
records paths and times), so determinism across reps and variants can be checked.

--cells selects items by shell pattern on their names: ruler/<task>@<length> (cells),
ruler/all@<length> (one length), ruler/all@all (whole workload), paper/all@<length>,
paper/all@all; e.g. --cells 'ruler/*@4k,paper/all@8k'.

How long it takes, measured on 2 shared cores (2026-11-28): one rep of the ruler workload (all
items, all five variants) took 308 s of wall time at a load of 2.6-5.2 and 659 s at 5.5-8.3
(265-298 s of CPU); one rep of the paper workload 489-591 s (304-321 s of CPU); the warm-cache
fill 15-60 s per workload. For a rerun in about 15-20 minutes: `--reps 3 --workloads ruler`, or
`--reps 1` of both workloads, or `--reps 3 --variants anchor,ours_cold,ours_warm_nc` of both.
Then: python bench/side_by_side/analyse.py LOG.jsonl
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RULER_TASKS = ["niah_single_1", "niah_single_2", "niah_multikey_1"]
RULER_LENGTHS = {"4k": 4096, "32k": 32768, "128k": 131072}
RULER_ROWS = 25
PAPER_LENGTHS = {"8k": 8, "32k": 32, "128k": 128}
PAPER_ROWS = 20
PAPER_OURS_WHOLE_LENGTHS = ["2k", "8k", "32k", "128k"]
VARIANTS = [
    "anchor",
    "ours_cold",
    "ours_warm",
    "ours_cold_nc",
    "ours_warm_nc",
    "ours_prep",
    "ours_prep_nc",
]
TOKENIZER = "cl100k_base"


@dataclass(frozen=True)
class Item:
    """One thing to time: a workload's cell, length or whole, on the anchor and on ours."""

    workload: str
    scope: str  # "cell", "length" or "whole"
    tasks: tuple[str, ...]
    lengths: tuple[str, ...]
    anchor_runs: bool  # False where the anchor's figure is a sum of its cell runs

    @property
    def name(self) -> str:
        """ruler/niah_single_1@4k, ruler/all@4k, paper/all@all, ..."""
        task = self.tasks[0] if self.scope == "cell" else "all"
        length = "all" if self.scope == "whole" else self.lengths[0]
        return f"{self.workload}/{task}@{length}"


@dataclass(frozen=True)
class Setup:
    """Where things are: the prepared work folder, the mirror, and how ours is started."""

    work: Path
    sources: Path
    ours_python: str
    ours_checkout: Path | None
    keep_outputs: bool


def workload_items(workload: str) -> list[Item]:
    """Every item of one workload, cells first."""
    if workload == "ruler":
        lengths = list(RULER_LENGTHS)
        cells = [Item("ruler", "cell", (t,), (n,), True) for t in RULER_TASKS for n in lengths]
        per_length = [Item("ruler", "length", tuple(RULER_TASKS), (n,), False) for n in lengths]
        whole = Item("ruler", "whole", tuple(RULER_TASKS), tuple(lengths), False)
        return [*cells, *per_length, whole]
    if workload == "paper":
        per_length = [Item("paper", "length", ("all",), (n,), True) for n in PAPER_LENGTHS]
        whole = Item("paper", "whole", ("all",), tuple(PAPER_OURS_WHOLE_LENGTHS), True)
        return [*per_length, whole]
    raise SystemExit(f"error: unknown workload {workload!r} (ruler, paper)")


def selected_items(workloads: list[str], patterns: list[str]) -> list[Item]:
    """The items whose names match any pattern (all of them without patterns)."""
    items = [item for workload in workloads for item in workload_items(workload)]
    if patterns:
        items = [i for i in items if any(fnmatch.fnmatchcase(i.name, p) for p in patterns)]
    if not items:
        raise SystemExit(f"error: --cells {','.join(patterns)} selects nothing")
    return items


def base_env(**extra: str) -> dict[str, str]:
    """A clean environment: no user site, no inherited caches, offline hub clients."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PYTHONNOUSERSITE": "1",
    }
    env.update(extra)
    return env


def ruler_command(setup: Setup, item: Item, out: Path) -> tuple[list[str], dict[str, str], Path]:
    """RULER's prepare.py for one cell, in its venv and from its scripts folder."""
    venv = setup.work / "venv-ruler" / "bin"
    command = [
        str(venv / "python"), "data/prepare.py", "--save_dir", str(out),
        "--benchmark", "synthetic", "--task", item.tasks[0],
        "--tokenizer_path", TOKENIZER, "--tokenizer_type", "openai",
        "--max_seq_length", str(RULER_LENGTHS[item.lengths[0]]),
        "--model_template_type", "base", "--num_samples", str(RULER_ROWS),
    ]  # fmt: skip
    env = base_env(
        PATH=f"{venv}:/usr/local/bin:/usr/bin:/bin",  # prepare.py starts `python niah.py`
        NLTK_DATA=str(setup.work / "nltk_data"),
        TIKTOKEN_CACHE_DIR=str(setup.work / "tiktoken_cache"),
    )
    return command, env, setup.work / "ruler" / "scripts"


def paper_command(setup: Setup, item: Item, out: Path) -> tuple[list[str], dict[str, str], Path]:
    """The paper's generator: the whole script, or its loop for one length."""
    python = setup.work / "venv-paper" / "bin" / "python"
    command = [str(python), str(HERE / "paper_driver.py"), "--paper", str(setup.work / "paper")]
    command += ["--out", str(out), "--rows", str(PAPER_ROWS)]
    if item.scope == "whole":
        command += ["--lengths", ",".join(str(k) for k in PAPER_LENGTHS.values())]
    else:
        command += ["--one-length", str(PAPER_LENGTHS[item.lengths[0]])]
    env = base_env(
        LB100_SOURCES=str(setup.sources), TIKTOKEN_CACHE_DIR=str(setup.work / "tiktoken_cache")
    )
    return command, env, setup.work


def ours_command(
    setup: Setup, item: Item, out: Path, cache: Path, controls: bool
) -> tuple[list[str], dict[str, str], Path]:
    """``longbench100 generate`` for the item's tasks and lengths."""
    suite, rows = (
        ("ruler", RULER_ROWS) if item.workload == "ruler" else ("100-longbench", PAPER_ROWS)
    )
    command = [
        setup.ours_python, "-m", "longbench100", "generate", "--suite", suite,
        "--tasks", ",".join(item.tasks), "--lengths", ",".join(item.lengths),
        "--rows", str(rows), "--tokenizer", TOKENIZER, "--sources", str(setup.sources),
        "--out", str(out), "-q",
    ]  # fmt: skip
    if not controls:
        command.append("--no-controls")
    env = base_env(LONGBENCH100_CACHE=str(cache))
    if setup.ours_checkout:
        env["PYTHONPATH"] = str(setup.ours_checkout)
    return command, env, setup.work


def folder_digest(folder: Path, include: str) -> str | None:
    """sha256 over (relative path, file sha256) of the folder's files of one kind.

    include: "all" (every file), "data" (ours' data files: no manifest, no twins, none of the
    run's own bookkeeping, the files named with a leading dot, which list the twins where a run
    wrote them) or "controls" (ours' control twins). None when there is no such file.
    """
    entries = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        is_twin = relative.startswith("controls/")
        bookkeeping = relative == "manifest.json" or path.name.startswith(".")
        if include == "data" and (is_twin or bookkeeping):
            continue
        if include == "controls" and not is_twin:
            continue
        entries.append(f"{relative} {hashlib.sha256(path.read_bytes()).hexdigest()}")
    if not entries:
        return None
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages."""
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def timed_run(command: list[str], env: dict[str, str], cwd: Path, stderr_file: Path) -> dict:
    """Run to completion; wall time and the whole tree's CPU from os.wait4."""
    with open(stderr_file, "ab") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "rc": process.returncode,
        "wall_s": round(wall, 3),
        "user_s": round(usage.ru_utime, 3),
        "sys_s": round(usage.ru_stime, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "maxrss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def ours_cache(setup: Setup, variant: str) -> Path:
    """The cache a run of ours gets: a fresh empty one (cold), a fresh copy of the prepared one
    (prepared), or the shared filled one (warm)."""
    if variant.startswith("ours_cold"):
        return fresh_folder(setup.work / "cache-cold")
    if variant.startswith("ours_prep"):
        cache = setup.work / "cache-prep"
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(setup.work / "cache-prepared", cache)
        return cache
    return setup.work / "cache-warm"


def prepare_sources_cache(setup: Setup, log: Path) -> None:
    """Fill the prepared cache with `sources verify` alone (logged, not compared): every source
    read, cleaned and counted with the workloads' tokenizer, nothing of a task or a length."""
    cache = fresh_folder(setup.work / "cache-prepared")
    command = [
        setup.ours_python, "-m", "longbench100", "sources", "verify", "--sources",
        str(setup.sources), "--tokenizer", TOKENIZER, "-q",
    ]  # fmt: skip
    env = base_env(LONGBENCH100_CACHE=str(cache))
    if setup.ours_checkout:
        env["PYTHONPATH"] = str(setup.ours_checkout)
    record = {"kind": "prepare", "cmd": command}
    record.update(timed_run(command, env, setup.work, log.with_suffix(".stderr")))
    append(log, record)
    if record["rc"]:
        raise SystemExit(f"error: preparing the sources failed (see {log.with_suffix('.stderr')})")


def fresh_folder(path: Path) -> Path:
    """An empty folder at ``path`` (whatever was there is removed)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def run_variant(setup: Setup, item: Item, variant: str, rep: int, log: Path) -> dict:
    """Time one variant of one item and return its log record."""
    out = setup.work / "runs" / f"rep{rep}" / variant / item.name.replace("/", "_")
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    if variant == "anchor":
        build = ruler_command if item.workload == "ruler" else paper_command
        command, env, cwd = build(setup, item, out)
    else:
        cache = ours_cache(setup, variant)
        command, env, cwd = ours_command(setup, item, out, cache, not variant.endswith("_nc"))
    before = load_average()
    record: dict = {
        "kind": "run", "workload": item.workload, "scope": item.scope, "item": item.name,
        "tasks": list(item.tasks), "lengths": list(item.lengths), "variant": variant, "rep": rep,
        "controls": variant != "anchor" and not variant.endswith("_nc"),
    }  # fmt: skip
    record.update(timed_run(command, env, cwd, log.with_suffix(".stderr")))
    record.update(load_before=before, load_after=load_average(), t=time.strftime("%H:%M:%S"))
    is_ours = variant != "anchor"
    record["data_sha256"] = (
        folder_digest(out, "data" if is_ours else "all") if out.exists() else None
    )
    record["controls_sha256"] = folder_digest(out, "controls") if is_ours and out.exists() else None
    record["cmd"] = command
    if not setup.keep_outputs:
        shutil.rmtree(out, ignore_errors=True)
    return record


def append(log: Path, record: dict) -> None:
    """One JSON line."""
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def commit_of(folder: Path | None) -> str | None:
    """The checkout's HEAD commit, marked '+dirty' when it has uncommitted changes."""
    if folder is None:
        return None

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "HEAD")
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def meta_record(setup: Setup, event: str, args: argparse.Namespace) -> dict:
    """The run's context: date, uptime, commits of both sides, the options."""
    anchors = {
        name: (setup.work / f"{name}.commit").read_text().strip()
        for name in ("ruler", "paper")
        if (setup.work / f"{name}.commit").exists()
    }
    uptime = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout
    return {
        "kind": event, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "uptime": uptime.strip(),
        "load": load_average(), "cpus": os.cpu_count(), "anchors": anchors,
        "ours_commit": commit_of(setup.ours_checkout), "ours_python": setup.ours_python,
        "reps": args.reps, "first_rep": args.first_rep,
        "workloads": args.workloads, "cells": args.cells, "variants": args.variants,
    }  # fmt: skip


def prefill_warm_cache(setup: Setup, items: list[Item], log: Path) -> None:
    """Fill the warm cache by running each selected item once, twins on (logged, not compared).

    Every item, not only the whole workload: a one-length run draws other documents for its twins
    than a run of all lengths does, so a cache filled by the whole run alone leaves a per-length
    run with twins partly cold.
    """
    fresh_folder(setup.work / "cache-warm")
    for item in items:
        record = run_variant(setup, item, "ours_warm", 0, log)
        record["kind"] = "prefill"
        append(log, record)
        if record["rc"]:
            raise SystemExit(
                f"error: the warm-cache fill failed (see {log.with_suffix('.stderr')})"
            )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", required=True, type=Path, help="the folder setup.sh prepared")
    parser.add_argument("--sources", required=True, type=Path, help="the source mirror")
    parser.add_argument("--log", required=True, type=Path, help="JSONL log (appended to)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--first-rep", type=int, default=1, help="number of the first rep (to add reps to a log)"
    )
    parser.add_argument("--workloads", default="ruler,paper")
    parser.add_argument("--cells", default="", help="comma-separated name patterns")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--ours-python", help="default: WORK/venv-ours/bin/python")
    parser.add_argument("--ours-checkout", type=Path, help="put this checkout on PYTHONPATH")
    parser.add_argument("--keep-outputs", action="store_true", help="keep every output folder")
    args = parser.parse_args(argv)
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.cells = [p for p in args.cells.split(",") if p]
    args.variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(args.variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown} (known: {', '.join(VARIANTS)})")
    return args


def main(argv: list[str] | None = None) -> None:
    """Prefill the warm cache, then time every selected item's variants, rep by rep."""
    args = parse_args(argv)
    ours_python = args.ours_python or str(args.work / "venv-ours" / "bin" / "python")
    for needed in (args.work / "ruler", args.work / "paper", Path(ours_python)):
        if not needed.exists():
            raise SystemExit(f"error: {needed} is missing (run setup.sh, or give --ours-python)")
    checkout = args.ours_checkout.resolve() if args.ours_checkout else None
    setup = Setup(
        args.work.resolve(), args.sources.resolve(), ours_python, checkout, args.keep_outputs
    )
    items = selected_items(args.workloads, args.cells)
    append(args.log, meta_record(setup, "start", args))
    if any(v.startswith("ours_warm") for v in args.variants):
        prefill_warm_cache(setup, items, args.log)
    if any(v.startswith("ours_prep") for v in args.variants):
        prepare_sources_cache(setup, args.log)
    for rep in range(args.first_rep, args.first_rep + args.reps):
        order = args.variants if rep % 2 else args.variants[::-1]
        for item in items:
            for variant in order:
                if variant == "anchor" and not item.anchor_runs:
                    continue
                record = run_variant(setup, item, variant, rep, args.log)
                append(args.log, record)
                timing = f"cpu={record['cpu_s']:.2f}s wall={record['wall_s']:.2f}s"
                print(
                    f"rep {rep} {item.name:28} {variant:13} rc={record['rc']} {timing}", flush=True
                )
    append(args.log, meta_record(setup, "end", args))


if __name__ == "__main__":
    main()
