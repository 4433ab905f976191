"""``longbench100 score``: grade one model's predictions, apply the QA filter, compute LongScore."""

import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..lengths import parse_length_list
from ..scoring.aggregate import aggregate
from ..scoring.data import load_data, manifest_sha256
from ..scoring.grading import METRIC_MODES, JUDGE_METRICS, choose_metrics
from ..scoring.judge import Judge, JudgeConfig, JudgePlan
from ..scoring.predictions import load_predictions, match_predictions
from ..scoring.qa_filter import DEFAULT_THRESHOLD, parse_threshold
from ..scoring.results import build_results, summary_table, write_results
from ..scoring.scorer import ScoreOutcome, plan_judging, score_predictions
from ..writable import ensure_writable_file

OPENAI_BASE_URL = "https://api.openai.com/v1"


def judge_options(command: Callable) -> Callable:
    """Add the metric and LLM-judge options shared by ``score`` and ``filter``."""
    options = [
        click.option("--metric", "metric_mode", type=click.Choice(METRIC_MODES), default="auto", show_default=True,
                     help="auto: LLM judge for QA and summaries when --judge-model is set, classic metrics otherwise."),
        click.option("--judge-model", help="Judge model name on the OpenAI-compatible server."),
        click.option("--judge-base-url", default=OPENAI_BASE_URL, show_default=True, help="API root of the judge server."),
        click.option("--judge-api-key-env", default="OPENAI_API_KEY", show_default=True,
                     help="Environment variable holding the judge API key (optional for local servers)."),
        click.option("--judge-concurrency", type=click.IntRange(1), default=8, show_default=True,
                     help="Judge requests in flight at once."),
        click.option("--judge-max-tokens", type=click.IntRange(16), default=1024, show_default=True,
                     help="Reply budget of one judge call."),
        click.option("--dry-run", is_flag=True, help="Print the judge calls (after cache hits) and prompt tokens needed; send nothing."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def make_judge(model: str | None, base_url: str, api_key_env: str, concurrency: int, max_tokens: int) -> Judge | None:
    """Build the judge from the options, or ``None`` when no judge model is given."""
    if not model:
        return None
    api_key = os.environ.get(api_key_env) or None
    if api_key is None and base_url.rstrip("/") == OPENAI_BASE_URL:
        click.echo(f"warning: ${api_key_env} is not set; {OPENAI_BASE_URL} will refuse judge calls", err=True)
    return Judge(JudgeConfig(model, base_url, api_key, concurrency=concurrency, max_tokens=max_tokens))


def print_plan(plan: JudgePlan) -> None:
    """Report a dry run's judge cost."""
    click.echo(
        f"dry run: {plan.calls} judge calls needed ({plan.unique_prompts} distinct prompts, {plan.cache_hits} cached), "
        f"carrying {plan.prompt_tokens} prompt tokens (tiktoken cl100k_base); nothing was sent"
    )


def default_model_name(predictions: Path) -> str:
    """The predictions folder name, or the file name without extension for a single file."""
    resolved = predictions.resolve()
    return resolved.stem if resolved.is_file() else resolved.name


def _filter_lines(qa_filter: dict) -> list[str]:
    """One terminal line per QA task with the samples the filter dropped, per length."""
    if qa_filter["threshold"] is None:
        return ["QA filter: off"]
    lines = []
    for task, labels in qa_filter["tasks"].items():
        cells = ", ".join(f"{label} {cell['dropped']}/{cell['n']}" for label, cell in labels.items())
        no_closed = sum(cell["no_closed_book"] for cell in labels.values())
        ungraded = sum(cell.get("closed_book_ungraded", 0) for cell in labels.values())
        notes = []
        if no_closed:
            notes.append(f"{no_closed} without a closed-book answer")
        if ungraded:
            notes.append(f"{ungraded} whose closed-book answer the judge could not grade")
        note = f" ({'; '.join(notes)}: not filtered)" if notes else ""
        lines.append(f"QA filter (closed-book score >= {qa_filter['threshold']}): {task} dropped {cells}{note}")
    return lines


@click.command()
@click.option("--data", "data_dir", type=click.Path(path_type=Path), required=True, help="Generated data folder (OUT).")
@click.option("--predictions", type=click.Path(path_type=Path), required=True,
              help="One predictions JSONL file, or a folder of <task>/<label>.jsonl.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), required=True, help="results.json to write.")
@click.option("--qa-filter", "qa_filter", default=DEFAULT_THRESHOLD, show_default=True,
              help="Drop QA samples whose closed-book score is at or above this (0-1), or 'off'.")
@click.option("--model-name", help="Model name for the results [default: the predictions folder name].")
@click.option("--base-lengths", default="2k,4k,6k", show_default=True, help="Lengths whose mean is the Base Ability.")
@click.option("--allow-missing", is_flag=True, help="Score data records without a prediction as 0 (and say how many).")
@click.option("--n-boot", type=click.IntRange(0), default=1000, show_default=True, help="Bootstrap replicates for the intervals.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap seed.")
@judge_options
def score(
    data_dir: Path,
    predictions: Path,
    out: Path,
    qa_filter: str,
    model_name: str | None,
    base_lengths: str,
    allow_missing: bool,
    n_boot: int,
    seed: int,
    metric_mode: str,
    judge_model: str | None,
    judge_base_url: str,
    judge_api_key_env: str,
    judge_concurrency: int,
    judge_max_tokens: int,
    dry_run: bool,
) -> None:
    """Score one model's predictions: metrics, QA filter, Base Ability and LongScore into results.json."""
    threshold = parse_threshold(qa_filter)
    base_labels = [label for label, _ in parse_length_list(base_lengths)]
    records = load_data(data_dir)
    by_id, missing = match_predictions(
        load_predictions(predictions),
        [record.id for record in records],
        {record.id for record in records},
        allow_missing=allow_missing,
        source=predictions,
    )
    judge = make_judge(judge_model, judge_base_url, judge_api_key_env, judge_concurrency, judge_max_tokens)
    tasks = list(dict.fromkeys(record.task for record in records))
    metrics = choose_metrics(tasks, metric_mode, judge is not None)
    uses_judge = any(metric in JUDGE_METRICS for metric in metrics.values())
    if dry_run:
        if uses_judge:
            print_plan(plan_judging(records, by_id, metrics, threshold, judge))
        else:
            click.echo("dry run: no judge calls needed (no task uses the judge); nothing was sent")
        return
    ensure_writable_file(out)
    outcome = score_predictions(records, by_id, metrics, threshold, judge if uses_judge else None,
                                progress=sys.stderr.isatty())
    results = _results(outcome, data_dir, predictions, model_name, metric_mode, metrics,
                       judge if uses_judge else None, base_labels, n_boot, seed)
    write_results(out, results)
    _print_summary(results, outcome, len(missing), out)


def _results(outcome: ScoreOutcome, data_dir: Path, predictions: Path, model_name: str | None, metric_mode: str,
             metrics: dict[str, str], judge: Judge | None, base_labels: list[str], n_boot: int, seed: int) -> dict:
    """Aggregate the scored samples and assemble results.json."""
    ungraded = sum(sample.score is None and not sample.filtered for sample in outcome.samples)
    return build_results(
        model=model_name or default_model_name(predictions),
        data_dir=data_dir,
        manifest_sha256=manifest_sha256(data_dir),
        predictions=predictions,
        metric_mode=metric_mode,
        metrics=metrics,
        judge=None if judge is None else judge.describe(),
        outcome_counts={
            "missing_predictions": outcome.missing_predictions,
            "failed_predictions": outcome.failed_predictions,
            "ungraded": ungraded,
            "qa_filter": outcome.qa_filter,
        },
        base_labels=base_labels,
        samples=[sample.to_json() for sample in outcome.samples],
        aggregates=aggregate(outcome.samples, base_labels, n_boot=n_boot, seed=seed),
    )


def _print_summary(results: dict, outcome: ScoreOutcome, missing: int, out: Path) -> None:
    """Print the summary table and the counts a user must know about."""
    click.echo(summary_table(results))
    for line in _filter_lines(outcome.qa_filter):
        click.echo(line)
    if missing:
        click.echo(f"{missing} data records had no prediction and were scored 0 (--allow-missing)")
    if outcome.failed_predictions:
        click.echo(f"{outcome.failed_predictions} predictions were null (request failed) and were scored 0")
    if results["judge"] is not None:
        stats = results["judge"]
        click.echo(f"judge {stats['model']}: {stats['calls']} calls, {stats['cache_hits']} cache hits, "
                   f"{stats['failed_calls']} failed calls, {stats['invalid_replies']} unparsable replies")
        if stats.get("truncated_replies"):
            click.echo(f"{stats['truncated_replies']} judge replies were cut off at --judge-max-tokens and left "
                       "ungraded (not cached); raise --judge-max-tokens and rerun")
    if results["ungraded"]:
        click.echo(f"{results['ungraded']} samples could not be graded by the judge (score null, left out of the means)")
    aggregates = results["aggregates"]
    for name, block in [*aggregates["tasks"].items(), ("overall", aggregates["overall"])]:
        for warning in block.get("warnings", []):
            click.echo(f"warning: {name}: {warning}")
    if not results["data"]["manifest_sha256"]:
        click.echo("note: the data folder has no manifest.json; results record manifest_sha256 null")
    click.echo(f"wrote {out}")
