"""``longbench100 inspect``: what a generated folder holds, per task and length."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import UserError
from ..generate.inspection import LengthSummary, summarise_folder


@click.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON instead of a table.")
def inspect(out: Path, as_json: bool) -> None:
    """Rows, prompt tokens (min/median/max), budget fill, gold depth spread, pairing and shortfalls of OUT.

    Fill is prompt_tokens / budget; depth is where the ground truth starts within the context (0-1).
    Pairing columns come from OUT/manifest.json: eligible items at that length, rows asking their
    own paired item, and rows that reuse an item because the eligible pool is smaller than --rows.
    """
    if not out.is_dir():
        raise UserError(f"{out}: no such folder")
    summary = summarise_folder(out)
    if as_json:
        click.echo(json.dumps({task: {label: s.__dict__ for label, s in by_label.items()} for task, by_label in summary.tasks.items()}, indent=2))
        return
    header = f"{'task':<18} {'len':>5} {'rows':>4} {'tok min':>8} {'median':>8} {'max':>8} {'fill p5':>7} {'median':>7} {'depth min/med/max':>17} {'elig':>5} {'paired':>6} {'reuse':>5}"
    click.echo(header)
    for task, by_label in summary.tasks.items():
        for label, s in by_label.items():
            click.echo(_row(task, label, s))
        if task in summary.paired_all_lengths:
            count, labels = summary.paired_all_lengths[task]
            click.echo(f"{'':<18} rows asking the same item at every length with rows ({', '.join(labels) or 'none'}): {count}")
    for line in summary.shortfalls:
        click.echo(f"shortfall: {line}")
    if summary.near_duplicates:
        click.echo(summary.near_duplicates)


def _row(task: str, label: str, s: LengthSummary) -> str:
    """One table line."""
    depth = "-" if s.depth_median is None else f"{s.depth_min:.2f}/{s.depth_median:.2f}/{s.depth_max:.2f}"
    optional = lambda value: "-" if value is None else str(value)  # noqa: E731 - tiny formatter
    return (
        f"{task:<18} {label:>5} {s.rows:>4} {s.tokens_min:>8} {s.tokens_median:>8} {s.tokens_max:>8} "
        f"{s.fill_p5:>7.2%} {s.fill_median:>7.2%} {depth:>17} {optional(s.eligible):>5} {optional(s.paired_rows):>6} {optional(s.reused_rows):>5}"
    )
