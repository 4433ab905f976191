"""``longbench100 inspect``: what a generated folder holds, per task and length.

The summary and coverage machinery is imported when the command runs, so ``inspect --help`` starts
at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from longbench100.core import console
from longbench100.core.errors import UserError
from longbench100.folders.layout import read_folder_manifest

_COUNTED_BY: dict[str | None, str] = {  # by the manifest's tokenizer.counting (None: not recorded)
    "segments": "from cached pieces (exact for this encoding)",
    "whole": "by tokenizing each prompt whole",
}
_COUNTED_BEFORE = "by tokenizing each prompt whole (recorded before counting was named)"

if TYPE_CHECKING:
    from ..generate.inspection import FolderSummary, LengthSummary


@click.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.option(
    "--json", "as_json", is_flag=True, help="Print the summary as JSON instead of a table."
)
def inspect(out: Path, as_json: bool) -> None:
    """Rows, prompt tokens (min/median/max), budget fill, gold depth and passages, pairing, sources and shortfalls of OUT.

    Fill is prompt_tokens / budget (data fitted to several tokenizers: the first one's count,
    and a line per length with each tokenizer's fill); depth is where the ground truth starts
    within the context (0-1);
    gold is the number of ground-truth passages per sample (min/median/max). Pairing columns and the
    rows per ground-truth source come from OUT/manifest.json: eligible items at that length, rows
    asking their own paired item, and rows that reuse an item because the eligible pool is smaller
    than --rows. Tasks are grouped by suite. A warning names each task without rows at a base length
    of the data's suite (scoring's default --base-lengths; 2k, 4k, 6k for 100-longbench), whose Base
    Ability then rests on fewer lengths or is missing. IC is the
    mean information coverage by construction: the share of context tokens inside the gold material
    (longbench100 coverage; docs/coverage.md).
    """
    from longbench100.analysis.coverage.run import construction_table
    from longbench100.catalog.suites import group_by_suite, recorded_suite

    from ..generate.inspection import summarise_folder

    if not out.is_dir():
        raise UserError(f"{out}: no such folder")
    summary = summarise_folder(out)
    try:
        coverage, coverage_note = construction_table(out), None
    except UserError as error:
        coverage, coverage_note = {}, f"IC by construction not shown: {error}"
    if as_json:
        click.echo(
            json.dumps(
                {
                    task: {
                        label: {**s.__dict__, "ic": _ic(coverage, task, label)}
                        for label, s in by_label.items()
                    }
                    for task, by_label in summary.tasks.items()
                },
                indent=2,
            )
        )
        return
    header = f"{'task':<18} {'len':>5} {'rows':>4} {'tok min':>8} {'median':>8} {'max':>8} {'fill p5':>7} {'median':>7} {'depth min/med/max':>17} {'gold':>8} {'elig':>5} {'paired':>6} {'reuse':>5} {'IC':>6}"
    click.echo(header)
    recorded = recorded_suite(read_folder_manifest(out))
    for suite, tasks in group_by_suite(list(summary.tasks), recorded).items():
        click.echo(f"suite {suite}")
        for task in tasks:
            _task_lines(task, summary, coverage)
    for line in summary.shortfalls:
        click.echo(f"shortfall: {line}")
    for line in summary.underfilled:
        click.echo(f"underfilled: {line}")
    for line in summary.skipped:
        click.echo(f"skipped: {line}")
    for line in summary.warnings:
        console.echo(f"warning: {line}")
    if summary.near_duplicates:
        click.echo(summary.near_duplicates)
    if summary.unanswerable:
        click.echo(summary.unanswerable)
    if coverage_note:
        console.echo(f"note: {coverage_note}")
    click.echo(_shortcut_line(read_folder_manifest(out) or {}, out))
    annotator = _annotator_line(read_folder_manifest(out) or {})
    if annotator:
        click.echo(annotator)
    tokenizer = (read_folder_manifest(out) or {}).get("tokenizer") or {}
    if tokenizer.get("tokenizers"):
        click.echo(
            f"fitted to {len(tokenizer['tokenizers'])} tokenizers: every prompt is within "
            "budget in each (prompt_tokens is the first one's count)"
        )
    for member in tokenizer.get("tokenizers") or ([tokenizer] if tokenizer else []):
        click.echo(
            f"tokenizer {member.get('spec')}; prompt tokens counted "
            + _COUNTED_BY.get(member.get("counting"), _COUNTED_BEFORE)
        )


def _task_lines(task: str, summary: FolderSummary, coverage: dict) -> None:
    """The table lines of one task: one per length, then its pairing and per-source lines."""
    by_label = summary.tasks[task]
    for label, s in by_label.items():
        click.echo(_row(task, label, s, _ic(coverage, task, label)))
        if s.fill_by_tokenizer:
            click.echo(
                f"{'':<18} {label:>5} fill p5/median per tokenizer: "
                + ", ".join(
                    f"{spec} {stats['fill_p5']:.2%}/{stats['fill_median']:.2%}"
                    + (f" ({stats['over_budget']} over budget)" if stats["over_budget"] else "")
                    for spec, stats in s.fill_by_tokenizer.items()
                )
            )
    if task in summary.paired_all_lengths:
        count, labels = summary.paired_all_lengths[task]
        click.echo(
            f"{'':<18} rows asking the same item at every length with rows ({', '.join(labels) or 'none'}): {count}"
        )
    sources = _sources_line(by_label)
    if sources:
        click.echo(f"{'':<18} rows per source ({'/'.join(by_label)}): {sources}")


def _ic(coverage: dict, task: str, label: str) -> float | None:
    """Mean IC by construction of one task and length, or ``None`` where it is not known."""
    return ((coverage.get(task) or {}).get(label) or {}).get("ic")


def _row(task: str, label: str, s: LengthSummary, ic: float | None) -> str:
    """One table line."""
    depth = (
        "-"
        if s.depth_median is None
        else f"{s.depth_min:.2f}/{s.depth_median:.2f}/{s.depth_max:.2f}"
    )
    gold = "-" if s.gold_median is None else f"{s.gold_min}/{s.gold_median:g}/{s.gold_max}"
    optional = lambda value: "-" if value is None else str(value)  # noqa: E731 - tiny formatter
    return (
        f"{task:<18} {label:>5} {s.rows:>4} {s.tokens_min:>8} {s.tokens_median:>8} {s.tokens_max:>8} "
        f"{s.fill_p5:>7.2%} {s.fill_median:>7.2%} {depth:>17} {gold:>8} {optional(s.eligible):>5} {optional(s.paired_rows):>6} {optional(s.reused_rows):>5} "
        f"{'-' if ic is None else f'{ic:.1%}':>6}"
    )


def _sources_line(by_label: dict[str, LengthSummary]) -> str:
    """``source a/b/c, ...``: rows per ground-truth source at each length (empty for synthetic tasks)."""
    names = list(dict.fromkeys(name for s in by_label.values() for name in (s.sources or {})))
    return ", ".join(
        f"{name} " + "/".join(str((s.sources or {}).get(name, 0)) for s in by_label.values())
        for name in names
    )


def _annotator_line(manifest: dict) -> str | None:
    """Who labelled the one-document tasks' chunks (generate --annotator-model), or ``None`` when nobody did."""
    info = manifest.get("annotator")
    if not isinstance(info, dict):
        return None
    labels = ", ".join(f"{count} {kind}" for kind, count in (info.get("chunks") or {}).items())
    versions = ", ".join(
        f"{kind} v{version}" for kind, version in (info.get("prompt_versions") or {}).items()
    )
    return (
        f"chunk labels by annotator {info.get('model')} ({versions}): {labels}; {info.get('calls')} calls, "
        f"{info.get('cache_hits')} from the cache, {info.get('cut_off_replies_kept', 0)} cut-off replies kept, "
        f"{info.get('names_not_in_chunk', 0)} listed items dropped (not shaped as their type or not in their chunk)"
        + _second_ask_part(info)
        + _unlabelled_part(info)
    )


