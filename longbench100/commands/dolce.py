"""``longbench100 dolce``: focus categories (retrieval or holistic) per problem, by probing with context windows."""

from __future__ import annotations

from pathlib import Path

import click

from longbench100.analysis.dolce.categories import NEVER_SOLVED_RULES
from longbench100.analysis.dolce.estimators import DEFAULT_ESTIMATOR, ESTIMATORS
from longbench100.analysis.dolce.windows import DEFAULT_WINDOWS, MIN_STRIDED_WINDOWS, parse_windows
from longbench100.catalog.task_info import parse_task_list
from longbench100.core import console
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length_list
from longbench100.text.units import UNIT_KINDS

from .data_folder_option import data_folder_option


@click.group("dolce")
def dolce() -> None:
    """Which problems need retrieval and which need the whole context (the Dolce method).

    \b
    Flow:
      longbench100 dolce probes --data OUT --out PROBES    prompts with only a window of the context
      longbench100 predict --data PROBES --out P ...       as usual
      longbench100 dolce fit --probes PROBES --predictions P --out dolce.json
      longbench100 dolce report dolce.json --out DIR       chart and table
    `dolce fit --oracle` answers the probes from the data's own provenance instead of a model.
    """


@dolce.command("probes")
@data_folder_option()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="New probe folder to write.",
)
@click.option(
    "--tasks", default="all", show_default=True, help="Comma-separated task names, or all."
)
@click.option(
    "--lengths", default=None, help="Comma-separated length labels to probe (default: every file)."
)
@click.option(
    "--units",
    type=click.Choice(UNIT_KINDS),
    default="auto",
    show_default=True,
    help="Context units; auto uses the numbered passages (and key-value records) the packaged tasks have.",
)
@click.option(
    "--windows",
    default=DEFAULT_WINDOWS,
    show_default=True,
    help="Window sizes in units; 0 is closed book, all the whole context.",
)
@click.option(
    "--stride",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Keep every N-th window start (1: every window). A window size keeps at least "
    f"{MIN_STRIDED_WINDOWS} windows (all it has when fewer): the stride shrinks there.",
)
@click.option(
    "--max-probes-per-problem",
    "max_probes",
    type=click.IntRange(min=1),
    default=None,
    help="Thin each window size evenly so a problem gets at most this many probes.",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the number of requests and prompt tokens; write nothing."
)
def probes_command(
    data_dir: Path,
    out_dir: Path,
    tasks: str,
    lengths: str | None,
    units: str,
    windows: str,
    stride: int,
    max_probes: int | None,
    dry_run: bool,
) -> None:
    """Write a probe data folder that `predict` runs unchanged.

    Each problem is asked again with its full instruction and question but only C consecutive units of
    its context, at every window start on the stride, for each C; every probe offers the answer
    "not enough information".
    """
    from longbench100.analysis.dolce.probes import (  # noqa: PLC0415 - keeps help fast
        ProbeOptions,
        build_probes,
        check_probe_folder,
        write_probes,
    )
    from longbench100.folders.lock import output_lock  # noqa: PLC0415

    sizes, whole = parse_windows(windows)
    options = ProbeOptions(
        data_dir=data_dir,
        tasks=parse_task_list(tasks),
        labels=[label for label, _ in parse_length_list(lengths)] if lengths else None,
        units=units,
        sizes=sizes,
        whole=whole,
        stride=stride,
        max_per_problem=max_probes,
    )
    if not dry_run:
        check_probe_folder(out_dir, data_dir)
    probe_set = build_probes(options)
    for task, kind in probe_set.units.items():
        click.echo(
            f"{task}: units {kind}"
            + (" (auto: numbered passages)" if units == "auto" and kind == "passage" else "")
        )
    click.echo(
        f"{probe_set.problems} problems -> {probe_set.requests} requests, {probe_set.prompt_tokens} prompt tokens"
    )
    if dry_run:
        click.echo("dry run: nothing was written")
        return
    with output_lock(out_dir, "--out"):
        write_probes(probe_set, options, out_dir)
    click.echo(f"wrote {probe_set.requests} probes to {out_dir}")


@dolce.command("fit")
@click.option(
    "--probes",
    "probe_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="Probe folder from `dolce probes`.",
)
@click.option(
    "--predictions",
    "predictions",
    type=click.Path(path_type=Path),
    default=None,
    help="The model's answers to the probes (file or folder from predict).",
)
@click.option(
    "--oracle",
    is_flag=True,
    help="Answer from the data's provenance instead: correct iff the window holds the gold.",
)
@click.option(
    "--oracle-noise",
    type=float,
    default=0.0,
    show_default=True,
    help="With --oracle: probability of a random outcome (correct, wrong or IDK) instead.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the oracle's noise.")
