"""``longbench100 report``: markdown tables and PNG plots from one or more results.json files."""

from pathlib import Path

import click

from ..report.load import data_mismatch, load_results
from ..report.write import write_report
from ..writable import ensure_writable_dir


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for report.md and the PNG plots (created if needed).")
@click.option("--n-boot", default=1000, show_default=True, type=click.IntRange(min=0),
              help="Bootstrap replicates for the paired model comparison (0: no intervals).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed of the paired bootstrap.")
def report(results: tuple[Path, ...], out: Path, n_boot: int, seed: int) -> None:
    """Tabulate and plot Base Ability, scores and LongScore of the models in RESULTS (results.json files).

    \b
    Writes OUT/report.md (overall and per-task tables like the paper's, 95% intervals, paired
    comparisons of average LC between models, warnings) and OUT/*.png (score and LC vs length,
    LC vs length per task). The numbers are the aggregates stored by `longbench100 score`. Warns
    when the results record different data manifests (the models were scored on different data).
    """
    ensure_writable_dir(out)
    loaded = load_results(list(results))
    mismatch = data_mismatch(loaded)
    if mismatch is not None:
        click.echo(f"warning: {mismatch}", err=True)
    written = write_report(loaded, out, n_boot=n_boot, seed=seed)
    for path in written:
        click.echo(f"wrote {path}")
