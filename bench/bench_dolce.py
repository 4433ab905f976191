"""Measure the Dolce fit: speed, recovery of known (lambda, k), stride agreement, and the oracle on real data.

    .venv/bin/python bench/bench_dolce.py [--problems 1000] [--probes 300] [--data DIR ...] [--seed 0]

The oracle rows read data folders made with ``longbench100 generate --sources MIRROR
--tasks passage_retrieval,single_doc_qa,passage_count,kv_retrieval --rows 30 --lengths 4k --out
/tmp/h-data`` (and ``--lengths 16k --out /tmp/h16-data``), the default ``--data``.

1. Timing: ``--problems`` simulated problems with about ``--probes`` probes each (L = 300 units,
   windows 0,1,2,5,10,20,50,100,200,all thinned evenly), one ``fit_cow`` call.
2. Recovery, for each estimator (``paper``, the default, and ``refined``): 300 problems per noise level, (lambda, k) drawn uniformly from the distinguishable
   candidate grid (``fit.distinct_pairs``: one pair per class of pairs that no probe can tell apart),
   L in {100, 200, 300}, windows 0,1,2,5,10,20,50,all and the default 0,...,500,all, every window;
   outcomes drawn from the model itself and from one fixed layout per problem. Exact = same canonical
   (lambda, k); category = same category I-V; ceiling = the exact rate of the best possible
   estimator: the maximum-likelihood distinguishable pair under the true model with the true noise
   rate known (ties shared), which is the Bayes-optimal guess for a truth drawn uniformly from that
   grid, so no estimator can do better on average on "model" outcomes. The stride and oracle rows use
   the refined estimator. "Decided by the outcomes":
   problems whose truth is that estimator's only best pair; "exact where decided": our fit's exact
   rate on them.
3. Stride: the same layouts probed at every window and at every 5th window start, with truths from
   the grid (every lambda equal to a window size: the hardest case for a stride) and off the grid
   (lambda and k log-uniform), at every noise level.
4. Oracle (for each ``--data`` folder that exists): probes of the data folder (passage units, and sentence units
   thinned to 300 probes per problem), oracle fit against the provenance's category, full vs stride 5
   (also with oracle noise 5, 10 and 20%);
   for the one-passage tasks agreement split by whether the gold unit is the first or last unit.
"""

from __future__ import annotations

import argparse
import math
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from longbench100.analysis.dolce.categories import category, thresholds
from longbench100.analysis.dolce.estimators import ESTIMATORS
from longbench100.analysis.dolce.pipeline import load_probes, oracle_outcomes, run_fit
from longbench100.analysis.dolce.probes import ProbeOptions, build_probes, write_probes
from longbench100.analysis.dolce.refined_em import Problem, canonical_pair, fit_cow
from longbench100.analysis.dolce.simulate import best_possible_hit, grid_truths, simulate_problem

RECOVERY_SIZES = (0, 1, 2, 5, 10, 20, 50)
DEFAULT_SIZES = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500)  # `dolce probes` default windows
NOISE_LEVELS = (0.0, 0.05, 0.1, 0.2)
ORACLE_NOISE = (0.05, 0.1, 0.2)


def _category(lam: int, k: int, problem: Problem) -> str:
    return category(lam, k, thresholds(list(problem.windows), problem.length))


def timing(problems: int, probes: int, seed: int) -> None:
    rng = random.Random(seed)
    sizes = (0, 1, 2, 5, 10, 20, 50, 100, 200)
    truths = grid_truths(sizes, 300)
    data = [
        simulate_problem(
            str(i), *rng.choice(truths), 300, sizes, 0.1, rng, draw="layout", max_per_problem=probes
        )
        for i in range(problems)
    ]
    total = sum(len(problem.windows) for problem in data)
    start = time.perf_counter()
    fit_cow(data)
    elapsed = time.perf_counter() - start
    print(
        f"timing: {problems} problems, {total} probes ({total / problems:.0f} each): fit_cow {elapsed:.2f} s"
    )


def _spearman(a: list[int], b: list[int]) -> float:
    def ranks(values: list[int]) -> np.ndarray:
        unique, inverse = np.unique(values, return_inverse=True)
        order = np.argsort(np.argsort(values, kind="stable"), kind="stable").astype(float)
        for index in range(len(unique)):  # average ranks over ties
            order[inverse == index] = order[inverse == index].mean()
        return order

    ra, rb = ranks(a), ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1]) if ra.std() and rb.std() else float("nan")


