"""From a probe folder and its outcomes (predictions or the oracle) to the per-problem fit and task shares."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from longbench100.analysis.dolce.categories import (
    NEVER_SOLVED_RULES,
    category,
    is_solved,
    problem_category,
    rule_categories,
    thresholds,
)
from longbench100.analysis.dolce.estimators import DEFAULT_ESTIMATOR, Estimator, get_estimator
from longbench100.analysis.dolce.outcomes import score_replies
from longbench100.analysis.dolce.probes import PROBE_KIND
from longbench100.analysis.dolce.refined_em import OUTCOMES, Fit, Problem
from longbench100.analysis.dolce.windows import covers, noisy_outcome
from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError
from longbench100.core.version import __version__
from longbench100.folders.data_records import DataRecord, data_files, parse_record
from longbench100.folders.layout import MANIFEST, read_folder_manifest, read_jsonl
from longbench100.scoring.predictions import load_predictions, match_predictions

MIN_SUBSET = 10  # a task is split into COW and PIG only when both have more than this many problems
DIP_THRESHOLD = 0.5
UNSOLVED_WARNING_SHARE = 0.5  # warn when more than this share of a task's problems is never solved
LOW_ORACLE_WEIGHT = 0.05  # warn when the task's mean fitted oracle weight P_i(O) is below this
_DIGITS = 6


@dataclass(frozen=True)
class Probe:
    """One probe record: its data record (for the metric) and where its window sits."""

    record: DataRecord
    problem: str
    units: str
    length: int
    size: int
    start: int
    gold_units: tuple[int, int] | None


def load_probes(probe_dir: Path) -> tuple[list[Probe], dict]:
    """Read a probe folder written by ``dolce probes``; returns the probes and its manifest."""
    manifest = read_folder_manifest(probe_dir) or {}
    if manifest.get("kind") != PROBE_KIND:
        raise UserError(
            f"--probes {probe_dir}: not a probe folder (its {MANIFEST} must say kind {PROBE_KIND!r})"
        )
    probes = []
    for file in data_files(probe_dir, "--probes"):
        for where, value in read_jsonl(file):
            record = parse_record(value, where)
            origin = (value.get("gold") or {}).get("dolce")
            if not isinstance(origin, dict):
                raise UserError(f"{where}: no gold.dolce (not a probe record)")
            gold = origin.get("gold_units")
            probes.append(
                Probe(
                    record,
                    origin["problem"],
                    origin["units"],
                    origin["L"],
                    origin["C"],
                    origin["start"],
                    tuple(gold) if gold else None,
                )
            )
    return probes, manifest


def prediction_outcomes(probes: list[Probe], predictions_path: Path) -> list[float | None]:
    """Score every probe's prediction; a failed request (prediction null) is an error naming the probe."""
    ids = [probe.record.id for probe in probes]
    by_id, _ = match_predictions(
        load_predictions(predictions_path),
        ids,
        set(ids),
        allow_missing=False,
        source=predictions_path,
        missing_hint="answer every probe: rerun `longbench100 predict` on the probe folder, it resumes",
    )
    replies = [by_id[probe_id].prediction for probe_id in ids]
    failed = [probe_id for probe_id, reply in zip(ids, replies) if reply is None]
    if failed:
        raise UserError(
            f"--predictions {predictions_path}: {len(failed)} probes have no answer (failed requests, "
            f"e.g. {failed[0]}); run predict again to fill them"
        )
    answered = [reply for reply in replies if reply is not None]
    return score_replies([probe.record for probe in probes], answered)


def oracle_outcomes(probes: list[Probe], noise: float, seed: int) -> list[float | None]:
    """The oracle's outcome per probe: correct iff the window holds all the gold units, else IDK; with
    probability ``noise`` a random outcome (seeded per probe id, so order does not matter)."""
    if not 0 <= noise <= 1:
        raise UserError(f"--oracle-noise {noise}: give a probability from 0 to 1")
    outcomes = []
    for probe in probes:
        seen = probe.gold_units is not None and covers(probe.start, probe.size, [probe.gold_units])
        outcomes.append(noisy_outcome(seen, noise, random.Random(f"{seed}:{probe.record.id}")))
    return outcomes


