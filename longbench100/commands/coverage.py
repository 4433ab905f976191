"""``longbench100 coverage``: information coverage (IC) per sample, task and length (docs/coverage.md).

The coverage machinery is imported when the command runs, so ``coverage --help`` starts at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from longbench100.catalog.task_info import parse_task_list
from longbench100.core.lengths import parse_length_list
from longbench100.llm.options import JudgeOptions
from longbench100.text.chunks import CHUNK_TOKENS

from .endpoint_options import endpoint_options

if TYPE_CHECKING:
    from longbench100.analysis.coverage.run import CoverageOutcome


def _percent(value: float | None) -> str:
    """``0.1234`` as ``12.3%`` (``-`` for none)."""
    return "-" if value is None else f"{100 * value:.1f}%"


def coverage_lines(outcome: CoverageOutcome) -> list[str]:
    """The tables printed after a run: IC by construction and by the evaluator, and the validation."""
    report = outcome.report
    assert report is not None, "tables follow a measuring run; a dry run prints its plan instead"
    lines = []
    construction = report["construction"] or {}
    evaluator = (report["evaluator"] or {}).get("tasks") or {}
    lines.append(
        f"{'task':<20} {'length':>7} {'rows':>5} {'IC constr.':>11} {'IC evaluator':>13} {'undecided':>10}"
    )
    for task in dict.fromkeys([*construction, *evaluator]):
        for label in dict.fromkeys([*construction.get(task, {}), *evaluator.get(task, {})]):
            built = construction.get(task, {}).get(label) or {}
            judged = evaluator.get(task, {}).get(label) or {}
            rows = built.get("samples", judged.get("samples"))
            undecided = f"{judged['undecided']}/{judged['chunks']}" if judged else "-"
            lines.append(
                f"{task:<20} {label:>7} {rows:>5} {_percent(built.get('ic')):>11} "
                f"{_percent(judged.get('ic')):>13} {undecided:>10}"
            )
    validation = (report["evaluator"] or {}).get("validation") or {}
    if validation:
        lines.append("evaluator chunk decisions against gold chunks:")
        for task, figures in validation.items():
            lines.append(
                f"  {task:<20} precision {_percent(figures['precision'])}  recall {_percent(figures['recall'])}  "
                f"(gold chunks {figures['gold_chunks']}, undecided {figures['undecided']})"
            )
    return lines


@click.command()
@click.option(
    "--data",
    "data_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Generated data folder: IC by construction (and by the evaluator when one is given).",
)
@click.option(
    "--input",
    "input_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A JSONL file from elsewhere (needs --evaluator-model, --context-field, --query-field).",
)
@click.option("--context-field", help="--input: the field holding the long context.")
@click.option("--query-field", help="--input: the field holding the question or instruction.")
@click.option(
    "--id-field", help="--input: the field holding a sample id [default: the line number]."
)
@click.option(
    "--tokenizer",
    help="--input: tokenizer for the chunks [default: cl100k_base]; a data folder uses its own.",
)
@click.option("--tasks", help="Comma-separated tasks to measure [default: all in the folder].")
@click.option("--lengths", help="Comma-separated length labels to measure [default: all].")
@click.option(
    "--limit",
    type=click.IntRange(1),
    help="Only the first N rows of each task and length (of the --input file).",
)
@click.option(
    "--out", type=click.Path(path_type=Path, dir_okay=False), help="coverage.json to write."
)
@endpoint_options("evaluator")
@click.option(
    "--chunk-tokens",
    type=click.IntRange(16),
    default=CHUNK_TOKENS,
    show_default=True,
    help="Most tokens in one chunk the evaluator judges.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the evaluator calls (after cache hits) and prompt tokens; send nothing.",
)
def coverage(
    data_dir: Path | None,
    input_file: Path | None,
    context_field: str | None,
    query_field: str | None,
    id_field: str | None,
    tokenizer: str | None,
    tasks: str | None,
    lengths: str | None,
    limit: int | None,
    out: Path | None,
    evaluator: JudgeOptions,
    chunk_tokens: int,
    dry_run: bool,
) -> None:
    """Measure information coverage: the share of each context that its query needs.

    \b
    By construction (--data, no model): gold tokens over context tokens, from the provenance the
    generator records (gold passages, the kv chain's records, the star sentences; all of it for
    passage_count). By an evaluator (--evaluator-model): the context cut into chunks of at most
    --chunk-tokens tokens, one 0/1 "needed?" decision per chunk, IC = mean of the decided chunks;
    replies are cached like the judge's, and an unreadable reply leaves its chunk undecided. On a
    data folder the evaluator's decisions are also checked against the gold chunks.
    """
    from longbench100.analysis.coverage.run import CoverageOptions, run_coverage

    options = CoverageOptions(
        data_dir=data_dir,
        input_file=input_file,
        context_field=context_field,
        query_field=query_field,
        id_field=id_field,
        tokenizer=tokenizer,
        tasks=parse_task_list(tasks) if tasks else None,
        labels=[label for label, _ in parse_length_list(lengths)] if lengths else None,
        limit=limit,
        evaluator=evaluator,
        chunk_tokens=chunk_tokens,
        dry_run=dry_run,
        out=out,
    )
    outcome = run_coverage(options)
    for note in outcome.notes:
        click.echo(note, err=True)
    if outcome.plan is not None:
        plan = outcome.plan
        click.echo(
            f"evaluator dry run: {plan.unique_prompts} chunk prompts, {plan.cache_hits} cached, "
            f"{plan.calls} calls to send, {plan.prompt_tokens} prompt tokens (cl100k_base)"
        )
        return
    for line in coverage_lines(outcome):
        click.echo(line)
    if out is not None:
        click.echo(f"wrote {out}")