def recovery(seed: int, estimator: str, count: int = 300) -> None:
    """Recovery rows for one estimator; a fitted pair counts as exact when it is observationally
    equivalent to the truth (the paper's estimator searches the uncollapsed grid)."""
    fit_task = ESTIMATORS[estimator].fit_cow
    print(
        f"recovery, estimator {estimator} ({count} problems per row; truths uniform on the distinguishable candidate grid):"
    )
    print(
        "| windows | draw | noise | exact (lambda, k) | category | ceiling (best possible exact) "
        "| decided by the outcomes | exact where decided |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for grid, sizes in (("0-50", RECOVERY_SIZES), ("0-500 (default)", DEFAULT_SIZES)):
        for draw in ("model", "layout"):
            for noise in NOISE_LEVELS:
                rng = random.Random(seed)
                truths, data = [], []
                for index in range(count):
                    length = rng.choice((100, 200, 300))
                    truth = rng.choice(grid_truths(sizes, length))
                    truths.append(truth)
                    data.append(
                        simulate_problem(str(index), *truth, length, sizes, noise, rng, draw=draw)
                    )
                fits, _ = fit_task(data)
                hits = [
                    canonical_pair(fit.lam, fit.k, problem.windows, problem.length) == truth
                    for truth, fit, problem in zip(truths, fits, data)
                ]
                same = sum(
                    _category(*truth, problem) == _category(fit.lam, fit.k, problem)
                    for truth, fit, problem in zip(truths, fits, data)
                )
                best = [
                    best_possible_hit(problem, truth, noise) for truth, problem in zip(truths, data)
                ]
                decided = [
                    hit for hit, chance in zip(hits, best) if chance == 1.0
                ]  # the truth is the only best pair
                print(
                    f"| {grid} | {draw} | {noise:.2f} | {sum(hits) / count:.1%} | {same / count:.1%} | "
                    f"{sum(best) / count:.1%} | {len(decided)}/{count} | {sum(decided) / len(decided):.1%} |"
                )


def _log_uniform_truth(length: int, rng: random.Random) -> tuple[int, int]:
    """A (lambda, k) off the grid: lambda log-uniform on 1..L, k log-uniform on 1..L // lambda."""
    lam = min(int(math.exp(rng.uniform(0, math.log(length + 1)))), length)
    return lam, min(int(math.exp(rng.uniform(0, math.log(length // lam + 1)))), length // lam)


def stride(seed: int, count: int = 300) -> None:
    print(f"stride 5 vs every window (same layouts; {count} problems per row):")
    print(
        "| truths | noise | calls full | calls stride 5 | category agreement | Spearman lambda | Spearman k "
        "| category = truth, full / stride 5 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for truths in ("grid", "log-uniform"):
        for noise in NOISE_LEVELS:
            rng = random.Random(seed)
            setups = []
            for index in range(count):
                length = rng.choice((100, 200, 300))
                truth = (
                    rng.choice(grid_truths(RECOVERY_SIZES, length))
                    if truths == "grid"
                    else _log_uniform_truth(length, rng)
                )
                setups.append((index, truth, length))
            runs = {}
            for step in (1, 5):
                data = [
                    simulate_problem(
                        str(index),
                        *truth,
                        length,
                        RECOVERY_SIZES,
                        noise,
                        random.Random(seed * 7919 + index),
                        stride=step,
                        draw="layout",
                    )
                    for index, truth, length in setups
                ]
                runs[step] = (data, fit_cow(data)[0])
            (full, full_fits), (thin, thin_fits) = runs[1], runs[5]
            agree = sum(
                _category(a.lam, a.k, p) == _category(b.lam, b.k, p)
                for a, b, p in zip(full_fits, thin_fits, full)
            )
            right = [
                sum(
                    _category(f.lam, f.k, p) == _category(*truth, p)
                    for f, p, (_, truth, _) in zip(fits, full, setups)
                )
                for fits in (full_fits, thin_fits)
            ]
            calls = [sum(len(problem.windows) for problem in data) for data in (full, thin)]
            print(
                f"| {truths} | {noise:.2f} | {calls[0]} | {calls[1]} ({calls[1] / calls[0]:.0%}) | {agree / count:.1%} | "
                f"{_spearman([f.lam for f in full_fits], [f.lam for f in thin_fits]):.2f} | "
                f"{_spearman([f.k for f in full_fits], [f.k for f in thin_fits]):.2f} | "
                f"{right[0] / count:.1%} / {right[1] / count:.1%} |"
            )


def oracle(data_dir: Path, seed: int) -> None:
    print(f"oracle on {data_dir}:")
    with tempfile.TemporaryDirectory() as scratch:
        for units, cap in (("passage", None), ("sentence", 300)):
            fits, probe_sets = {}, {}
            for step in (1, 5):
                options = ProbeOptions(
                    data_dir=data_dir,
                    units=units,
                    sizes=DEFAULT_SIZES,
                    stride=step,
                    max_per_problem=cap,
                )
                out = Path(scratch) / f"{units}-{step}"
                probe_set = build_probes(options)
                write_probes(probe_set, options, out)
                probes, manifest = load_probes(out)
                probe_sets[step] = (probes, manifest)
                fits[step] = run_fit(
                    probes,
                    oracle_outcomes(probes, 0.0, seed),
                    manifest,
                    {"oracle": True},
                    "refined",
                )
                print(f"  units {units}, stride {step}: {probe_set.requests} calls")
                for task, summary in fits[step]["tasks"].items():
                    rows = [row for row in fits[step]["problems"] if row["task"] == task]
                    agree = sum(row["category"] == row["expected"]["category"] for row in rows)
                    print(
                        f"    {task}: fitted {summary['counts']}  agrees with provenance {agree}/{len(rows)}  "
                        f"confusion {summary['confusion']}"
                    )
                    single = [row for row in rows if row["expected"]["lambda"] == 1]
                    if units == "passage" and single:
                        edge = [
                            row
                            for row in single
                            if row["expected"]["gold_units"][0] in (0, row["L"] - 1)
                        ]
                        print(
                            f"      gold in the first or last unit: {sum(r['category'] == r['expected']['category'] for r in edge)}"
                            f"/{len(edge)} agree; elsewhere: "
                            f"{sum(r['category'] == r['expected']['category'] for r in single if r not in edge)}"
                            f"/{len(single) - len(edge)}"
                        )
            same = sum(
                a["category"] == b["category"]
                for a, b in zip(fits[1]["problems"], fits[5]["problems"])
            )
            print(
                f"  units {units}: stride 5 agrees with every window on {same}/{len(fits[1]['problems'])} problems"
            )
            for noise in (
                ORACLE_NOISE
            ):  # the same probe gets the same noisy outcome at both strides (seeded by id)
                noisy = {
                    step: run_fit(
                        probes,
                        oracle_outcomes(probes, noise, seed),
                        manifest,
                        {"oracle": True},
                        "refined",
                    )
                    for step, (probes, manifest) in probe_sets.items()
                }
                rows = {step: noisy[step]["problems"] for step in noisy}
                same = sum(a["category"] == b["category"] for a, b in zip(rows[1], rows[5]))
                right = [
                    sum(row["category"] == row["expected"]["category"] for row in rows[step])
                    for step in (1, 5)
                ]
                print(
                    f"  units {units}, oracle noise {noise}: stride 5 agrees with every window on {same}/{len(rows[1])};"
                    f" agrees with provenance: every window {right[0]}, stride 5 {right[1]}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--problems", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=300)
    parser.add_argument(
        "--data",
        type=Path,
        nargs="*",
        default=[Path("/tmp/h-data"), Path("/tmp/h16-data")],
        help="generated data folders for the oracle rows (see the module docstring)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--recovery-only", action="store_true", help="only the recovery rows, for both estimators"
    )
    args = parser.parse_args()
    if args.recovery_only:
        for name in ESTIMATORS:
            recovery(args.seed, name)
        return
    timing(args.problems, args.probes, args.seed)
    for name in ESTIMATORS:
        recovery(args.seed, name)
    stride(args.seed)
    for data_dir in args.data:
        if data_dir.is_dir():
            oracle(data_dir, args.seed)


if __name__ == "__main__":
    main()