def outcome_kind(task_metric: str, outcomes: list[float | None]) -> str:
    """COW or PIG for one problem: accuracy tasks and all-binary outcomes are COW; otherwise Hartigan's
    dip test on the 0.1-wide histogram of the outcomes (IDK as 0): p < 0.5 (multimodal) is COW.

    The histogram enters the test as a piecewise-uniform sample (each bin's n values spread evenly
    across the bin): raw bin centres would be heavily tied, and ties alone make the dip test reject.
    """
    values = [0.0 if outcome is None else outcome for outcome in outcomes]
    if task_metric == "accuracy" or all(value in (0.0, 1.0) for value in values):
        return "COW"
    import diptest  # noqa: PLC0415 - only needed for F1/ROUGE tasks

    counts = np.bincount(np.minimum(np.floor(np.array(values) * 10), 9).astype(int), minlength=10)
    spread = np.concatenate(
        [(index + (np.arange(n) + 0.5) / n) / 10 for index, n in enumerate(counts) if n]
    )
    _, p_value = diptest.diptest(spread)
    return "COW" if p_value < DIP_THRESHOLD else "PIG"


def run_fit(
    probes: list[Probe],
    outcomes: list[float | None],
    manifest: dict,
    source: dict,
    estimator: str = DEFAULT_ESTIMATOR,
    never_solved: str | None = None,
) -> dict:
    """Fit every task with ``estimator`` (``paper`` or ``refined``) and return the dolce.json object
    (the estimator, per-problem rows, per-task shares and warnings).

    ``never_solved`` says what a problem no probe answered right gets as its category: ``flag`` (the
    category its fit gives, with ``solved: false``) or ``ns`` (the category NS); None takes the
    estimator's own rule (paper: flag, refined: ns).
    """
    chosen = get_estimator(estimator)
    rule = chosen.never_solved if never_solved is None else never_solved
    if rule not in NEVER_SOLVED_RULES:
        choices = ", ".join(NEVER_SOLVED_RULES)
        raise UserError(f"unknown never-solved rule {rule!r}: choose from {choices}")
    problems: dict[str, list[tuple[Probe, float | None]]] = {}
    for probe, outcome in zip(probes, outcomes):
        problems.setdefault(probe.problem, []).append((probe, outcome))
    by_task: dict[str, list[str]] = {}
    for problem_id, items in problems.items():
        by_task.setdefault(items[0][0].record.task, []).append(problem_id)
    rows, tasks = [], {}
    for task, ids in by_task.items():
        task_rows, task_summary = _fit_task(task, ids, problems, chosen, rule)
        rows += task_rows
        tasks[task] = task_summary
    return _rounded(
        {
            "tool": "longbench100",
            "version": __version__,
            "probes": {
                "manifest_sha256": manifest.get("derived_from", {}).get("manifest_sha256"),
                "units": manifest.get("units"),
            },
            "source": source,
            "estimator": {"name": chosen.name, "description": chosen.description},
            "never_solved": rule,
            "categories": list(rule_categories(rule)),
            "tasks": tasks,
            "problems": rows,
        }
    )


def _fit_task(
    task: str,
    ids: list[str],
    problems: dict[str, list[tuple[Probe, float | None]]],
    estimator: Estimator,
    never_solved: str,
) -> tuple[list[dict], dict]:
    """Decide COW/PIG, fit each subset, and build the rows and the summary of one task."""
    data = {
        problem_id: Problem(
            problem_id,
            problems[problem_id][0][0].length,
            tuple(probe.size for probe, _ in problems[problem_id]),
            tuple(outcome for _, outcome in problems[problem_id]),
        )
        for problem_id in ids
    }
    metric = TASKS[task].metric
    kinds = {
        problem_id: outcome_kind(metric, list(data[problem_id].outcomes)) for problem_id in ids
    }
    tally = Counter(kinds.values())
    if min(tally.get("COW", 0), tally.get("PIG", 0)) <= MIN_SUBSET:
        majority = "COW" if tally.get("COW", 0) >= tally.get("PIG", 0) else "PIG"
        kinds = {problem_id: majority for problem_id in ids}
    fits: dict[str, Fit] = {}
    noise = None
    cow = [data[problem_id] for problem_id in ids if kinds[problem_id] == "COW"]
    pig = [data[problem_id] for problem_id in ids if kinds[problem_id] == "PIG"]
    if cow:
        cow_fits, noise = estimator.fit_cow(cow)
        fits.update({problem.id: fit for problem, fit in zip(cow, cow_fits)})
    if pig:
        fits.update({problem.id: fit for problem, fit in zip(pig, estimator.fit_pig(pig))})
    rows = [
        _row(
            task,
            data[problem_id],
            problems[problem_id],
            kinds[problem_id],
            fits[problem_id],
            never_solved,
        )
        for problem_id in ids
    ]
    names = rule_categories(never_solved)
    counts = Counter(row["category"] for row in rows)
    unsolved = Counter(row["category"] for row in rows if not row["solved"])
    summary = {
        "problems": len(rows),
        "kinds": {kind: sum(value == kind for value in kinds.values()) for kind in ("COW", "PIG")},
        "noise": dict(zip(OUTCOMES, noise)) if noise else None,
        "counts": {name: counts.get(name, 0) for name in names},
        "shares": {name: counts.get(name, 0) / len(rows) for name in names},
        "never_solved": {name: unsolved.get(name, 0) for name in names},
        "warnings": _task_warnings(rows, [data[problem_id] for problem_id in ids]),
    }
    expected = [row["expected"] for row in rows if row.get("expected")]
    if expected:
        summary["confusion"] = _confusion(rows, names)
    return rows, summary


