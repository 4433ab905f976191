"""``longbench100 filter``: drop the QA items that filter models answer closed-book, into a new data folder.

The scoring machinery is imported when the command runs, so ``filter --help`` starts at once.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from longbench100.core import console
from longbench100.core.errors import UserError
from longbench100.scoring.qa_filter.threshold import DEFAULT_THRESHOLD, parse_threshold

from .data_folder_option import data_folder_option
from .score import judge_options

if TYPE_CHECKING:
    from longbench100.folders.data_records import DataRecord
    from longbench100.llm.options import JudgeOptions
    from longbench100.scoring.qa_filter.closed_book import FilterModel

    from ..scoring.grading import GradeJob


def _load_models(
    paths: list[Path],
    records: list[DataRecord],
    qa: list[DataRecord],
    allow_missing: bool,
    manifest: str | None,
) -> list[FilterModel]:
    """Read each filter model's predictions, checked against the QA ids (unknown ids are an error) and prompts."""
    from longbench100.scoring.qa_filter.closed_book import FilterModel
    from longbench100.scoring.run import default_model_name, read_predictions

    known = {record.id for record in records}
    names = [default_model_name(path) for path in paths]
    models = []
    for path, name in zip(paths, names):
        unique = name if names.count(name) == 1 else str(path)
        models.append(
            FilterModel(
                unique, path, read_predictions(path, qa, known, manifest, allow_missing, click.echo)
            )
        )
    return models


@click.command("filter")
@data_folder_option()
@click.option(
    "--predictions",
    "first_predictions",
    type=click.Path(path_type=Path),
    required=True,
    multiple=True,
    help="Filter models' predictions (file or folder); give several after one --predictions.",
)
@click.argument("more_predictions", nargs=-1, type=click.Path(path_type=Path), metavar="[P2 ...]")
@click.option(
    "--qa-filter",
    "qa_filter",
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Drop a QA item when any filter model's closed-book score is at or above this (0-1).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="New data folder to write.",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Accept QA records a filter model has no prediction for (not dropped).",
)
@judge_options
def filter_command(
    data_dir: Path,
    first_predictions: tuple[Path, ...],
    more_predictions: tuple[Path, ...],
    qa_filter: str,
    out_dir: Path,
    allow_missing: bool,
    metric_mode: str,
    judge: JudgeOptions,
    dry_run: bool,
    price_in: float | None,
    price_out: float | None,
) -> None:
    """Write a copy of a data folder without the QA items that any filter model answers closed-book.

    \b
    Usage: longbench100 filter --data OUT --predictions P1 [P2 ...] --out OUT_FILTERED
    A flagged question is dropped at every length. Non-QA files are copied unchanged; manifest.json
    gets the new files' sha256 and row counts, the filter's record, and the original manifest.
    """
    from longbench100.catalog.judge_styles import resolve_judge_style
    from longbench100.catalog.suites import recorded_suite
    from longbench100.folders.data_records import load_data, manifest_sha256
    from longbench100.folders.layout import read_folder_manifest
    from longbench100.folders.lock import output_lock
    from longbench100.judge.cost import check_prices, plan_lines
    from longbench100.scoring.grading import (
        JUDGE_METRICS,
        choose_metrics,
        grade_jobs,
        judge_prompts,
    )
    from longbench100.scoring.qa_filter.closed_book import drops, qa_records
    from longbench100.scoring.qa_filter.filtered_folder import check_filter_out, write_filtered
    from longbench100.scoring.run import prepare_judge

    threshold = parse_threshold(qa_filter)
    if threshold is None:
        raise UserError("--qa-filter off makes filter a copy; give a threshold from 0 to 1")
    check_prices(price_in, price_out)
    check_filter_out(data_dir, out_dir, list(first_predictions + more_predictions))
    records = load_data(data_dir)
    qa = qa_records(records)
    if not qa:
        raise UserError(
            f"--data {data_dir}: no QA records (tasks with closed-book prompts) to filter"
        )
    models = _load_models(
        list(first_predictions + more_predictions),
        records,
        qa,
        allow_missing,
        manifest_sha256(data_dir),
    )
    # the data suite's rubrics, as score's default
    judge_style = resolve_judge_style(None, recorded_suite(read_folder_manifest(data_dir)))
    metrics = choose_metrics(
        list(dict.fromkeys(record.task for record in qa)),
        metric_mode,
        bool(judge.model),
        judge_style=judge_style,
    )
    jobs_per_model = [model.jobs(qa, metrics) for model in models]
    all_jobs = [job for jobs in jobs_per_model for job in jobs]
    uses_judge = any(metric in JUDGE_METRICS for metric in metrics.values())
    prompts = judge_prompts(all_jobs)
    grader = prepare_judge(judge, prompts, dry_run, console.echo) if uses_judge else None
    if dry_run:
        plan = grader.plan(prompts) if grader else None
        for line in plan_lines(plan, judge.max_tokens, price_in, price_out):
            click.echo(line)
        return
    scores = grade_jobs(all_jobs, grader, progress=sys.stderr.isatty() and not console.quiet())
    model_entries = _flag_all(models, jobs_per_model, scores, threshold, qa)
    dropped = drops(qa, models)
    record = {
        "threshold": threshold,
        "metric_mode": metric_mode,
        "metrics": metrics,
        "judge": grader.describe() if grader else None,
        "source": {"path": str(data_dir), "manifest_sha256": manifest_sha256(data_dir)},
        "models": model_entries,
        "counts": _counts(qa, dropped),
        "dropped_ids": dropped,
    }
    with output_lock(out_dir, "--out"):
        write_filtered(data_dir, out_dir, set(dropped), record)
    _print_summary(record, out_dir)


