"""The ``generate`` job: plan rows, build samples (in parallel when asked), stream them to disk, write the manifest."""

from __future__ import annotations

import os
import random
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from longbench100.annotation.labels import UnlabelledChunk
from longbench100.catalog.suites import Suite
from longbench100.catalog.task_info import reserved_output
from longbench100.core.digests import file_sha256
from longbench100.core.errors import UserError, out_of_room
from longbench100.core.interrupts import Interrupted
from longbench100.core.paths import CACHE_HINT, cache_dir
from longbench100.core.progress import progress_bar
from longbench100.core.workers import worker_pool
from longbench100.fitting.fit import BuildContext
from longbench100.fitting.kept_filler_cuts import keep_filler_cuts, recall_filler_cuts
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import shifted_spans
from longbench100.fitting.templates import EXAMPLE_VARIABLES, PromptTemplates
from longbench100.folders.guard import guard_output_dir, mark_folder
from longbench100.folders.layout import data_file_path, data_file_ref
from longbench100.folders.lock import output_lock
from longbench100.folders.writable import ensure_writable_dir
from longbench100.generate.base_lengths import base_length_warnings
from longbench100.generate.candidate_cache import cached_candidates, code_digest
from longbench100.generate.fill_notes import low_fill_note
from longbench100.generate.json_lines import EscapedText, RecurringForms, json_line_parts
from longbench100.generate.manifest import (
    build_manifest,
    check_finished_file,
    check_out_folder,
    claim_out_folder,
    log_finished_file,
    log_unlabelled_row,
    logged_unlabelled_rows,
    record_shortcut_check,
    shortfall_reason,
)
from longbench100.generate.options import GenerateOptions, LengthResult, RanOutRow
from longbench100.generate.output import (
    LineAppender,
    completed_rows,
    holds_rows,
    partial_file,
    written_rows,
    written_rows_in,
    written_sources,
)
from longbench100.generate.planner import LengthPlan, RowPlan, plan_rows, rows_per_source
from longbench100.generate.prompt_counts import prompt_counts
from longbench100.generate.twin_recipes import TwinKey, recipes_path
from longbench100.generate.verify_counts import verify_prompt_counts
from longbench100.sources.corpus import Corpus, load_corpus
from longbench100.sources.kept_near_copies import (
    keep_near_copy_answers,
    recall_near_copy_answers,
)
from longbench100.sources.locations import (
    SourceLocation,
    active_entries,
    resolve_location,
    stand_in_notes,
)
from longbench100.sources.records import Document, Item
from longbench100.tasks import BUILDERS
from longbench100.tasks.base import TaskBuilder
from longbench100.tasks.one_document import OneDocumentTask
from longbench100.text.joint_tokenizer import load_tokenizers
from longbench100.text.kept_pieces import keep_piece_counts, not_kept, recall_piece_counts
from longbench100.text.tokenization import Tokenizer

if TYPE_CHECKING:
    from longbench100.generate.controls import ControlsResult


BuiltRow = tuple[dict, EscapedText | str]
"""A record built in the run's own process, with its prompt's JSON form as written."""


@dataclass(frozen=True)
class WorkerState:
    """What every row's build reads: the run's options and tokenizer, and the prepared builders."""

    options: GenerateOptions
    tokenizer: Tokenizer
    builders: dict[str, TaskBuilder]
    built: dict[tuple[str, str], list[BuiltRow]] | None = None
    """Where rows built in the run's own process leave their records and prompt forms, by task
    and length, for the control twins (which then need not read the data file back, nor escape
    its prompts' documents again); ``None`` in worker processes."""
    forms: RecurringForms = field(default_factory=RecurringForms)
    """The JSON forms of the documents this process's prompts place, each escaped once."""


_worker_state: WorkerState | None = None
"""This process's :class:`WorkerState`, set by :func:`_set_worker_state` (the pool initializer)."""


def _set_worker_state(state: WorkerState | None) -> None:
    """Pool initializer: keep ``state`` for the rows this process builds (``None``: forget it)."""
    global _worker_state
    _worker_state = state


def _current_worker_state() -> WorkerState:
    """The state the pool initializer set in this process."""
    assert _worker_state is not None, (
        "rows are built only inside _executor, which sets the worker state"
    )
    return _worker_state


