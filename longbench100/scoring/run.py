"""The ``score`` library API: :class:`ScoreOptions` and :func:`run_score`, which the command only calls.

One run reads the data folder and the predictions, checks that the predictions answer this data's
prompts, checks the judge (when a task uses it) before any grading, grades, applies the QA filter,
aggregates, writes results.json and prints what a user must know. It refuses to pass silently:
ungraded samples end the run with an error (after results.json is written, for inspection) unless
``allow_ungraded``, and a missing prediction or failed request is never scored 0
(:mod:`.complete_rows`).
"""

from dataclasses import dataclass, field
from pathlib import Path

from longbench100.catalog.judge_styles import resolve_judge_style
from longbench100.catalog.suites import recorded_suite
from longbench100.core.errors import UserError
from longbench100.core.lengths import DEFAULT_BASE_LABELS, parse_length
from longbench100.folders.data_records import (
    DataRecord,
    load_data,
    manifest_sha256,
    tokenizer_identity,
)
from longbench100.folders.guard import guard_output_file
from longbench100.folders.layout import controls_folder, first_rows, read_folder_manifest
from longbench100.folders.lock import output_lock
from longbench100.judge.cost import check_prices, plan_lines
from longbench100.judge.grader import Judge
from longbench100.judge.prompts import JudgePrompt
from longbench100.judge.setup import check_judge, make_judge
from longbench100.llm.options import JudgeOptions
from longbench100.scoring.aggregates.aggregate import aggregate, canonical_base_labels
from longbench100.scoring.aggregates.by_suite import suite_blocks
from longbench100.scoring.console_lines import Echo, print_summary, reasons_text, ungraded_reasons
from longbench100.scoring.control_scores import control_block, control_lines
from longbench100.scoring.metrics.classic import DEFAULT_ROUGE_VARIANT, ROUGE_VARIANTS
from longbench100.scoring.qa_filter.threshold import DEFAULT_THRESHOLD

from .complete_rows import (
    RowSelection,
    coverage_lines,
    refuse_failed,
    refuse_incomplete,
    select_rows,
)
from .epochs import chosen_epochs, mean_over_epochs
from .grading import JUDGE_METRICS, choose_metrics
from .predictions import (
    Prediction,
    PredictionSource,
    check_fingerprints,
    load_predictions,
    match_predictions,
    read_prediction_source,
)
from .results import build_results, build_settings, write_results
from .scorer import ScoreOutcome, score_predictions, scoring_prompts


@dataclass(frozen=True)
class ScoreOptions:
    """Every option of one ``score`` run (the command's options, by the same names)."""

    data_dir: Path
    predictions: Path
    out: Path
    qa_filter: float | None = float(DEFAULT_THRESHOLD)
    model_name: str | None = None
    base_lengths: tuple[str, ...] | None = (
        None  # None: the data's suite's base lengths (2k, 4k, 6k before suites)
    )
    tasks: tuple[str, ...] | None = None  # score only these tasks; None: every task of the data
    lengths: tuple[str, ...] | None = None  # score only these length labels; None: every length
    allow_missing: bool = False
    missing_rows: str = "paired"  # with allow_missing: "paired" or "per-length" (complete_rows.py)
    epoch: int | None = None  # grade this epoch alone; None: the mean over every epoch
    allow_ungraded: bool = False
    n_boot: int = 1000
    seed: int = 0
    metric_mode: str = "auto"
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    judge_style: str | None = (
        None  # None: the data's suite's judge_style, else "100-longbench" (judge_style.py)
    )
    rouge_variant: str = DEFAULT_ROUGE_VARIANT
    limit: int | None = None
    dry_run: bool = False
    wait: bool = False  # wait for another run writing the same --out instead of refusing
    price_in: float | None = None
    price_out: float | None = None
    # also grade the answers on the control twins (scoring/control_scores.py)
    controls: bool = False


def default_model_name(predictions: Path) -> str:
    """The predictions folder name, or the file name without extension for a single file."""
    resolved = predictions.resolve()
    return resolved.stem if resolved.is_file() else resolved.name