@click.option(
    "--estimator",
    type=click.Choice(list(ESTIMATORS)),
    default=DEFAULT_ESTIMATOR,
    show_default=True,
    help="paper: the paper's Algorithm 1 as published; refined: our refinement (collapsed equivalent pairs, "
    "per-pair EM, BIC gates), better at recovering simulated (lambda, k) (docs/dolce.md compares them).",
)
@click.option(
    "--never-solved",
    type=click.Choice(NEVER_SOLVED_RULES),
    default=None,
    help="A problem never answered right at any window, whole context included: flag "
    "keeps the category its fit gives and marks it solved: false (the paper's "
    "reading; default with --estimator paper); ns gives it the category NS, not "
    "solved (ours; default with --estimator refined).",
)
@click.option(
    "--out", "out_path", type=click.Path(path_type=Path), required=True, help="dolce.json to write."
)
def fit_command(
    probe_dir: Path,
    predictions: Path | None,
    oracle: bool,
    oracle_noise: float,
    seed: int,
    estimator: str,
    never_solved: str | None,
    out_path: Path,
) -> None:
    """Score the probes, fit lambda and k per problem (EM) and assign the categories I-V.

    Every problem carries solved: true|false (any probe answered right); one never solved keeps its
    fitted category under --never-solved flag and reads "NS" (not solved) under --never-solved ns.
    Prints the share of each category per task, the estimator and any warning (a task the model does
    not solve, answers that are all "I don't know" or mostly noise, a single problem); with --oracle
    also the confusion against the category the provenance implies.
    """
    from longbench100.analysis.dolce.chart import category_table, confusion_table  # noqa: PLC0415
    from longbench100.analysis.dolce.pipeline import (  # noqa: PLC0415
        load_probes,
        oracle_outcomes,
        prediction_outcomes,
        run_fit,
    )
    from longbench100.core.atomic import write_json_atomic  # noqa: PLC0415
    from longbench100.folders.guard import guard_output_file  # noqa: PLC0415
    from longbench100.folders.lock import output_lock  # noqa: PLC0415

    if oracle == (predictions is not None):
        raise UserError("give exactly one of --predictions P and --oracle")
    guard_output_file(
        out_path, "--out", "dolce-fit", {"--probes": probe_dir, "--predictions": predictions}
    )
    probes, manifest = load_probes(probe_dir)
    source: dict[str, object]  # how the outcomes were found, as dolce.json records it
    if predictions is None:  # --oracle (exactly one of the two was checked above)
        outcomes = oracle_outcomes(probes, oracle_noise, seed)
        source = {"oracle": True, "noise": oracle_noise, "seed": seed, "predictions": None}
    else:
        outcomes = prediction_outcomes(probes, predictions)
        source = {"oracle": False, "noise": None, "seed": None, "predictions": str(predictions)}
    result = run_fit(probes, outcomes, manifest, source, estimator, never_solved)
    with output_lock(out_path, "--out"):
        write_json_atomic(out_path, result, indent=1)
    for line in category_table(result).splitlines():
        console.echo(line)  # the table on stdout, its warning lines (each once) on stderr
    if oracle:
        click.echo(confusion_table(result), nl=False)
    click.echo(f"wrote {len(result['problems'])} problems to {out_path}")


@dolce.command("report")
@click.argument("fit_path", type=click.Path(path_type=Path), metavar="DOLCE_JSON")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="Folder for dolce.png and dolce.md.",
)
def report_command(fit_path: Path, out_dir: Path) -> None:
    """Draw the per-task category chart (I-II left of zero, III-V right) and write the table."""
    from longbench100.analysis.dolce.chart import load_fit, write_dolce_report  # noqa: PLC0415
    from longbench100.folders.guard import guard_output_dir, mark_folder  # noqa: PLC0415
    from longbench100.folders.lock import output_lock  # noqa: PLC0415

    fit = load_fit(fit_path)
    guard_output_dir(out_dir, "--out", "report", {"DOLCE_JSON": fit_path})
    with output_lock(out_dir, "--out"):
        mark_folder(out_dir, "report")
        table, chart = write_dolce_report(fit, out_dir)
    for line in table.read_text(encoding="utf-8").splitlines():
        console.echo(line)  # the table on stdout, its warning lines on stderr
    click.echo(f"wrote {chart} and {table}")
