"""``longbench100 show``: print scored samples of a results.json readably in the terminal."""

import shutil
from pathlib import Path

import click

from ..report.show import SampleQuery, format_samples, select_samples


@click.command()
@click.argument("results", type=click.Path(path_type=Path))
@click.option("--task", help="Task whose samples to show (e.g. single_doc_qa).")
@click.option("--length", help="Length whose samples to show (e.g. 8k or 8192).")
@click.option(
    "--worst", type=click.IntRange(min=1), help="Show only the N lowest-scored graded samples."
)
@click.option(
    "--ungraded",
    is_flag=True,
    help="Show only the samples the judge could not grade, with its raw reply.",
)
@click.option(
    "--id", "sample_id", help="Show only the sample with this id (no --task/--length needed)."
)
@click.option(
    "--max-chars",
    default=800,
    show_default=True,
    type=click.IntRange(min=0),
    help="Cut each text (prediction, gold answer, judge reply) after this many characters, "
    "with a marker saying how many were left out; 0 never cuts.",
)
def show(
    results: Path,
    task: str | None,
    length: str | None,
    worst: int | None,
    ungraded: bool,
    sample_id: str | None,
    max_chars: int,
) -> None:
    """Print samples of RESULTS (a results.json from `longbench100 score`) for reading.

    \b
    For each sample: id, score in points (or why it is ungraded, or that the QA filter dropped
    it), metric, depth of the gold material, source, the prediction, the gold answers, the judge's
    sub-scores and reasoning, and the raw judge reply when the judge gave no valid verdict. Results
    from before the per-sample log lack some of these; they are marked as not recorded.

    \b
    Examples:
      longbench100 show results/m.json --task single_doc_qa --length 8k --worst 5
      longbench100 show results/m.json --task single_doc_sum --length 4k --ungraded
      longbench100 show results/m.json --id kv_retrieval-16k-0003
    """
    query = SampleQuery(
        task=task, length=length, worst=worst, sample_id=sample_id, ungraded=ungraded
    )
    model, entries = select_samples(results, query)
    width = max(40, min(120, shutil.get_terminal_size((100, 24)).columns))
    click.echo(format_samples(model, entries, query, width=width, max_chars=max_chars))