def _flag_all(
    models: list[FilterModel],
    jobs_per_model: list[list[GradeJob]],
    scores: list[float | None],
    threshold: float,
    qa: list[DataRecord],
) -> list[dict]:
    """Flag each model's records from its slice of ``scores``; return one manifest entry per model."""
    from longbench100.scoring.qa_filter.closed_book import flag

    entries = []
    start = 0
    for model, jobs in zip(models, jobs_per_model):
        model_scores = scores[start : start + len(jobs)]
        start += len(jobs)
        flag(model, jobs, model_scores, threshold)
        entries.append(
            {
                "name": model.name,
                "predictions": str(model.path),
                "flagged": len(model.flagged),
                "without_closed_book": model.without_closed_book(qa),
                "ungraded": sum(score is None for score in model_scores),
            }
        )
    return entries


def _counts(
    qa: list[DataRecord], dropped: dict[str, list[str]]
) -> dict[str, dict[str, dict[str, int]]]:
    """QA records and dropped records per task and length label, in data order."""
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for record in qa:
        cell = counts.setdefault(record.task, {}).setdefault(record.label, {"n": 0, "dropped": 0})
        cell["n"] += 1
        cell["dropped"] += record.id in dropped
    return counts


def _print_summary(record: dict, out_dir: Path) -> None:
    """Say what each model flagged and what was dropped per task and length."""
    for model in record["models"]:
        notes = []
        if model["without_closed_book"]:
            notes.append(f"{model['without_closed_book']} QA records without a closed-book answer")
        if model["ungraded"]:
            notes.append(f"{model['ungraded']} closed-book answers the judge could not grade")
        extra = f" ({'; '.join(notes)})" if notes else ""
        click.echo(
            f"{model['name']}: flagged {model['flagged']} QA records (closed-book >= {record['threshold']}){extra}"
        )
    for task, labels in record["counts"].items():
        cells = ", ".join(
            f"{label} {cell['dropped']}/{cell['n']}" for label, cell in labels.items()
        )
        click.echo(f"{task}: dropped {cells}")
    click.echo(f"wrote {out_dir} ({len(record['dropped_ids'])} QA records dropped)")
