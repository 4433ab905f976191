"""``longbench100 score``: grade one model's predictions, apply the QA filter, compute LongScore.

A thin command over :func:`longbench100.scoring.run.run_score`: it parses options and calls it (the
scoring machinery is imported when the command runs, so ``score --help`` starts at once).
"""

from collections.abc import Callable
from pathlib import Path

import click

from longbench100.catalog.judge_styles import JUDGE_STYLES
from longbench100.catalog.task_info import parse_task_list
from longbench100.core import console
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length_list
from longbench100.llm.options import JudgeOptions
from longbench100.scoring.choices import DEFAULT_ROUGE_VARIANT, METRIC_MODES, ROUGE_VARIANTS
from longbench100.scoring.complete_rows import MISSING_ROWS_MODES
from longbench100.scoring.qa_filter.threshold import DEFAULT_THRESHOLD, parse_threshold

from .data_folder_option import data_folder_option
from .endpoint_options import endpoint_options


def judge_options(command: Callable) -> Callable:
    """Add the metric and LLM-judge options shared by ``score`` and ``filter`` (the judge's endpoint
    arrives as one ``judge``: :class:`JudgeOptions`)."""
    options: list[Callable[[Callable], Callable]] = [
        click.option(
            "--metric",
            "metric_mode",
            type=click.Choice(METRIC_MODES),
            default="auto",
            show_default=True,
            help="auto: LLM judge for QA and summaries when --judge-model is set, classic metrics otherwise.",
        ),
        endpoint_options("judge"),
        click.option(
            "--dry-run",
            is_flag=True,
            help="Print the judge calls (after cache hits) and prompt tokens needed, and the cost with "
            "--price-in/--price-out; send nothing, write nothing.",
        ),
        click.option(
            "--price-in",
            type=click.FloatRange(0),
            help="Judge price in USD per million prompt tokens (--dry-run cost).",
        ),
        click.option(
            "--price-out",
            type=click.FloatRange(0),
            help="Judge price in USD per million output tokens; the estimate assumes every reply uses --judge-max-tokens.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _labels(text: str | None) -> tuple[str, ...] | None:
    """The canonical length labels of an option's comma-separated list (``None`` when not given,
    ``()`` when empty, which :func:`run_score` refuses)."""
    if text is None:
        return None
    return tuple(label for label, _ in parse_length_list(text)) if text.strip(" ,") else ()


@click.command()
@data_folder_option()
@click.option(
    "--predictions",
    type=click.Path(path_type=Path),
    required=True,
    help="One predictions JSONL file, or a folder of <task>/<label>.jsonl; or lm-eval "
    "--log_samples output or Inspect .eval logs (docs/integrations.md).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="results.json to write.",
)
@click.option(
    "--qa-filter",
    "qa_filter",
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Drop QA samples whose closed-book score is at or above this (0-1), or 'off'.",
)
@click.option(
    "--model-name",
    help="Model name for the results [default: the model an lm-eval or Inspect log "
    "names, else the predictions folder name].",
)
@click.option(
    "--tasks",
    help="Score only these tasks (comma-separated); the others are not "
    "scored and not missing.  [default: every task of --data]",
)
@click.option(
    "--lengths",
    help="Score only these lengths, e.g. 2k,4k,6k,8k (they must include the "
    "base lengths); the others are not scored and not missing.  "
    "[default: every length of --data]",
)
@click.option(
    "--base-lengths",
    help="Lengths whose mean is the Base Ability.  [default: the data's suite's base lengths, e.g. 2k,4k,6k]",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Go on when data records have no prediction or their request failed: they are "
    "left out, never scored 0 (see --missing-rows); a task and length without any "
    "answer is left out (null), and a task without any makes the overall null.",
)
@click.option(
    "--missing-rows",
    type=click.Choice(MISSING_ROWS_MODES),
    help="Needs --allow-missing (an error without it): paired scores a task's rows only "
    "where predicted at every length; per-length scores each length on its own "
    "predicted rows.  [default: paired]",
)
@click.option(
    "--epoch",
    type=click.IntRange(1),
    help="Grade this epoch alone of a run with several (Inspect --epochs).  "
    "[default: the mean over epochs]",
)
@click.option(
    "--allow-ungraded",
    is_flag=True,
    help="Exit 0 even when the judge left samples ungraded (they are left out of the means and counted).",
)
@click.option(
    "--limit",
    type=click.IntRange(1),
    help="Score only the first N rows (by row number) of each task and length.",
)
@click.option(
    "--rouge-variant",
    type=click.Choice(ROUGE_VARIANTS),
    default=DEFAULT_ROUGE_VARIANT,
    show_default=True,
    help="ROUGE-L implementation for classic summary scores (recorded in results.json).",
)
@click.option(
    "--n-boot",
    type=click.IntRange(0),
    default=1000,
    show_default=True,
    help="Bootstrap replicates for the intervals.",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap seed."
)
@click.option(
    "--judge-style",
    type=click.Choice(JUDGE_STYLES),
    help="Rubrics of the judge tasks: 100-longbench, or helmet (HELMET's QA scale; summaries by key-point "
    "recall and sentence precision).  [default: the data's suite's judge_style, else 100-longbench]",
)
@click.option(
    "--controls",
    is_flag=True,
    help="Also grade the answers on the data's control twins (predict --controls): per "
    "task and length, the control score beside S_l, flagged when above chance + 5.",
)
@click.option(
    "--wait",
    is_flag=True,
    help="When another run is writing the same --out, wait for it instead of refusing.",
)
@judge_options
def score(
    data_dir: Path,
    predictions: Path,
    out: Path,
    qa_filter: str,
    model_name: str | None,
    tasks: str | None,
    lengths: str | None,
    base_lengths: str | None,
    allow_missing: bool,
    missing_rows: str | None,
    epoch: int | None,
    allow_ungraded: bool,
    limit: int | None,
    rouge_variant: str,
    n_boot: int,
    seed: int,
    judge_style: str | None,
    controls: bool,
    wait: bool,
    metric_mode: str,
    judge: JudgeOptions,
    dry_run: bool,
    price_in: float | None,
    price_out: float | None,
) -> None:
    """Score one model's predictions: metrics, QA filter, Base Ability and LongScore into results.json.

    Predictions made for other prompts than --data's (another seed or folder) are refused. With a
    judge, one test request checks it answers before any grading; samples the judge leaves ungraded
    end the run with exit 2 (results.json is still written) unless --allow-ungraded.
    """
    if missing_rows is not None and not allow_missing:
        raise UserError(
            f"--missing-rows {missing_rows} needs --allow-missing (it chooses "
            "which rows of incomplete predictions are scored)"
        )
    from longbench100.scoring.run import ScoreOptions, run_score  # noqa: PLC0415

    options = ScoreOptions(
        data_dir=data_dir,
        predictions=predictions,
        out=out,
        qa_filter=parse_threshold(qa_filter),
        model_name=model_name,
        tasks=None if tasks is None or tasks.strip() == "all" else tuple(parse_task_list(tasks)),
        lengths=_labels(lengths),
        base_lengths=_labels(base_lengths),
        allow_missing=allow_missing,
        missing_rows=missing_rows or "paired",
        epoch=epoch,
        allow_ungraded=allow_ungraded,
        n_boot=n_boot,
        seed=seed,
        metric_mode=metric_mode,
        judge=judge,
        judge_style=judge_style,
        rouge_variant=rouge_variant,
        limit=limit,
        dry_run=dry_run,
        price_in=price_in,
        price_out=price_out,
        wait=wait,
        controls=controls,
    )
    # progress: a bar on a terminal, plain lines otherwise
    run_score(options, echo=console.echo, progress=not console.quiet())