def _second_ask_part(info: dict) -> str:
    """``"; N looping replies asked again (frequency penalty P), M usable"`` where the run asked any."""
    if not info.get("second_asks"):
        return ""
    return (
        f"; {info['second_asks']} looping replies asked again (frequency penalty {info.get('loop_penalty')}), "
        f"{info.get('usable_second_replies', 0)} usable"
    )


def _unlabelled_part(info: dict) -> str:
    """``"; N chunks without a usable label, M rows left out"`` for a run with --allow-unlabelled that needed it (a
    resumed run may have left rows out in its first part only)."""
    unlabelled = info.get("unlabelled")
    if not isinstance(unlabelled, dict):
        unlabelled = {}
    rows = sum(
        count
        for by_label in (info.get("rows_left_out") or {}).values()
        for count in by_label.values()
    )
    if not unlabelled and not rows:
        return ""
    return f"; {unlabelled.get('chunks', 0)} chunks without a usable label, {rows} rows left out (--allow-unlabelled)"


def _control_note(cell: dict) -> str:
    """`` (gold_removed)`` for a control cell of the shortcut check, else nothing."""
    return f" ({cell['on']})" if cell.get("on", "real") != "real" else ""


def _shortcut_line(manifest: dict, out: Path) -> str:
    """What the manifest says of the no-model shortcut check (generate --check-shortcuts)."""
    check = manifest.get("shortcuts")
    if not isinstance(check, dict):
        return f"shortcut check: not run (longbench100 baselines {out} --check)"
    if check.get("passed"):
        controls = (
            f" and {check['control_cells']} control cells" if check.get("control_cells") else ""
        )
        return (
            f"shortcut check: passed on {check.get('cells')} task-lengths{controls} "
            "(every judged no-model baseline within its limit)"
        )
    over = ", ".join(
        f"{cell['task']} {cell['label']}{_control_note(cell)} ({cell['best']} {cell['score']:.3f} > {cell['ceiling']:.3f})"
        for cell in check.get("over", [])
    )
    return f"shortcut check: over the limit in {over}"