def prepare_judge(
    options: JudgeOptions,
    prompts: list[JudgePrompt],
    dry_run: bool,
    echo: Echo,
    data_fingerprint: str | None = None,
) -> Judge | None:
    """The judge when some task uses it, checked with a test request before any work when grading ``prompts``
    will call it (not on a dry run, which sends nothing, nor when every reply and key point is cached).
    ``data_fingerprint`` keys the key points it extracts (HELMET summaries)."""
    judge = make_judge(options, data_fingerprint)
    if judge is not None and not dry_run and judge.needs_calls(prompts):
        for note in check_judge(judge.config, options.api_key_env):
            echo(note)
    return judge


def chosen_records(
    records: list[DataRecord],
    tasks: tuple[str, ...] | None,
    lengths: tuple[str, ...] | None,
    base_labels: list[str],
) -> list[DataRecord]:
    """The records of the chosen ``tasks`` and ``lengths`` (``None``: all); records outside them are
    not scored and not missing. A named task or length without data, and a base length the data has
    but ``lengths`` leaves out, are one-line errors."""
    have_tasks = sorted({record.task for record in records})
    have_labels = sorted({record.label for record in records}, key=parse_length)
    for name, wanted, have in (("--tasks", tasks, have_tasks), ("--lengths", lengths, have_labels)):
        absent = [value for value in wanted or () if value not in have]
        if absent:
            raise UserError(
                f"{name} {','.join(wanted or ())}: the data has no {', '.join(absent)} "
                f"(it has {', '.join(have)})"
            )
    chosen = [
        record
        for record in records
        if (tasks is None or record.task in tasks) and (lengths is None or record.label in lengths)
    ]
    if lengths is not None:
        outside = [
            label
            for label in base_labels
            if label not in lengths
            and any(r.label == label for r in records if tasks is None or r.task in tasks)
        ]
        if outside:
            plural = "s" if len(outside) > 1 else ""
            raise UserError(
                f"--lengths {','.join(lengths)} leaves out the base length{plural} "
                f"{', '.join(outside)} that the Base Ability averages: add them, or "
                "choose others with --base-lengths"
            )
    return chosen


def limit_rows(records: list[DataRecord], limit: int | None) -> list[DataRecord]:
    """The records of the first ``limit`` rows (by row number) of every task and length; all when ``limit`` is None."""
    if limit is None:
        return records
    if limit < 1:
        raise UserError(f"--limit {limit}: give 1 or more rows per task and length")
    return first_rows(records, limit)


def read_predictions(
    path: Path,
    records: list[DataRecord],
    every_id: set[str],
    manifest: str | None,
    allow_missing: bool,
    echo: Echo,
) -> dict[str, Prediction]:
    """Read predictions, match them to ``records`` (ids of ``every_id`` outside them are ignored) and check their
    prompt fingerprints; return them by id."""
    by_id, _ = match_predictions(
        load_predictions(path),
        [record.id for record in records],
        every_id,
        allow_missing=allow_missing,
        source=path,
    )
    for note in check_fingerprints(by_id, records, manifest, source=path):
        echo(note)
    return by_id


@dataclass(frozen=True)
class _ReadPredictions:
    """What ``score`` read: the predictions by id of each epoch graded, the records to grade, and
    the source."""

    by_epoch: list[dict[str, Prediction]]
    selection: RowSelection
    source: PredictionSource
    epochs: list[int | None]


def _read_for_score(
    options: ScoreOptions,
    records: list[DataRecord],
    every_id: set[str],
    manifest: str | None,
    echo: Echo,
) -> _ReadPredictions:
    """Read the predictions of every epoch graded, check them, and choose the records answered in
    each (refusing failed requests and incomplete predictions unless ``allow_missing``)."""
    path = options.predictions
    source = read_prediction_source(path)
    epochs = chosen_epochs(source.epochs, options.epoch)
    expected = [record.id for record in records]
    by_epoch = []
    for epoch in epochs:
        predictions = [prediction for prediction in source.predictions if prediction.epoch == epoch]
        by_id, _ = match_predictions(
            predictions, expected, every_id, allow_missing=True, source=path
        )
        notes = check_fingerprints(by_id, records, manifest, source=path, hint=source.mismatch_hint)
        for note in notes:
            echo(note)
        by_epoch.append(by_id)
    failed = frozenset(
        record_id
        for by_id in by_epoch
        for record_id, prediction in by_id.items()
        if prediction.prediction is None
    )
    answered = set.intersection(*(set(by_id) for by_id in by_epoch)) - failed
    if not options.allow_missing:
        refuse_failed(records, set(failed), path, source.retry_hint)
        refuse_incomplete(records, answered, path)
    selection = select_rows(records, answered, options.missing_rows, failed)
    return _ReadPredictions(by_epoch, selection, source, epochs)