def run_generate(
    options: GenerateOptions, echo: Callable[[str], None] = print, progress: bool = True
) -> dict:
    """Run a whole generation job and return the manifest it wrote.

    Everything that can be checked cheaply is checked before the sources load: the options, that
    every template renders, and that ``out`` is writable and free (or resumable). Ctrl-C or SIGTERM
    (see ``interrupts``) drop the queued rows, wait for the few in hand, and raise :class:`Interrupted`
    with the resume hint; worker processes die with this process whatever ends it.
    """
    if options.rows < 1:
        raise UserError("--rows must be at least 1")
    if options.reserve_output < 0 or options.reserve_output >= min(
        budget for _, budget in options.lengths
    ):
        raise UserError(
            f"--reserve-output {options.reserve_output} must be >= 0 and smaller than the shortest length"
        )
    if options.annotated_tasks() and not options.annotator.model:
        tasks = options.annotated_tasks()
        raise UserError(
            f"{', '.join(tasks)} need{'s' if len(tasks) == 1 else ''} chunk labels by an annotator model: give --annotator-model "
            "(and --annotator-base-url for a local server), or leave the task out (docs/suites.md, ETHIC)"
        )
    if options.dry_run and not options.annotator.model:
        raise UserError(
            "--dry-run counts the annotator's calls: give --annotator-model and a task that needs one (recalling, organizing, section_summarizing)"
        )
    location = resolve_location(options.sources)
    templates = PromptTemplates(options.templates)
    for task in options.tasks:
        templates.validate(task)
    if options.dry_run:
        return _dry_run(options, location, echo, progress)
    guard_output_dir(
        options.out, "--out", "data", {"--templates": options.templates, "--sources": location.root}
    )
    ensure_writable_dir(cache_dir(), f"the cache folder ({CACHE_HINT})")
    with output_lock(options.out, "--out", options.wait):
        check_out_folder(options.out, options.resume)
        if options.annotator.model and options.annotated_tasks():  # told before the sources load
            from longbench100.llm.client import refuse_hung_server  # the HTTP client, only here

            config = options.annotator.config()
            refuse_hung_server(config.base_url, config.model, config.api_key, "annotator server")
        try:
            return _generate(options, location, templates, echo, progress)
        except Interrupted:
            raise
        except KeyboardInterrupt as stop:
            raise Interrupted(_resume_hint(options.out), stop) from None
        except OSError as error:
            room = out_of_room(error)
            if room is None:
                raise
            happened, remedy = room
            raise UserError(
                f"{happened} while writing {options.out} ({written_rows_in(options.out)} rows "
                f"written so far are kept): {remedy}, then rerun with --resume to continue"
            ) from None


def _resume_hint(out: Path) -> str:
    """What to do after an interrupt: resume the rows kept in ``out``, or start again when none was
    finished (``out`` may not even exist yet)."""
    if out.is_dir() and holds_rows(out):
        return f"rows finished so far are saved in {out}; rerun with --resume to continue"
    return "no row was finished yet; rerun the same command to start again"