def _row(
    task: str,
    problem: Problem,
    items: list[tuple[Probe, float | None]],
    kind: str,
    fit: Fit,
    never_solved: str,
) -> dict:
    """One problem's row of dolce.json."""
    limits = thresholds(list(problem.windows), problem.length)
    first = items[0][0]
    solved = is_solved(problem.outcomes, kind)
    row = {
        "id": problem.id,
        "task": task,
        "label": first.record.label,
        "units": first.units,
        "L": problem.length,
        "kind": kind,
        "lambda": fit.lam,
        "k": fit.k,
        "category": problem_category(fit.lam, fit.k, limits, solved, never_solved),
        "solved": solved,
        "thresholds": {"lambda_p": limits.lambda_p, "k_p": limits.k_p, "lambda_q": limits.lambda_q},
        "oracle": {
            "weight": fit.oracle_weight,
            "below_lambda": dict(zip(OUTCOMES, fit.oracle_below)) if fit.oracle_below else None,
        },
        "log_likelihood": fit.log_likelihood,
        "outcomes": _outcome_table(items),
    }
    if first.gold_units is not None:
        span = first.gold_units[1] - first.gold_units[0]
        row["expected"] = {
            "lambda": span,
            "k": 1,
            "category": category(span, 1, limits),
            "gold_units": list(first.gold_units),
        }
    return row


def _task_warnings(rows: list[dict], problems: list[Problem]) -> list[str]:
    """Why a task's categories should not be trusted: a single problem, every answer "I don't know",
    mostly unsolved problems, or an oracle that explains almost nothing (answers mostly noise)."""
    warnings = []
    if len(rows) == 1:
        warnings.append(
            "only one problem: the task's noise is fitted from that problem alone, so its category is unreliable"
        )
    if all(outcome is None for problem in problems for outcome in problem.outcomes):
        warnings.append(
            'every probe was answered "I don\'t know", whole context included: '
            "the categories only say that no window was ever answered, not where "
            "the answer lies"
        )
    unsolved = sum(not row["solved"] for row in rows)
    if unsolved > UNSOLVED_WARNING_SHARE * len(rows):
        warnings.append(
            f"{unsolved} of {len(rows)} problems are never answered right at any "
            "window, whole context included: the model does not solve this task, so "
            "its focus cannot be read from them"
        )
    weight = sum(row["oracle"]["weight"] for row in rows) / len(rows)
    if weight < LOW_ORACLE_WEIGHT:
        warnings.append(
            f"the fitted oracle explains {weight:.1%} of the outcomes on average: the answers are mostly noise"
        )
    return warnings


def _outcome_table(items: list[tuple[Probe, float | None]]) -> dict[str, dict[str, float]]:
    """Per window size: probes, correct (score >= 0.5), wrong, IDK and the mean score."""
    table: dict[str, dict[str, float]] = {}
    for probe, outcome in items:
        cell = table.setdefault(
            str(probe.size), {"n": 0, "correct": 0, "wrong": 0, "idk": 0, "mean": 0.0}
        )
        cell["n"] += 1
        if outcome is None:
            cell["idk"] += 1
        else:
            cell["correct" if outcome >= 0.5 else "wrong"] += 1
            cell["mean"] += outcome
    for cell in table.values():
        cell["mean"] = cell["mean"] / cell["n"]
    return table


def _confusion(rows: list[dict], names: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Expected category (from provenance) -> fitted category counts, over ``names``."""
    confusion: dict[str, dict[str, int]] = {}
    for row in rows:
        cell = confusion.setdefault(row["expected"]["category"], {name: 0 for name in names})
        cell[row["category"]] += 1
    return confusion


def _rounded(value: dict) -> dict:
    """A JSON object with every float inside rounded to six digits (readable, stable)."""
    return {key: _rounded_value(item) for key, item in value.items()}


def _rounded_value(value: object) -> object:
    """One JSON value with its floats rounded as :func:`_rounded` rounds them."""
    if isinstance(value, float):
        return round(value, _DIGITS)
    if isinstance(value, dict):
        return _rounded(value)
    if isinstance(value, list):
        return [_rounded_value(item) for item in value]
    return value
