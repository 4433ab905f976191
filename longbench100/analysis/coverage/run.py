"""Information coverage (IC): the share of a context that a query really needs (docs/coverage.md).

Two measurements, both per sample and then per task and length:

- by construction (generated data only, no model): the share of context tokens inside the gold
  material that the record's provenance names (:mod:`.coverage_gold`);
- by an evaluator model: the context cut into chunks of at most ``chunk_tokens`` tokens, one 0/1
  decision per chunk (:mod:`.coverage_rubric`), IC = mean of the decided chunks. Replies go
  through the LLM judge's client and cache; an unreadable reply leaves its chunk undecided.

On generated data both run, and the evaluator's chunk decisions are checked against the gold
chunks (a chunk is gold when it overlaps gold material): precision and recall per task.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from longbench100.analysis.coverage.gold import gold_spans, overlaps
from longbench100.analysis.prompt_parts import split_prompt
from longbench100.core.atomic import write_json_atomic
from longbench100.core.errors import UserError
from longbench100.core.version import __version__
from longbench100.folders.data_records import parse_record, tokenizer_identity
from longbench100.folders.guard import guard_output_file
from longbench100.folders.layout import MANIFEST, open_data_folder, read_file_records, read_jsonl
from longbench100.folders.lock import output_lock
from longbench100.judge.coverage_rubric import COVERAGE_METRIC, coverage_prompt
from longbench100.judge.grader import Judge, JudgePlan, Verdict
from longbench100.judge.prompts import JudgePrompt
from longbench100.judge.setup import check_judge, make_judge
from longbench100.llm.options import JudgeOptions
from longbench100.text.chunks import CHUNK_TOKENS, chunk_spans
from longbench100.text.joint_tokenizer import load_first_tokenizer
from longbench100.text.tokenization import DEFAULT_TOKENIZER, Tokenizer, load_tokenizer
from longbench100.text.units import Span

INPUT_GROUP = "input"
"""The task name under which samples of an ``--input`` file are grouped (their label is ``all``)."""


@dataclass(frozen=True)
class CoverageOptions:
    """What ``coverage`` was asked for: a generated data folder, or a JSONL file from elsewhere."""

    data_dir: Path | None = None
    input_file: Path | None = None
    context_field: str | None = None
    query_field: str | None = None
    id_field: str | None = None
    tokenizer: str | None = None  # --input only; a data folder uses its manifest's tokenizer
    tasks: list[str] | None = None
    labels: list[str] | None = None
    limit: int | None = None  # first N rows per task and length (per file for --input)
    evaluator: JudgeOptions = field(default_factory=JudgeOptions)  # model None: construction only
    chunk_tokens: int = CHUNK_TOKENS
    dry_run: bool = False
    out: Path | None = None
    progress: bool = True


@dataclass
class CoverageSample:
    """One context and its query; ``gold`` holds the gold character spans (generated data only)."""

    id: str
    task: str
    label: str
    context: str
    query: str
    gold: list[Span] | None = None
    chunks: list[Span] = field(default_factory=list)


@dataclass
class CoverageOutcome:
    """What :func:`run_coverage` did: the coverage.json content (``None`` on a dry run), the evaluator's
    plan on a dry run, and notes for the screen."""

    report: dict | None
    plan: JudgePlan | None = None
    notes: list[str] = field(default_factory=list)


def run_coverage(options: CoverageOptions) -> CoverageOutcome:
    """Measure IC by construction and/or by the evaluator; write ``options.out`` when given."""
    if options.out is not None and not options.dry_run:
        guard_output_file(
            options.out,
            "--out",
            "coverage",
            {"--data": options.data_dir, "--input": options.input_file},
        )
    samples, tokenizer, source = _load(options)
    judge = make_judge(options.evaluator, role="evaluator")
    if options.dry_run and judge is None:
        raise UserError("--dry-run counts evaluator calls: give --evaluator-model")
    if judge is None and source["kind"] == "input":
        raise UserError(
            "--input files have no provenance: give --evaluator-model to measure their coverage"
        )
    if judge is not None:
        for sample in samples:
            sample.chunks = chunk_spans(sample.context, tokenizer, options.chunk_tokens)
    prompts = [
        JudgePrompt(COVERAGE_METRIC, coverage_prompt(sample.context[a:b], sample.query))
        for sample in samples
        for a, b in sample.chunks
    ]
    if options.dry_run:
        assert judge is not None, "a dry run without an evaluator was refused above"
        return CoverageOutcome(None, plan=judge.plan(prompts))
    notes: list[str] = []
    verdicts: list[Verdict] = []
    if judge is not None:
        if judge.needs_calls(prompts):
            notes += check_judge(judge.config, options.evaluator.api_key_env, role="evaluator")
        judge.grade(prompts, progress=options.progress)
        verdicts = [judge.verdicts[prompt.text] for prompt in prompts]
        if verdicts and all(verdict.score is None for verdict in verdicts):
            reasons = sorted({verdict.reason or "no verdict" for verdict in verdicts})
            raise UserError(
                f"the evaluator decided none of the {len(verdicts)} chunks ({'; '.join(reasons)}): "
                "no coverage can be measured; check --evaluator-model and its server"
            )
    report = _report(samples, tokenizer, source, judge, options.chunk_tokens, verdicts)
    if options.out is not None:
        with output_lock(options.out, "--out"):
            write_json_atomic(options.out, report, indent=1)
    return CoverageOutcome(report, notes=notes)


def _load(options: CoverageOptions) -> tuple[list[CoverageSample], Tokenizer, dict]:
    """The samples to measure, the tokenizer that counts them, and where they came from."""
    if (options.data_dir is None) == (options.input_file is None):
        raise UserError(
            "give exactly one of --data (a generated folder) and --input (a JSONL file)"
        )
    if options.out is not None and (options.out.is_dir() or not options.out.parent.is_dir()):
        raise UserError(f"--out {options.out}: must be a file in an existing folder")
    if options.limit is not None and options.limit < 1:
        raise UserError(f"--limit {options.limit}: give a positive number of rows")
    if options.data_dir is not None:
        if options.context_field or options.query_field or options.id_field:
            raise UserError(
                "--context-field, --query-field and --id-field go with --input, not --data"
            )
        return _data_samples(options, options.data_dir)
    assert options.input_file is not None, "exactly one of --data and --input was checked above"
    return _input_samples(options, options.input_file)


def _data_samples(
    options: CoverageOptions, data_dir: Path
) -> tuple[list[CoverageSample], Tokenizer, dict]:
    """Samples of the generated folder ``data_dir``: context and gold spans cut exactly from each
    stored prompt."""
    folder = open_data_folder(data_dir)
    manifest = folder.manifest
    if manifest is None:
        raise UserError(
            f"--data {data_dir}: no {MANIFEST} (coverage needs a folder written by generate)"
        )
    manifest_options = manifest.get("options") or {}
    if manifest_options.get("chat_template"):
        raise UserError(
            f"--data {data_dir}: built with --chat-template; coverage needs plain prompts"
        )
    if options.tokenizer and options.tokenizer != manifest_options.get("tokenizer"):
        raise UserError(
            f"--tokenizer goes with --input; {data_dir} is counted with its own tokenizer "
            f"{manifest_options.get('tokenizer')}"
        )
    refs = folder.chosen_files(options.tasks, options.labels)
    samples = []
    seen: dict[str, str] = {}
    for ref in refs:
        for where, record in read_file_records(ref, seen)[: options.limit]:
            parse_record(record, where)  # the checks every reader of a data record makes
            if not isinstance(record.get("prompt"), str):
                raise UserError(f"{where}: not a data record (no prompt)")
            gold = record.get("gold") or {}
            parts = split_prompt(ref.task, record["prompt"], where, gold)
            query = parts.head.strip() + "\n\n" + parts.tail.strip()
            spans = gold_spans(ref.task, gold, parts, where)
            samples.append(
                CoverageSample(record["id"], ref.task, ref.label, parts.context, query, spans)
            )
    tokenizer = load_first_tokenizer(manifest_options.get("tokenizer") or DEFAULT_TOKENIZER)
    return (
        samples,
        tokenizer,
        {"kind": "data", "path": str(data_dir), "tokenizer": tokenizer_identity(manifest)},
    )


def _input_samples(
    options: CoverageOptions, path: Path
) -> tuple[list[CoverageSample], Tokenizer, dict]:
    """Samples of the JSONL file ``path`` from elsewhere: a context and a query field per line."""
    if not options.context_field or not options.query_field:
        raise UserError("--input needs --context-field and --query-field")
    if options.tasks or options.labels:
        raise UserError("--tasks and --lengths go with --data, not --input")
    if not path.is_file():
        raise UserError(f"--input {path}: no such file")
    samples = []
    fields = [options.context_field, options.query_field] + (
        [options.id_field] if options.id_field else []
    )
    for where, record in read_jsonl(path)[: options.limit]:
        if not isinstance(record, dict):
            raise UserError(f"{where}: expected a JSON object")
        for name in fields:
            if name not in record:
                raise UserError(f"{where}: no field {name!r}")
        context, query = record[options.context_field], record[options.query_field]
        if not isinstance(context, str) or not isinstance(query, str):
            raise UserError(
                f"{where}: fields {options.context_field!r} and {options.query_field!r} must be strings"
            )
        if not context.strip():
            raise UserError(f"{where}: field {options.context_field!r} is empty")
        sample_id = str(record[options.id_field]) if options.id_field else where.rsplit(":", 1)[1]
        samples.append(CoverageSample(sample_id, INPUT_GROUP, "all", context, query))
    if not samples:
        raise UserError(f"--input {path}: no records")
    tokenizer = load_tokenizer(options.tokenizer or DEFAULT_TOKENIZER)
    return samples, tokenizer, {"kind": "input", "path": str(path), "tokenizer": tokenizer.identity}


def _mean(values: list[float]) -> float | None:
    """The mean rounded to 4 places, or ``None`` for no values."""
    return round(statistics.fmean(values), 4) if values else None


def _ratio(part: int, whole: int) -> float | None:
    """``part / whole`` rounded to 4 places, or ``None`` when ``whole`` is 0."""
    return round(part / whole, 4) if whole else None


def _report(
    samples: list[CoverageSample],
    tokenizer: Tokenizer,
    source: dict,
    judge: Judge | None,
    chunk_tokens: int,
    verdicts: list[Verdict],
) -> dict:
    """The coverage.json content: per-sample figures, then per task and length, then the validation."""
    context_tokens = tokenizer.count_batch([sample.context for sample in samples])
    rows = []
    queue = iter(verdicts)
    for sample, tokens in zip(samples, context_tokens):
        row: dict = {
            "id": sample.id,
            "task": sample.task,
            "label": sample.label,
            "context_tokens": tokens,
        }
        if sample.gold is not None:
            row["gold_tokens"], row["ic"] = _gold_share(
                sample.context, sample.gold, tokenizer, tokens
            )
        if judge is not None:
            chosen = [next(queue) for _ in sample.chunks]
            decided = [verdict.score for verdict in chosen if verdict.score is not None]
            row["chunks"] = len(sample.chunks)
            if sample.gold is not None:
                row["gold_chunks"] = [int(overlaps(chunk, sample.gold)) for chunk in sample.chunks]
            row["decisions"] = [
                None if verdict.score is None else int(verdict.score) for verdict in chosen
            ]
            row["evaluator_ic"] = _mean(decided)
            row["undecided"] = [
                {"chunk": index, "reason": verdict.reason, "reply": verdict.reply}
                for index, verdict in enumerate(chosen)
                if verdict.score is None
            ]
        rows.append(row)
    report = {
        "tool": "longbench100",
        "version": __version__,
        "source": source,
        "chunk_tokens": chunk_tokens,
        "construction": _construction_table(rows) if source["kind"] == "data" else None,
        "evaluator": None,
        "samples": rows,
    }
    if judge is not None:
        report["evaluator"] = {
            **judge.describe(),
            "tasks": _evaluator_table(rows),
            "validation": _validation(rows) if source["kind"] == "data" else None,
        }
    return report


def _groups(rows: list[dict]) -> dict[str, dict[str, list[dict]]]:
    """Rows by task, then by length label, in the order they came."""
    groups: dict[str, dict[str, list[dict]]] = {}
    for row in rows:
        groups.setdefault(row["task"], {}).setdefault(row["label"], []).append(row)
    return groups


def _construction_table(rows: list[dict]) -> dict:
    """IC by construction per task and length: samples, mean, min and max (0-1)."""
    table: dict = {}
    for task, labels in _groups(rows).items():
        for label, group in labels.items():
            values = [row["ic"] for row in group if row["ic"] is not None]
            table.setdefault(task, {})[label] = {
                "samples": len(group),
                "ic": _mean(values),
                "ic_min": min(values) if values else None,
                "ic_max": max(values) if values else None,
                "context_tokens": _mean([row["context_tokens"] for row in group]),
            }
    return table


def _evaluator_table(rows: list[dict]) -> dict:
    """IC by the evaluator per task and length: samples, chunks, decided and undecided chunks, mean IC."""
    table: dict = {}
    for task, labels in _groups(rows).items():
        for label, group in labels.items():
            decisions = [value for row in group for value in row["decisions"]]
            undecided = sum(value is None for value in decisions)
            table.setdefault(task, {})[label] = {
                "samples": len(group),
                "chunks": len(decisions),
                "decided": len(decisions) - undecided,
                "undecided": undecided,
                "ic": _mean(
                    [row["evaluator_ic"] for row in group if row["evaluator_ic"] is not None]
                ),
            }
    return table


def _validation(rows: list[dict]) -> dict:
    """Per task, the evaluator's decided chunk decisions against the gold chunks: counts, precision, recall."""
    table: dict = {}
    for task, labels in _groups(rows).items():
        counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "undecided": 0}
        for row in (row for group in labels.values() for row in group):
            for decision, gold in zip(row["decisions"], row["gold_chunks"]):
                if decision is None:
                    counts["undecided"] += 1
                else:
                    counts[("t" if decision == gold else "f") + ("p" if decision else "n")] += 1
        table[task] = {
            **counts,
            "gold_chunks": counts["tp"] + counts["fn"],
            "precision": _ratio(counts["tp"], counts["tp"] + counts["fp"]),
            "recall": _ratio(counts["tp"], counts["tp"] + counts["fn"]),
        }
    return table


def construction_table(data_dir: Path) -> dict:
    """IC by construction per task and length of a generated folder: the ``construction`` table of coverage.json."""
    report = run_coverage(CoverageOptions(data_dir=data_dir, progress=False)).report
    assert report is not None, "only a dry run leaves no report"
    return report["construction"]


def _gold_share(
    context: str, spans: list[Span], tokenizer: Tokenizer, context_tokens: int
) -> tuple[int, float | None]:
    """Tokens of the gold spans (each counted on its own) and their share of ``context_tokens`` (at most 1)."""
    gold_tokens = sum(tokenizer.count_batch([context[a:b] for a, b in spans]))
    return gold_tokens, round(min(gold_tokens / context_tokens, 1.0), 4) if context_tokens else None
