"""Summaries of a generated folder: token statistics, fill, gold depth and passages, pairing and sources per task and length."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from longbench100.catalog.suites import recorded_suite
from longbench100.core.errors import UserError
from longbench100.core.json_shape import check_shape
from longbench100.core.lengths import DEFAULT_BASE_LABELS
from longbench100.folders.layout import DataFileRef, open_data_folder, read_file_records
from longbench100.sources.answerability import rule_counts_line

from .base_lengths import base_length_warnings
from .manifest import underfilled_line

_SUMMARISED = {
    "length": int,
    "prompt_tokens": int,
    "gold": {"depth?": (float, type(None)), "passages?": (list, type(None))},
}
"""The record fields a summary reads, beyond every record's own."""


@dataclass
class LengthSummary:
    """Statistics of one ``OUT/<task>/<label>.jsonl`` file."""

    rows: int
    budget: int
    tokens_min: int
    tokens_median: float
    tokens_max: int
    fill_min: float
    fill_p5: float
    fill_median: float
    over_budget: int
    depth_min: float | None
    depth_median: float | None
    depth_max: float | None
    gold_min: int | None = None  # gold passages per sample (None when the task's records name none)
    gold_median: float | None = None
    gold_max: int | None = None
    eligible: int | None = None
    paired_rows: int | None = None
    reused_rows: int | None = None
    sources: dict[str, int] | None = None  # rows per ground-truth source, from the manifest
    fill_by_tokenizer: dict[str, dict] | None = None  # several tokenizers: count_stats of each


@dataclass
class FolderSummary:
    """Every task and length of a folder, with the manifest's pairing and shortfall notes."""

    tasks: dict[str, dict[str, LengthSummary]] = field(default_factory=dict)
    paired_all_lengths: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    shortfalls: list[str] = field(default_factory=list)
    underfilled: list[str] = field(default_factory=list)
    skipped: list[str] = field(
        default_factory=list
    )  # suite tasks not built, each with why (manifest ``skipped_tasks``)
    warnings: list[str] = field(default_factory=list)
    near_duplicates: str | None = None
    unanswerable: str | None = None


def summarise_folder(out: Path) -> FolderSummary:
    """Read every data file under ``out`` (and its manifest when present); a record out of its
    file's task or length, or an id seen before in the folder, is a one-line error."""
    folder = open_data_folder(out, "OUT", unfinished=True)
    manifest = folder.manifest or {}  # none while a run is in progress
    summary = FolderSummary()
    seen: dict[str, str] = {}
    for ref in folder.files:
        task, label = ref.task, ref.label
        length_summary = summarise_file(ref, seen)
        facts = manifest.get("tasks", {}).get(task, {}).get("lengths", {}).get(label)
        if facts:
            length_summary.eligible = facts["eligible_items"]
            length_summary.paired_rows = facts["paired_rows"]
            length_summary.reused_rows = facts["reused_rows"]
            length_summary.sources = facts.get("sources")
        summary.tasks.setdefault(task, {})[label] = length_summary
    for task, facts in manifest.get("tasks", {}).items():
        summary.paired_all_lengths[task] = (
            facts["paired_rows_all_lengths"],
            facts["paired_over_lengths"],
        )
    suite = recorded_suite(manifest)  # warn about the base lengths scoring will default to
    summary.warnings = base_length_warnings(
        {
            task: {label: s.rows for label, s in by_label.items()}
            for task, by_label in summary.tasks.items()
        },
        tuple(suite["base_lengths"]) if suite else DEFAULT_BASE_LABELS,
    )
    summary.shortfalls = [
        f"{s['task']} {s['label']}: {s['rows']} of {s['requested']} rows ({s['reason']})"
        for s in manifest.get("shortfalls", [])
    ]
    summary.underfilled = [underfilled_line(entry) for entry in manifest.get("underfilled", [])]
    summary.skipped = list((manifest.get("skipped_tasks") or {}).values())
    summary.near_duplicates = near_duplicates_line(manifest.get("near_duplicates"))
    summary.unanswerable = unanswerable_line(manifest.get("sources", {}))
    return summary