def _suite_stand_ins(
    options: GenerateOptions, location: SourceLocation
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """For the run's tasks that its suite builds from their anchor's own data only (``stand_ins = false``): the
    stand-in sources at ``location`` left out of each one's ground truth, and the tasks that leaves with no
    ground-truth source at all, or whose sources ``location`` lacks (skipped), each with a one-line reason."""
    if not options.suite_rules:
        return {}, {}
    registry = location.registry()
    active = active_entries(location, registry)
    left_out, skipped = {}, {}
    for task in options.tasks:
        if task not in options.suite.without_stand_ins:
            continue
        real = {name: entry for name, entry in active.items() if entry.has_role(task, "real")}
        stand_ins = {name: entry.stand_in_for for name, entry in real.items() if entry.stand_in_for}
        names = list(stand_ins)
        if not real:
            wanted = ", ".join(
                name for name, entry in registry.items() if entry.has_role(task, "real")
            )
            skipped[task] = (
                f"{task}: its source ({wanted or 'none registered'}) is not in {location.describe()} (docs/suites.md)"
            )
        elif names and len(names) == len(real):
            replaced = ", ".join(dict.fromkeys(stand_ins.values()))
            what = "its stand-in" if len(names) == 1 else "its stand-ins"
            skipped[task] = (
                f"{task}: suite {options.suite.name} builds it from {replaced} only, which {location.describe()} lacks; "
                f"{what} ({', '.join(names)}) left out (docs/suites.md); generate --tasks {task} without --suite builds it anyway"
            )
        elif names:
            left_out[task] = names
    return left_out, skipped


def _without_skipped(
    options: GenerateOptions, skipped: dict[str, str], echo: Callable[[str], None]
) -> GenerateOptions:
    """``options`` less the skipped tasks (each said in one line); none left is a one-line error."""
    if not skipped:
        return options
    kept = tuple(task for task in options.tasks if task not in skipped)
    if not kept:
        raise UserError(f"nothing to build: {' | '.join(skipped.values())}")
    for reason in skipped.values():
        echo(f"skipped: {reason}")
    return replace(options, tasks=kept)


def _generate(
    options: GenerateOptions,
    location: SourceLocation,
    templates: PromptTemplates,
    echo: Callable[[str], None],
    progress: bool,
) -> dict:
    """Load the tokenizer and sources, claim ``out``, build every task and length, and write the manifest."""
    left_out, skipped = _suite_stand_ins(options, location)
    options = _without_skipped(options, skipped, echo)
    registry = location.registry()
    active = active_entries(location, registry)
    for note in stand_in_notes(location, registry, active, options.tasks):
        echo(note)
    for task, names in left_out.items():
        echo(
            f"note: {task}: suite {options.suite.name} takes no stand-in: its ground truth leaves out {', '.join(names)}"
        )
    tokenizer, corpus, builders = _load_builders(
        options, location, templates, options.tasks, progress, left_out
    )
    budgets_run = [budget for _, budget in options.lengths]
    recalled = recall_piece_counts(tokenizer.members, options.tasks, budgets_run)
    recalled_answers = recall_near_copy_answers(options.tasks)
    recall_filler_cuts(
        tokenizer, corpus.documents, corpus.content_key(), code_digest(), options.tasks
    )
    _refuse_budgets_too_small(options, templates, tokenizer)
    budgets = _budgets(options)
    template_sha256 = {task: templates.fingerprint(task)["sha256"] for task in options.tasks}
    claim_out_folder(
        options.out,
        {  # before any annotator call: a resume with other options is refused for free
            **options.shaping(),
            "tokenizer_identity": tokenizer.identity,
            "template_sha256": template_sha256,
            "source_files": {
                **{name: data.files for name, data in corpus.sources.items()},
                **{name: corpus.raw_files[name] for name in corpus.drawn_only()},
            },
        },
    )
    mark_folder(options.out, "data")
    annotator = _annotate(options, builders, tokenizer, budgets, echo, progress)
    echo(
        f"tokenizer {tokenizer.spec} ({tokenizer.origin}); sources: {location.describe()} "
        f"({len(corpus.sources)} loaded{_drawn_note(corpus)})"
    )

    plans: dict[str, dict[str, LengthPlan]] = {}
    for task, builder in builders.items():
        probe = _context(options, tokenizer, task, options.lengths[0][0], options.lengths[0][1])
        candidates = cached_candidates(
            builder, probe, corpus, template_sha256[task], builder.candidates
        )
        plans[task] = plan_rows(
            candidates, budgets, options.rows, options.seed, task, paired=not options.unpaired
        )
        if (
            not builder.reuses_items
        ):  # the same item twice at a length would repeat a prompt: fewer rows instead
            plans[task] = {
                label: replace(plan, rows=[row for row in plan.rows if not row.reused])
                for label, plan in plans[task].items()
            }
        if isinstance(
            builder, OneDocumentTask
        ):  # these rows choose their documents: their layout says which are paired
            builder.layout(tokenizer, options.seed, options.rows, list(budgets.values()))
            plans[task] = {
                label: _with_pairing(plan, builder, budgets[label])
                for label, plan in plans[task].items()
            }

    results: dict[str, dict[str, LengthResult]] = {}
    cells = [(task, label, budget) for task in options.tasks for label, budget in options.lengths]
    controls: dict[str, dict[str, ControlsResult | None]] = {}
    control_pools: dict[str, list[Document]] = {}  # one pool per task, for all its lengths
    corpus_key = corpus.content_key() if options.controls else None  # in the twins' recipe keys
    pending = {
        (task, label): _pending_rows(options, task, label, budget, plans[task][label])
        for task, label, budget in cells
    }
    for task, builder in builders.items():
        builder.prepare(
            tokenizer, _prompt_tokens(options), _drawn_items(options, tokenizer, task, pending)
        )
        builder.read_ahead(_row_randoms(options, tokenizer, task, pending))
    workers = _row_workers(options, builders.values())
    built: dict[tuple[str, str], list[BuiltRow]] | None = (
        {} if options.controls and workers <= 1 else None
    )
    with _executor(workers, WorkerState(options, tokenizer, builders, built)) as executor:
        # one stream of rows over every task and length, so no worker waits for a file's last row before the next file's
        lines = executor.map(
            _build_line,
            [job for rows in pending.values() if rows for job in rows.jobs],
            chunksize=1,
        )
        for task, label, budget in cells:
            plan = plans[task][label]
            own_items = builders[task].chooses_own_items
            results.setdefault(task, {})[label] = _write_length(
                options,
                task,
                label,
                plan,
                pending[task, label],
                lines,
                progress,
                own_items,
                len(tokenizer.members) > 1,
            )
            _report_shortfall(echo, task, label, plan, results[task][label], options.rows)
            fill_note = low_fill_note(
                data_file_path(options.out, task, label),
                task,
                label,
                budget,
                results[task][label].ran_out,
                corpus.unavailable_with_role(task, "noisy"),
                results[task][label].prompt_tokens,
            )
            if fill_note is not None:
                echo(fill_note)
            if options.controls:
                rows = built.pop((task, label), None) if built is not None else None
                whole = rows is not None and _all_built_here(results[task][label], rows)
                controls.setdefault(task, {})[label] = _write_controls(
                    options,
                    tokenizer,
                    builders[task],
                    control_pools,
                    corpus_key,
                    task,
                    label,
                    budgets[label],
                    echo,
                    results[task][label].sha256,
                    rows if whole else None,
                )
    for builder in builders.values():
        builder.finish(tokenizer)
    keep_piece_counts(tokenizer.members, recalled, options.tasks, budgets_run)
    keep_near_copy_answers(recalled_answers, options.tasks)
    keep_filler_cuts()
    for line in base_length_warnings(
        {
            task: {label: result.rows for label, result in by_label.items()}
            for task, by_label in results.items()
        },
        options.suite.base_lengths,
    ):
        echo(f"warning: {line}")
    if options.verify_counts:
        checked = verify_prompt_counts(
            options.out,
            tokenizer,
            options.tasks,
            [label for label, _ in options.lengths],
            options.chat_template,
        )
        echo(f"verified {checked} prompt token counts: each equals a whole recount")
    for line in _fill_lines(results):
        echo(line)
    chances = _chances(options.out, options.suite, results) if options.controls else None
    manifest = build_manifest(
        options,
        tokenizer,
        templates,
        corpus,
        results,
        _paired_all(plans, results),
        annotator,
        skipped,
        left_out,
        controls if options.controls else None,
        chances,
    )
    if options.check_shortcuts:
        manifest = _check_shortcuts(options.out, manifest, echo)
    echo(
        f"wrote {sum(r.rows for by_label in results.values() for r in by_label.values())} samples to {options.out}"
    )
    return manifest


def _refuse_budgets_too_small(
    options: GenerateOptions, templates: PromptTemplates, tokenizer: Tokenizer
) -> None:
    """Before the output folder is claimed: refuse a length that not even a task's smallest prompt
    (its template around a few words of example material) fits, where every row would fail."""
    smallest = min(
        tokenizer.count(templates.render(task, variables))
        for task in options.tasks
        for variables in EXAMPLE_VARIABLES[task]
    )
    small = [label for label, budget in options.lengths if budget < smallest]
    if small:
        raise UserError(
            f"--lengths {', '.join(small)}: too small for any task's prompt (the "
            f"smallest, with a few words of material, takes {smallest} tokens): "
            "give larger lengths"
        )


def _load_builders(
    options: GenerateOptions,
    location: SourceLocation,
    templates: PromptTemplates,
    tasks: tuple[str, ...],
    progress: bool,
    left_out: dict[str, list[str]] | None = None,
) -> tuple[Tokenizer, Corpus, dict[str, TaskBuilder]]:
    """The run's tokenizer, the sources ``tasks`` use (checked to hold what each task needs) and the tasks' builders;
    ``left_out``: task -> sources that give it no ground truth (stand-ins its suite does not take)."""
    tokenizer = load_tokenizers(options.tokenizer, chat=options.chat_template)
    needed, drawn = _sources_needed(location, tasks)
    drawn_only = all(BUILDERS[task].reads_drawn_counts_only for task in tasks)
    corpus = load_corpus(
        location,
        tokenizer,
        only=needed,
        progress=progress,
        workers=options.workers,
        tokens_drawn=_prompt_tokens(options) * len(tasks) if drawn_only else None,
        drawn=drawn,
    )  # the tasks' rows together: they may all draw from the same sources
    corpus.left_out = {task: frozenset(names) for task, names in (left_out or {}).items()}
    _check_pools(corpus, tasks, location)
    return tokenizer, corpus, {task: BUILDERS[task](corpus, templates) for task in tasks}


def _drawn_note(corpus: Corpus) -> str:
    """How many sources the run reads only as drawn, for the sources line (nothing for none)."""
    drawn = len(corpus.drawn_only())
    return f", {drawn} cleaned as their documents are drawn" if drawn else ""


def _sources_needed(location: SourceLocation, tasks: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """The sources ``tasks`` read whole, and those they read only as pools that clean what they
    draw (a role among the task's ``drawn_roles``)."""
    whole: set[str] = set()
    drawn: set[str] = set()
    for name, entry in location.registry().items():
        for role in entry.roles:
            task, _, kind = role.partition(":")
            if task in tasks:
                (drawn if kind in BUILDERS[task].drawn_roles else whole).add(name)
    return whole, drawn


def _budgets(options: GenerateOptions) -> dict[str, int]:
    """What a prompt may use at each length (before any task's own answer room)."""
    return {label: budget - options.reserve_output for label, budget in options.lengths}


def _prompt_tokens(options: GenerateOptions) -> int:
    """The most tokens one task's prompts hold together in this run: rows times every budget."""
    return options.rows * sum(_budgets(options).values())


SERIAL_BELOW = 32_000_000
"""A run whose prompts hold fewer tokens than this together builds its rows in this process: its rows
take about a second of CPU or less (some 30-50 ns per prompt token, warm), and worker processes would
cost more than they save. Forked workers copy the pages of the loaded corpus they touch, build their
own document indexes and piece counts, and send every line back through a pipe: on the project's
2-vCPU machine, the 100-longbench suite at 128k x 20 rows (21 M tokens) took 1.45 s of CPU with two
workers and 1.05 s in one process, whose wall time was no longer; RULER's three niah tasks at
4k/32k/128k x 25 rows (13 M tokens), 1.13 s against 0.78 s, and 1.2 s of wall time against 1.0 s."""


def _row_workers(options: GenerateOptions, builders: Iterable[TaskBuilder]) -> int:
    """How many processes build the rows: ``--workers``, or one for a run too small to gain or
    whose rows work out what they draw as they draw it
    (:meth:`TaskBuilder.rows_in_this_process`)."""
    if _prompt_tokens(options) * len(options.tasks) < SERIAL_BELOW:
        return 1
    if any(builder.rows_in_this_process() for builder in builders):
        return 1
    return options.workers


def _annotation_requests(
    options: GenerateOptions, builders: dict[str, TaskBuilder], tokenizer, budgets: dict[str, int]
) -> list[tuple[str, str]]:
    """(kind, chunk) for every chunk the one-document tasks may use at the requested lengths and rows."""
    return [
        request
        for builder in builders.values()
        if isinstance(builder, OneDocumentTask)
        for request in builder.annotation_requests(
            tokenizer, options.seed, options.rows, list(budgets.values())
        )
    ]


def _annotate(
    options: GenerateOptions,
    builders: dict[str, TaskBuilder],
    tokenizer,
    budgets: dict[str, int],
    echo: Callable[[str], None],
    progress: bool,
) -> dict | None:
    """Label the chunks the one-document tasks need (cached replies first) and hand the labels to their builders."""
    requests = _annotation_requests(options, builders, tokenizer, budgets)
    if not requests:
        return None
    from longbench100.annotation.annotator import (  # the HTTP client loads only when a task needs labels
        annotate,
        unlabelled_line,
    )

    annotations = annotate(
        options.annotator, requests, progress=progress, allow_unlabelled=options.allow_unlabelled
    )
    for note in annotations.info.pop("notes"):
        echo(note)
    info = annotations.info
    echo(
        f"annotator {info['model']}: {sum(info['chunks'].values())} chunk labels ({info['cache_hits']} cached, {info['calls']} calls)"
    )
    for builder in builders.values():
        if isinstance(builder, OneDocumentTask):
            builder.annotations = annotations
    if "unlabelled" in info:
        echo(
            f"warning: annotator {info['model']}: {unlabelled_line(info['unlabelled']['reasons'], sum(info['chunks'].values()))}; a row that needs "
            "one of them is left out (--allow-unlabelled; counted per task and length)"
        )
    return info


def _dry_run(
    options: GenerateOptions, location: SourceLocation, echo: Callable[[str], None], progress: bool
) -> dict:
    """Count the annotator calls and prompt tokens the run would need (after cache hits); write nothing."""
    tasks = tuple(options.annotated_tasks())
    tokenizer, _, builders = _load_builders(
        options, location, PromptTemplates(options.templates), tasks, progress
    )
    requests = list(
        dict.fromkeys(_annotation_requests(options, builders, tokenizer, _budgets(options)))
    )
    from longbench100.annotation.annotator import plan_annotations

    plan = plan_annotations(options.annotator, requests)
    echo(
        f"annotator dry run ({options.annotator.model}): {plan.unique_prompts} chunk prompts for {', '.join(tasks) or 'no task'}, "
        f"{plan.cache_hits} cached, {plan.calls} calls to send, {plan.prompt_tokens} prompt tokens (cl100k_base)"
        + (
            ", plus one call for each reply that loops to the budget (--annotator-loop-penalty)"
            if options.annotator.loop_penalty
            else ""
        )
        + "; nothing written"
    )
    return {
        "dry_run": {
            "prompts": plan.unique_prompts,
            "cache_hits": plan.cache_hits,
            "calls": plan.calls,
            "prompt_tokens": plan.prompt_tokens,
        }
    }


def _chances(
    out: Path, suite: Suite, results: dict[str, dict[str, LengthResult]]
) -> dict[str, dict[str, float]]:
    """Each task and length's chance level, kept with the controls so ``score --controls`` can flag
    a model's control score above it (``baselines/check.py``); the data files' sha256, worked out
    as they were written, key its cache."""
    from longbench100.baselines.check import cell_chances

    digests = {
        (task, label): result.sha256
        for task, by_label in results.items()
        for label, result in by_label.items()
        if result.sha256
    }
    return cell_chances(out, suite.metrics, digests)


def _check_shortcuts(out: Path, manifest: dict, echo: Callable[[str], None]) -> dict:
    """Run the no-model baselines on ``out``, print their table and keep the verdict in the manifest (key ``shortcuts``)."""
    from longbench100.baselines.check import run_baselines
    from longbench100.baselines.render import format_table, summary_record

    run = run_baselines(out)
    echo(format_table(run))
    return record_shortcut_check(out, manifest, summary_record(run))


def _all_built_here(result: LengthResult, rows: list[BuiltRow]) -> bool:
    """Whether ``rows`` (those this run built in its own process) are every line of the
    length's data file: none was resumed from an earlier run's."""
    return result.prompt_tokens is not None and len(rows) == result.rows


def _write_controls(
    options: GenerateOptions,
    tokenizer: Tokenizer,
    builder: TaskBuilder,
    pools: dict[str, list[Document]],
    corpus_key: str | None,
    task: str,
    label: str,
    budget: int,
    echo: Callable[[str], None],
    data_sha256: str | None,
    rows: list[BuiltRow] | None = None,
) -> ControlsResult | None:
    """Write (or, on a resumed run, read back) the control twins of one task and length, spelled
    from their kept recipes where a run made them from the same data file (``data_sha256``, where
    this run worked it out) and inputs (``corpus_key``: the corpus's content key); ``None``, said
    in a warning, when its prompts do not have a layout the controls can split (a --templates
    template). ``rows``: the data file's records as this run built them, with their prompts'
    forms (else read back)."""
    from longbench100.generate.controls import (  # here: a run without twins needs none of them
        ControlBuilder,
        controls_file_path,
        read_controls_result,
        write_controls,
    )

    twins_file = controls_file_path(options.out, task, label)
    if twins_file.exists():
        check_finished_file(options.out, twins_file)
        return read_controls_result(options.out, task, label)
    ctx = _context(options, tokenizer, task, label, budget)
    with not_kept(tokenizer.members):  # the twins' refills: many pieces, read back seldom
        if task not in pools:  # ``builder``'s pool, kept in ``pools`` for the task's other lengths
            pools[task] = builder.control_pool(ctx.tokenizer)
        twins = ControlBuilder(
            pools[task], ctx.tokenizer, options.chat_template, ctx.budget, options.seed
        )
        key = TwinKey(
            task,
            label,
            ctx.tokenizer,
            options.chat_template,
            ctx.budget,
            options.seed,
            corpus_key,
            list(twins.pool.documents),
        )
        sha256 = data_sha256 or file_sha256(data_file_path(options.out, task, label))
        try:
            result = write_controls(
                options.out,
                task,
                label,
                twins,
                recipes_path(key, sha256),
                None if rows is None else [record for record, _ in rows],
                None if rows is None else [form for _, form in rows],
            )
        except UserError as error:
            echo(f"warning: no control twins for {task} {label}: {error}")
            return None
    log_finished_file(options.out, twins_file, result.sha256)
    return result


def _context(
    options: GenerateOptions, tokenizer, task: str, label: str, budget: int
) -> BuildContext:
    """The build context of one task and length."""
    return BuildContext(
        tokenizer,
        task,
        label,
        budget - reserved_output(task, options.reserve_output),
        options.seed,
        options.whole_documents,
        options.chat_template,
        options.negatives,
    )


def _check_pools(corpus: Corpus, tasks: tuple[str, ...], location: SourceLocation) -> None:
    """Fail before any work when a task lacks every source of a role it needs, saying why the first
    one is unavailable and what to do."""
    where = location.describe()
    for task in tasks:
        for kind in BUILDERS[task].required_roles:
            if not corpus.sources_with_role(task, kind) and not corpus.drawn_with_role(task, kind):
                wanted = [
                    name for name, entry in corpus.entries.items() if entry.has_role(task, kind)
                ]
                if not wanted:
                    raise UserError(
                        f"task {task}: no source in {where} plays its {kind} role (a {task}:{kind} entry in sources/)"
                    )
                raise UserError(
                    f"task {task}: none of its {kind} sources ({', '.join(wanted)}) is available in {where}"
                    f"{location.unavailable_hint(wanted)}"
                )


class _SerialExecutor:
    """An in-process stand-in for a process pool (``--workers 1``)."""

    def map(self, function, jobs, chunksize: int = 1) -> Iterator:
        return map(function, jobs)


@contextmanager
def _executor(workers: int, state: WorkerState):
    """A forked process pool sharing the loaded corpus (workers die with this process), or the
    serial stand-in; either way the processes that build rows hold ``state``."""
    if workers <= 1:
        _set_worker_state(state)
        try:
            yield _SerialExecutor()
        finally:
            _set_worker_state(None)
        return
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # forked: the workers inherit the state, nothing is pickled
    with worker_pool(workers, "fork", _set_worker_state, (state,)) as pool:
        yield pool


Job = tuple[str, str, int, RowPlan]


@dataclass
class PendingRows:
    """The rows of one task and length still to build, after those a resumed run wrote (``written``)."""

    written: set[int]
    jobs: list[Job]


def _pending_rows(
    options: GenerateOptions, task: str, label: str, budget: int, plan: LengthPlan
) -> PendingRows | None:
    """What one task and length still needs: ``None`` when its file is final."""
    final = data_file_path(options.out, task, label)
    if final.exists():
        return None
    written = set(completed_rows(partial_file(final)))
    start = max(written) + 1 if written else 0
    return PendingRows(
        written,
        [(task, label, budget, row_plan) for row_plan in plan.rows if row_plan.row >= start],
    )


def _drawn_items(
    options: GenerateOptions,
    tokenizer: Tokenizer,
    task: str,
    pending: dict[tuple[str, str], PendingRows | None],
) -> list[tuple[Item, int]]:
    """The item each of ``task``'s ``pending`` rows asks about, with the budget its prompt is
    built at (its build context's, as :func:`_build_line` makes it)."""
    return [
        (row_plan.candidate.item, _context(options, tokenizer, task, label, budget).budget)
        for (row_task, label), rows in pending.items()
        if row_task == task and rows
        for _, _, budget, row_plan in rows.jobs
        if row_plan.candidate is not None
    ]


def _row_randoms(
    options: GenerateOptions,
    tokenizer: Tokenizer,
    task: str,
    pending: dict[tuple[str, str], PendingRows | None],
) -> list[tuple[int, random.Random]]:
    """The budget and random generator each of ``task``'s ``pending`` rows is built with (its
    build context's budget, and a generator of its own, as :func:`_build_line` makes them)."""
    return [
        (
            _context(options, tokenizer, task, label, budget).budget,
            _row_rng(options, task, budget, row_plan.row),
        )
        for (row_task, label), rows in pending.items()
        if row_task == task and rows
        for _, _, budget, row_plan in rows.jobs
    ]


def _row_rng(options: GenerateOptions, task: str, budget: int, row: int) -> random.Random:
    """The random generator row ``row`` of ``task`` at ``budget`` is built with."""
    return derive_rng(options.seed, task, budget, row)


def _write_length(
    options: GenerateOptions,
    task: str,
    label: str,
    plan: LengthPlan,
    pending: PendingRows | None,
    lines: Iterator,
    progress: bool,
    chooses_own_items: bool,
    several_tokenizers: bool,
) -> LengthResult:
    """Append the lines of the ``pending`` rows of one task and length, taken in order from ``lines``, then finalise
    the file (``None``: final already). ``chooses_own_items``: the task's rows pick their own
    items as they build; ``several_tokenizers``: the fill is summarised per tokenizer."""
    final = data_file_path(options.out, task, label)
    if pending is None:
        digest = check_finished_file(options.out, final)
        written = set(written_rows(final))
        ran_out: list[RanOutRow] = []
        prompt_tokens: list[int] | None = None
    else:
        partial = partial_file(final)
        written, jobs = (
            pending.written,
            pending.jobs,
        )  # this run's rows are added to the resumed run's as they are written
        ran_out = []
        prompt_tokens = None if written else []  # known for every line when none was resumed
        appender = LineAppender(partial)
        bar = progress_bar(
            len(plan.rows),
            f"{task} {label}",
            "row",
            progress,
            initial=len(plan.rows) - len(jobs),
            leave=False,
        )
        try:
            for job, line in zip(
                jobs, lines
            ):  # jobs first: zip takes no line past this file's last
                if (
                    line == UNLABELLED
                ):  # (a JSON record never equals it; workers return a copy, so not `is`)
                    log_unlabelled_row(options.out, task, label, job[3].row)
                elif line is not None:
                    line, tokens, ran_out_row = line
                    appender.write(line)
                    written.add(job[3].row)
                    if prompt_tokens is not None:
                        prompt_tokens.append(tokens)
                    if ran_out_row is not None:
                        ran_out.append(ran_out_row)
                bar.update(1)
        except BaseException:
            appender.close()
            raise
        finally:
            bar.close()
        digest = appender.finish(final)
        log_finished_file(options.out, final, digest)
    built = [row_plan for row_plan in plan.rows if row_plan.row in written]
    failed = [row_plan.row for row_plan in plan.rows if row_plan.row not in written]
    # rerank, ICL and the one-document tasks choose their items as they build: count them from what was written
    sources = written_sources(final) if chooses_own_items else rows_per_source(plan, built)
    fills = _fill_by_tokenizer(options.out, task, label) if several_tokenizers and written else None
    return LengthResult(
        len(written),
        plan.eligible,
        sum(r.paired for r in built),
        sum(r.reused for r in built),
        failed,
        sources,
        sorted(logged_unlabelled_rows(options.out, task, label) & set(failed)),
        ran_out,
        digest,
        fills,
        prompt_tokens,
    )


def _fill_by_tokenizer(out: Path, task: str, label: str) -> dict[str, dict] | None:
    """The fill of a finished data file summarised per tokenizer (a run with several)."""
    from longbench100.generate.inspection import summarise_file  # here: one tokenizer needs none

    return summarise_file(data_file_ref(out, task, label)).fill_by_tokenizer


UNLABELLED = "unlabelled"
"""What :func:`_build_line` returns for a row that needs a chunk the annotator gave no label (``--allow-unlabelled``)."""


def _build_line(job: Job) -> tuple[list[bytes], int, RanOutRow | None] | str | None:
    """Build one sample and serialise it as a JSON line in UTF-8, in the parts it joins (runs in
    a worker process when ``--workers`` > 1), with its ``prompt_tokens`` and, when its padding ran
    out, its fill and pool (else ``None``); ``None`` for a row that cannot be built,
    :data:`UNLABELLED` for one that needs a chunk left without a label."""
    task, label, budget, row_plan = job
    state = _current_worker_state()
    options, builder = state.options, state.builders[task]
    ctx = _context(options, state.tokenizer, task, label, budget)
    rng = _row_rng(options, task, budget, row_plan.row)
    try:
        sample = builder.build(ctx, row_plan.row, row_plan.candidate, rng)
    except UnlabelledChunk:
        return UNLABELLED
    if sample is None:
        return None
    gold = {**sample.gold, "paired": row_plan.paired, "reused": row_plan.reused}
    prompt, closed_book_prompt = sample.fitted.prompt, sample.closed_book_prompt
    if (
        options.chat_template
    ):  # store exactly what the model receives: send these with --mode completion
        prompt = ctx.tokenizer.apply_chat_template(prompt)
        if (
            "spans" in gold
        ):  # the template wraps the prompt: its offsets move by the template's opening
            gold["spans"] = shifted_spans(gold["spans"], prompt.index(sample.fitted.prompt))
        closed_book_prompt = (
            ctx.tokenizer.apply_chat_template(closed_book_prompt) if closed_book_prompt else None
        )
    record = {
        "id": f"{task}-{label}-{row_plan.row:04d}",
        "task": task,
        "length": budget,
        "label": label,
        "row": row_plan.row,
        "prompt": prompt,
        **prompt_counts(ctx.tokenizer, prompt, sample.fitted.tokens),
        "answers": sample.answers,
        "closed_book_prompt": closed_book_prompt,
        "metric": options.suite.metric(task),
        "question": sample.question,
        "gold": gold,
        "distractors": [
            piece.provenance()
            for piece in sample.fitted.pieces
            if piece.role in ("distractor", "filler")
        ],
        "seed": options.seed,
    }
    exhausted = sample.fitted.exhausted_pool
    ran_out = None if exhausted is None else RanOutRow(sample.fitted.tokens / budget, exhausted)
    form = state.forms.escaped(prompt, ctx.tokenizer.located(prompt))
    line = json_line_parts({**record, "prompt": form})
    if state.built is not None:
        state.built.setdefault((task, label), []).append((record, form))
    return line, record["prompt_tokens"], ran_out


def _fill_lines(results: dict[str, dict[str, LengthResult]]) -> list[str]:
    """With several tokenizers, one line per task and length: each one's median and lowest fill."""
    return [
        f"fill {task} {label}: "
        + ", ".join(
            f"{spec} {stats['fill_median']:.1%} (min {stats['fill_min']:.1%})"
            for spec, stats in result.fill_by_tokenizer.items()
        )
        for task, by_label in results.items()
        for label, result in by_label.items()
        if result.fill_by_tokenizer
    ]


def _report_shortfall(
    echo: Callable[[str], None],
    task: str,
    label: str,
    plan: LengthPlan,
    result: LengthResult,
    rows: int,
) -> None:
    """Say on screen when a length got fewer rows than asked, or reused items."""
    if result.rows < rows:
        echo(
            f"shortfall: {task} {label}: {result.rows} of {rows} rows ({shortfall_reason(result, bool(plan.rows))})"
        )
    if result.reused:
        reuse = (
            f"only {plan.eligible} eligible items, {result.reused} rows reuse an item"
            if plan.eligible is not None  # a one-document task counts windows, not items
            else f"{result.reused} rows share text of their document with another row"
        )
        echo(f"note: {task} {label}: {reuse}")


def _with_pairing(plan: LengthPlan, builder: OneDocumentTask, budget: int) -> LengthPlan:
    """``plan`` with each row's pairing (and text shared with another row) as the builder's layout places it."""
    rows = [
        replace(row, paired=paired, reused=shared)
        for row in plan.rows
        for paired, shared in [builder.row_pairing(budget, row.row)]
    ]
    return replace(plan, rows=rows)


def _paired_all(
    plans: dict[str, dict[str, LengthPlan]], results: dict[str, dict[str, LengthResult]]
) -> dict[str, dict]:
    """Per task: rows written, asking the same item, at every requested length that got rows at all.

    A length where no row was written (nothing fits, or every row failed) is left out of both the
    count and the list of lengths.
    """
    paired = {}
    for task, by_label in plans.items():
        written_paired = {
            label: {
                row.row
                for row in plan.rows
                if row.paired and row.row not in results[task][label].failed_rows
            }
            for label, plan in by_label.items()
            if results[task][label].rows
        }
        rows = set.intersection(*written_paired.values()) if written_paired else set()
        paired[task] = {"rows": len(rows), "lengths": list(written_paired)}
    return paired