def run_score(options: ScoreOptions, echo: Echo = print, progress: bool = True) -> dict:
    """Score one model's predictions and write results.json; return the results (a dry run returns its plan).

    Raises :class:`UserError` for bad input, predictions made for other prompts, a judge that does
    not answer, and (after writing results.json) samples left ungraded unless ``allow_ungraded``.
    """
    if options.dry_run:
        return _score(options, echo, progress)
    guard_output_file(
        options.out,
        "--out",
        "results",
        {"--data": options.data_dir, "--predictions": options.predictions},
    )
    with output_lock(options.out, "--out", options.wait):
        return _score(options, echo, progress)


def _score(options: ScoreOptions, echo: Echo, progress: bool) -> dict:
    """:func:`run_score`, holding the results file's lock unless it is a dry run."""
    if options.rouge_variant not in ROUGE_VARIANTS:
        raise UserError(
            f"--rouge-variant {options.rouge_variant}: choose from {', '.join(ROUGE_VARIANTS)}"
        )
    check_prices(options.price_in, options.price_out)
    for name, labels in (
        ("--lengths", options.lengths),
        ("--base-lengths", options.base_lengths),
        ("--tasks", options.tasks),
    ):
        if labels is not None and not labels:
            raise UserError(f"{name} is empty: name what to use, or leave the option out")
    suite = recorded_suite(read_folder_manifest(options.data_dir))
    judge_style = resolve_judge_style(options.judge_style, suite)
    base_labels = canonical_base_labels(
        list(options.base_lengths or (suite["base_lengths"] if suite else DEFAULT_BASE_LABELS))
    )
    every = load_data(options.data_dir)
    records = limit_rows(
        chosen_records(every, options.tasks, options.lengths, base_labels), options.limit
    )
    present = sorted({record.label for record in records}, key=parse_length)
    if options.base_lengths and not set(base_labels) & set(present):
        raise UserError(
            f"--base-lengths {','.join(options.base_lengths)}: the data has no rows at any of them "
            f"(its lengths: {', '.join(present)}), so no Base Ability or LongScore could be computed"
        )
    manifest = manifest_sha256(options.data_dir)
    twins = (
        load_data(controls_folder(options.data_dir))
        if controls_folder(options.data_dir).is_dir()
        else []
    )
    # logs of an export may hold both
    known = {record.id for record in every} | {twin.id for twin in twins}
    read = _read_for_score(options, records, known, manifest, echo)
    if not read.selection.records:
        unanswered = read.selection.missing + read.selection.failed
        unpaired = options.missing_rows == "paired" and unanswered < len(records)
        failed = f" ({read.selection.failed} requests failed)" if read.selection.failed else ""
        raise UserError(
            f"predictions {options.predictions}: no data record has an answer{failed}"
            + (" at every length of its task (try --missing-rows per-length)" if unpaired else "")
        )
    records = read.selection.records
    tasks = list(dict.fromkeys(record.task for record in records))
    metrics = choose_metrics(
        tasks,
        options.metric_mode,
        bool(options.judge.model),
        families=suite["metrics"] if suite else None,
        judge_style=judge_style,
    )
    uses_judge = any(metric in JUDGE_METRICS for metric in metrics.values())
    prompts = (
        [
            prompt
            for by_id in read.by_epoch
            for prompt in scoring_prompts(records, by_id, metrics, options.qa_filter)
        ]
        if uses_judge
        else []
    )
    judge = (
        prepare_judge(options.judge, prompts, options.dry_run, echo, manifest)
        if uses_judge
        else None
    )
    if options.dry_run:
        plan = judge.plan(prompts) if judge else None
        for line in plan_lines(plan, options.judge.max_tokens, options.price_in, options.price_out):
            echo(line)
        return {"dry_run": None if plan is None else vars(plan)}
    outcome = mean_over_epochs(
        [
            score_predictions(
                records,
                by_id,
                metrics,
                options.qa_filter,
                judge,
                progress=progress,
                rouge_variant=options.rouge_variant,
            )
            for by_id in read.by_epoch
        ]
    )
    results = _results(options, outcome, metrics, judge, base_labels, read, suite, judge_style)
    if options.controls:
        results["aggregates"]["controls"] = control_block(
            options.data_dir,
            options.predictions,
            records,
            twins,
            known,
            metrics,
            judge,
            options.rouge_variant,
            echo,
        )
        for line in control_lines(results["aggregates"]["controls"]):
            echo(line)
    write_results(options.out, results)
    print_summary(results, outcome, echo)
    for task, label in read.selection.left_out_cells:
        echo(f"{task} {label}: no predictions at all; left out (null), not scored 0")
    for line in coverage_lines(read.selection, options.missing_rows):
        echo(line)
    if len(read.epochs) > 1:
        echo(
            f"epochs {', '.join(map(str, read.epochs))}: each record's score is the mean over "
            "its epochs (--epoch N grades one alone)"
        )
    for task in results["skipped_tasks"]:
        echo(
            f"{task}: not generated (its suite skipped it; see results skipped_tasks), so in no overall"
        )
    echo(f"wrote {options.out}")
    _refuse_ungraded(outcome, options)
    return results


