"""``longbench100 generate``: build the benchmark at exact whole-prompt token budgets."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from longbench100.core import console
from longbench100.core.lengths import parse_length_list
from longbench100.llm.options import JudgeOptions
from longbench100.text.tokenization import DEFAULT_TOKENIZER

from .endpoint_options import endpoint_options
from .sources import SOURCES_HELP


@click.command()
@click.option(
    "--suite",
    "suite_spec",
    metavar="NAME|FILE",
    help="A packaged suite name (see 'longbench100 suites') or a suite .toml file: the default tasks, lengths and base lengths, recorded in the manifest.  [default: 100-longbench; with --tasks, the first packaged suite that lists every named task]",
)
@click.option(
    "--tasks",
    default="all",
    show_default=True,
    help="'all' (the suite's tasks) or a comma-separated list of any known tasks, e.g. kv_retrieval,single_doc_qa.",
)
@click.option(
    "--lengths",
    help="Comma-separated budgets: Nk = N x 1024 tokens, or plain token counts.  [default: the suite's lengths]",
)
@click.option(
    "--rows", default=100, show_default=True, type=int, help="Samples per task and length."
)
@click.option(
    "--seed",
    default=42,
    show_default=True,
    type=int,
    help="Run seed; every sample derives its own RNG from (seed, task, length, row).",
)
@click.option(
    "--tokenizer",
    "tokenizer_spec",
    default=DEFAULT_TOKENIZER,
    show_default=True,
    help="tiktoken encoding name, or hf:<model id | folder | tokenizer.json>; "
    "several, comma-separated, make every prompt fit its budget in each (one dataset for "
    "models with different tokenizers; prompt_tokens is the first one's count).",
)
@click.option("--sources", "sources_option", metavar="DIR|demo|hub", help=SOURCES_HELP)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder: OUT/<task>/<label>.jsonl and OUT/manifest.json.",
)
@click.option(
    "--workers",
    default=min(8, os.cpu_count() or 1),
    show_default="CPU count, at most 8",
    type=click.IntRange(1, 64),
    help="Worker processes (at most: a small run builds its rows in one); the output does not "
    "depend on it.",
)
@click.option(
    "--templates",
    "templates_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of <task>.j2 templates that replace the packaged ones.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted run in OUT (same options required; Ctrl-C or kill stop a run cleanly). A folder whose run finished no row is reused without it.",
)
@click.option(
    "--whole-documents",
    is_flag=True,
    help="Pad with whole documents only: no cut-off filler (prompts then fill less of the budget).",
)
@click.option(
    "--chat-template",
    is_flag=True,
    help="Count the budget on the prompt with the model's chat template applied (hf: tokenizers only).",
)
@click.option(
    "--reserve-output",
    default=0,
    show_default=True,
    type=int,
    help="Keep this many tokens of each budget free for the answer; 0 keeps each task's own room (128 for the RULER/HELMET recall tasks, none for the paper's tasks).",
)
@click.option(
    "--unpaired",
    is_flag=True,
    help="Sample each length independently instead of asking row r the same question at every length.",
)
@click.option(
    "--negatives",
    default="bm25",
    show_default=True,
    type=click.Choice(["bm25", "random"]),
    help="rag_hard and rerank: negatives ranked by BM25 on the question (hard), or drawn at random from the same corpus (easy).",
)
@click.option(
    "--verify-counts",
    is_flag=True,
    help="After writing, recount every prompt by tokenizing it whole and fail on any difference from its recorded prompt_tokens (cl100k_base and o200k_base count long prompts from cached pieces; docs/benchmarks.md).",
)
@click.option(
    "--controls/--no-controls",
    default=True,
    show_default=True,
    help="Also write each sample's two control twins (gold removed, context swapped; same "
    "budget, question and answer key) to OUT/controls/<task>/<label>.jsonl "
    "(docs/suites.md); the data files are the same either way.",
)
@click.option(
    "--check-shortcuts",
    is_flag=True,
    help="After writing, run the no-model baselines on the output "
    "(as 'longbench100 baselines OUT'), record the verdict in the manifest and exit with status 1 when a task's "
    "best shortcut is over its suite limit (the data is kept).",
)
@endpoint_options("annotator")
@click.option(
    "--allow-unlabelled",
    is_flag=True,
    help="When the annotator gives some chunks no usable label (a small model's "
    "looping or empty replies), write the rows that do not need them and leave out the rest, counted in the "
    "manifest's shortfalls; without it such a run stops before writing anything.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the annotator calls (after cache hits) and their prompt tokens, then stop: nothing is sent or written.",
)
@click.option(
    "--wait",
    is_flag=True,
    help="When another run is writing the same --out, wait for it instead of refusing.",
)
def generate(
    suite_spec: str,
    tasks: str,
    lengths: str | None,
    rows: int,
    seed: int,
    tokenizer_spec: str,
    sources_option: str | None,
    out: Path,
    workers: int,
    templates_dir: Path | None,
    resume: bool,
    whole_documents: bool,
    chat_template: bool,
    reserve_output: int,
    unpaired: bool,
    negatives: str,
    verify_counts: bool,
    controls: bool,
    check_shortcuts: bool,
    annotator: JudgeOptions,
    allow_unlabelled: bool,
    dry_run: bool,
    wait: bool,
) -> None:
    """Generate benchmark samples whose whole prompt fits an exact token budget.

    Each sample hides its ground truth among real distractor documents of the same kind, pads with
    whole documents and closes the last gap with the opening of one more document cut at a sentence
    boundary, then counts the rendered prompt exactly: prompt_tokens <= budget, always.

    The ETHIC one-document tasks (recalling, organizing, section_summarizing) need chunk labels from
    an annotator model (--annotator-model); --dry-run says what that costs first.

    \b
    Example (the paper's suite from a local mirror):
      longbench100 generate --sources /data/lb100-mirror --out data/ --rows 100
    Example (ETHIC, chunk labels by a local server; try --dry-run first):
      longbench100 generate --suite ethic --lengths 8k,32k --rows 10 --out ethic/
        --annotator-model smollm2 --annotator-base-url http://127.0.0.1:8080/v1
    """
    from longbench100.catalog.suites import DEFAULT_SUITE, load_suite, pick_tasks, suite_for_tasks
    from longbench100.generate.options import GenerateOptions
    from longbench100.generate.run import run_generate

    suite = load_suite(suite_spec) if suite_spec else suite_for_tasks(tasks)
    if suite.name != DEFAULT_SUITE and not suite_spec:
        click.echo(f"suite: {suite.name} (it lists every task asked; --suite chooses another)")
    options = GenerateOptions(
        tasks=pick_tasks(tasks, suite),
        lengths=tuple(parse_length_list(lengths)) if lengths is not None else suite.lengths,
        rows=rows,
        seed=seed,
        tokenizer=tokenizer_spec,
        out=out,
        sources=sources_option,
        templates=templates_dir,
        workers=workers,
        resume=resume,
        whole_documents=whole_documents,
        chat_template=chat_template,
        reserve_output=reserve_output,
        unpaired=unpaired,
        negatives=negatives,
        suite=suite,
        suite_rules=bool(suite_spec) or tasks.strip() == "all",
        verify_counts=verify_counts,
        controls=controls,
        check_shortcuts=check_shortcuts,
        wait=wait,
        dry_run=dry_run,
        allow_unlabelled=allow_unlabelled,
        annotator=annotator,
    )
    manifest = run_generate(options, echo=console.echo, progress=not console.quiet())
    if dry_run:
        return
    if (manifest.get("shortcuts") or {}).get("passed") is False:
        click.echo(
            f"error: a no-model shortcut is over its limit in {out} (see the table above; the data is kept)",
            err=True,
        )
        sys.exit(1)
