"""``longbench100 baselines``: no-model shortcut baselines for every task of a data folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from longbench100.catalog.task_info import parse_task_list
from longbench100.core.errors import UserError
from longbench100.folders.guard import guard_output_file
from longbench100.folders.lock import output_lock


@click.command()
@click.argument("data", type=click.Path(path_type=Path))
@click.option(
    "--tasks",
    default="all",
    show_default=True,
    help="'all' or a comma-separated list of the data's tasks to attack.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write every baseline's answer and score per sample, and the verdicts, to this JSON file "
    "(read it with 'longbench100 show FILE --task T --length L').",
)
@click.option(
    "--check",
    is_flag=True,
    help="Exit with status 1 when any task's best judged shortcut is over its limit.",
)
def baselines(data: Path, tasks: str, out: Path | None, check: bool) -> None:
    """Attack every task in DATA with strategies that never understand the context, and score them.

    \b
    Families (docs/baselines.md): context-free (option consensus, the answer most
    often right in other rows, always yes/no, the question itself, the record value
    never used as a key), position (first/middle/last passage, alphabetical order,
    the first distinct words of a list), outlier (the passage least like the
    others), lexical (TF-IDF matching of question and context, needle-shaped
    values, the nearest demonstration), copy (openings as summaries) and frequency
    (most frequent words or labels, distinct passages). Strategies that the anchor
    benchmark's own construct lets score are shown as the anchor's on real prompts.
    Answers are graded by the task's own classic metric, as `score --metric classic`
    grades predictions. Chance is the mean score of every candidate answer (or of
    random orders). Each task's limit comes from its suite file (`shortcut_limit`,
    default chance + 0.10); families in `shortcut_reported` are shown, not judged.

    \b
    Example:
      longbench100 baselines data/ --check --out baselines.json
    """
    from longbench100.baselines.render import format_table, write_run

    from ..baselines.check import run_baselines

    if out is not None:
        guard_output_file(out, "--out", "baselines", {"DATA": data})
    if not data.is_dir():
        raise UserError(f"{data}: no such folder")
    chosen = None if tasks.strip() == "all" else set(parse_task_list(tasks))
    run = run_baselines(data, chosen)
    if not run.cells:
        raise UserError(f"{data}: no samples of the tasks {tasks}")
    click.echo(format_table(run))
    if out is not None:
        with output_lock(out, "--out"):
            write_run(run, out)
        click.echo(f"wrote {out}")
    if check and run.failed:
        sys.exit(1)
