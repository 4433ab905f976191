"""``longbench100 report``: markdown tables and PNG plots from one or more results.json files."""

from pathlib import Path

import click


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Directory for report.md and the PNG plots (created if needed; checked to be writable first).",
)
@click.option(
    "--n-boot",
    default=1000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Bootstrap replicates for the paired model comparison (0: no intervals).",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Seed of the paired bootstrap.",
)
@click.option(
    "--allow-mixed",
    is_flag=True,
    help="Report results made with different settings (metric, judge, QA filter, tokenizer, data) "
    "instead of refusing; report.md then says so loudly and runs no paired test between them.",
)
@click.option(
    "--dolce",
    "dolce",
    type=click.Path(path_type=Path),
    default=None,
    help="A dolce.json from `longbench100 dolce fit`: also write its category chart (dolce.png) "
    "and table (dolce.md) into OUT.",
)
@click.option(
    "--data",
    "data_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="The generated data folder the results were scored on: adds its information coverage by "
    "construction per task and length (docs/coverage.md).",
)
@click.option(
    "--html",
    "html",
    is_flag=True,
    help="Also write OUT/report.html: the report, its plots and a sample browser (filter by model, task, "
    "length, score, depth; each sample's prediction, gold and judge verdict, and with --data its "
    "prompt with the gold highlighted) in one self-contained page that opens offline.",
)
def report(
    results: tuple[Path, ...],
    out: Path,
    n_boot: int,
    seed: int,
    allow_mixed: bool,
    dolce: Path | None,
    data_dir: Path | None,
    html: bool,
) -> None:
    """Tabulate and plot Base Ability, scores and LongScore of the models in RESULTS (results.json files).

    \b
    Writes OUT/report.md (how the results were made, overall and per-task tables like the paper's,
    95% intervals, paired comparisons of average LC between models, warnings) and OUT/*.png (score
    and LC vs length, LC vs length per task, score by depth of the gold material when the results
    have depth data). The numbers are the aggregates stored by `longbench100 score`.

    \b
    Results made with different settings (metric mode, metric per task, ROUGE-L variant, judge
    model and endpoint, QA filter, tokenizer, base lengths, data manifest) are refused unless
    --allow-mixed; settings an older results file does not record are warned about.
    With --dolce, OUT also gets the Dolce focus-category chart and table of that fit.
    """
    from ..report.run import ReportOptions, run_report  # noqa: PLC0415 - plotting libraries load only when a report runs

    outcome = run_report(
        ReportOptions(
            list(results),
            out,
            n_boot=n_boot,
            seed=seed,
            allow_mixed=allow_mixed,
            dolce=dolce,
            data_dir=data_dir,
            html=html,
        )
    )
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}", err=True)
    for path in outcome.written:
        click.echo(f"wrote {path}")