def summarise_file(ref: DataFileRef, seen: dict[str, str] | None = None) -> LengthSummary:
    """Token, fill, depth and gold-passage statistics of one data file, read by the shared reader
    (:func:`read_file_records`; ``seen``: the ids of the folder's files read before)."""
    tokens, depths, golds, budget = [], [], [], 0
    by_tokenizer: dict[str, list[int]] = {}
    for where, record in read_file_records(ref, {} if seen is None else seen):
        check_shape(record, _SUMMARISED, where)
        if record["length"] <= 0:
            raise UserError(
                f"{where}: length must be a positive number of tokens, not {record['length']}"
            )
        budget = record["length"]
        tokens.append(record["prompt_tokens"])
        for spec, count in _counts_by_tokenizer(record, where).items():
            by_tokenizer.setdefault(spec, []).append(count)
        depth, passages = record["gold"].get("depth"), record["gold"].get("passages")
        if depth is not None:
            depths.append(depth)
        if passages is not None:
            golds.append(len(passages))
    if not tokens:
        budget = ref.length
        return LengthSummary(0, budget, 0, 0, 0, 0.0, 0.0, 0.0, 0, None, None, None)
    if by_tokenizer and any(len(counts) != len(tokens) for counts in by_tokenizer.values()):
        raise UserError(
            f"{ref.path}: prompt_tokens_by_tokenizer names other tokenizers in some "
            "records than in others"
        )
    return LengthSummary(
        rows=len(tokens),
        budget=budget,
        **count_stats(tokens, budget),
        depth_min=min(depths) if depths else None,
        depth_median=statistics.median(depths) if depths else None,
        depth_max=max(depths) if depths else None,
        gold_min=min(golds) if golds else None,
        gold_median=statistics.median(golds) if golds else None,
        gold_max=max(golds) if golds else None,
        fill_by_tokenizer={
            spec: count_stats(counts, budget) for spec, counts in by_tokenizer.items()
        }
        or None,
    )


def count_stats(tokens: list[int], budget: int) -> dict:
    """Prompt token counts of one file against its budget: ``tokens_min``, ``tokens_median``,
    ``tokens_max``, ``fill_min``, ``fill_p5``, ``fill_median`` (shares of the budget) and
    ``over_budget`` (prompts over it)."""
    fills = sorted(count / budget for count in tokens)
    return {
        "tokens_min": min(tokens),
        "tokens_median": statistics.median(tokens),
        "tokens_max": max(tokens),
        "fill_min": fills[0],
        "fill_p5": fills[int(0.05 * (len(fills) - 1))],
        "fill_median": statistics.median(fills),
        "over_budget": sum(count > budget for count in tokens),
    }


def _counts_by_tokenizer(record: dict, where: str) -> dict[str, int]:
    """A record's ``prompt_tokens_by_tokenizer`` (data fitted to several tokenizers), ``{}`` where
    it has none."""
    counts = record.get("prompt_tokens_by_tokenizer")
    if counts is None:
        return {}
    if not isinstance(counts, dict) or not all(type(count) is int for count in counts.values()):
        raise UserError(f"{where}: prompt_tokens_by_tokenizer must map tokenizer names to counts")
    return counts


def near_duplicates_line(facts: dict | None) -> str | None:
    """One line on the documents each source lost to near-duplicate grouping (and how many of them are
    identical copies, e.g. of a corpus another source also loads), from the manifest's section."""
    if not facts:
        return None
    identical = facts.get("identical", {})
    dropped = (
        ", ".join(
            f"{source} {count}"
            + (f" ({identical[source]} identical)" if identical.get(source) else "")
            for source, count in facts["dropped"].items()
        )
        or "none"
    )
    return (
        f"near-duplicate documents dropped (sharing >= {facts['threshold']:.0%} of {facts['shingle_words']}-word shingles, "
        f"identical texts included): {dropped}"
    )


def unanswerable_line(sources: dict) -> str | None:
    """One line on the items each source lost to its answerability rules, from the manifest's sources section."""
    dropped = {
        name: facts["unanswerable"] for name, facts in sources.items() if facts.get("unanswerable")
    }
    if not dropped:
        return None
    return "unanswerable items dropped at load: " + "; ".join(
        f"{name} {sum(counts.values())} ({rule_counts_line(counts)})"
        for name, counts in dropped.items()
    )