def _results(
    options: ScoreOptions,
    outcome: ScoreOutcome,
    metrics: dict[str, str],
    judge: Judge | None,
    base_labels: list[str],
    read: _ReadPredictions,
    suite: dict | None,
    judge_style: str,
) -> dict:
    """Aggregate the scored samples and assemble results.json (``judge_style`` is recorded when the judge graded)."""
    ungraded = sum(sample.score is None and not sample.filtered for sample in outcome.samples)
    judge_block = None if judge is None else judge.describe()
    fingerprint = manifest_sha256(options.data_dir)
    data_manifest = read_folder_manifest(options.data_dir) or {}
    missing_cells: dict[str, list[str]] = {}
    for task, label in read.selection.left_out_cells:
        missing_cells.setdefault(task, []).append(label)
    return build_results(
        model=options.model_name or read.source.model or default_model_name(options.predictions),
        data_dir=options.data_dir,
        manifest_sha256=fingerprint,
        predictions=options.predictions,
        metric_mode=options.metric_mode,
        metrics=metrics,
        judge=judge_block,
        settings=build_settings(
            metric_mode=options.metric_mode,
            metrics=metrics,
            rouge_variant=options.rouge_variant,
            judge=judge_block,
            judge_style=None if judge is None else judge_style,
            qa_filter=options.qa_filter,
            tokenizer=tokenizer_identity(data_manifest),
            base_lengths=base_labels,
            data_fingerprint=fingerprint,
            suite=suite["name"] if suite else None,
        ),
        outcome_counts={
            "missing_predictions": read.selection.missing,
            "missing_cells": missing_cells,
            "rows": {
                "missing_rows": options.missing_rows if options.allow_missing else None,
                "incomplete": read.selection.incomplete,
            },
            "epochs": {
                "graded": [epoch for epoch in read.epochs if epoch is not None],
                "present": list(read.source.epochs),
            },
            "skipped_tasks": data_manifest.get("skipped_tasks") or {},
            "failed_predictions": read.selection.failed,
            "ungraded": ungraded,
            "ungraded_by_reason": ungraded_reasons(outcome),
            "limit": options.limit,
            "qa_filter": outcome.qa_filter,
        },
        base_labels=base_labels,
        samples=[sample.to_json() for sample in outcome.samples],
        aggregates={
            **aggregate(
                outcome.samples,
                base_labels,
                n_boot=options.n_boot,
                seed=options.seed,
                unscored=read.selection.unscored_tasks,
            ),
            "suites": suite_blocks(
                outcome.samples,
                base_labels,
                suite,
                n_boot=options.n_boot,
                seed=options.seed,
                unscored=read.selection.unscored_tasks,
            ),
        },
    )


def _refuse_ungraded(outcome: ScoreOutcome, options: ScoreOptions) -> None:
    """Fail the run when samples stayed ungraded, unless the user accepts it."""
    reasons = ungraded_reasons(outcome)
    if reasons and not options.allow_ungraded:
        raise UserError(
            f"{sum(reasons.values())} samples could not be graded by the judge ({reasons_text(reasons)}); "
            f"results written to {options.out} for inspection (samples[].judge_reply); "
            "fix the judge and rerun, or pass --allow-ungraded to accept them"
        )
