"""The run-state file that guards ``--resume`` and the manifest that describes a finished output folder."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import TYPE_CHECKING

from longbench100.catalog.task_info import reserved_output
from longbench100.core.atomic import write_json_atomic
from longbench100.core.digests import file_sha256
from longbench100.core.errors import UserError
from longbench100.core.version import __version__
from longbench100.folders.layout import CONTROLS_FOLDER, RUN_STATE, data_file_path, sealed_manifest

from .output import holds_rows

if TYPE_CHECKING:
    from longbench100.fitting.templates import PromptTemplates
    from longbench100.generate.controls import ControlsResult
    from longbench100.generate.options import GenerateOptions, LengthResult, RanOutRow
    from longbench100.sources.corpus import Corpus
    from longbench100.text.tokenization import Tokenizer

FINISHED_LOG = ".longbench100-finished.jsonl"
"""The sha256 of each data file as this run finished it, one JSON line each, so ``--resume`` refuses
one edited since."""
UNLABELLED_LOG = ".longbench100-unlabelled.jsonl"
"""Rows left out for want of chunk labels, one JSON line each, appended as they happen (so ``--resume`` keeps them)."""
MANIFEST = "manifest.json"


def check_out_folder(out: Path, resume: bool) -> None:
    """Before any work: a folder holding a run with finished rows needs ``--resume``; any other non-empty folder
    is refused. A run that stopped before finishing any row (a failed start) leaves a folder that is reused as new."""
    if (out / RUN_STATE).exists():
        if not resume and holds_rows(out):
            raise UserError(
                f"{out} already holds a generation run: pass --resume to continue it, or choose an empty --out folder"
            )
    elif out.exists() and any(out.iterdir()):
        raise UserError(
            f"--out {out} is not empty and holds no longbench100 run; choose an empty or new folder"
        )


CHANGED_WHAT = {
    "tasks": "--tasks",
    "lengths": "--lengths",
    "rows": "--rows",
    "seed": "--seed",
    "tokenizer": "--tokenizer",
    "whole_documents": "--whole-documents",
    "chat_template": "--chat-template",
    "reserve_output": "--reserve-output",
    "paired": "--unpaired",
    "negatives": "--negatives",
    "templates": "--templates",
    "suite": "--suite or the suite file",
    "annotator": "--annotator-model, --allow-unlabelled or the annotation prompts",
    "tokenizer_identity": "the tokenizer's vocabulary",
    "template_sha256": "a prompt template",
    "source_files": "the source files",
}
"""What a user changed, in their words, for each key of the recorded run state (see ``GenerateOptions.shaping``)."""


def claim_out_folder(out: Path, state: dict) -> None:
    """Record the run's options and inputs in ``out``, or, when resuming, refuse any difference from the recorded run.

    ``state`` holds everything that shapes the output, including the tokenizer identity, the template
    checksums and the source file checksums, so a resumed run cannot mix corpora, templates or vocabularies.
    A recorded run without any finished row is simply replaced.
    """
    state_file = out / RUN_STATE
    if not state_file.exists() or not holds_rows(out):
        write_json_atomic(state_file, state, indent=2)
        return
    try:
        previous = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UserError(
            f"{state_file}: unreadable run state ({error}); start again in an empty folder"
        ) from None
    if previous != state:
        changed = sorted(
            key for key in set(previous) | set(state) if previous.get(key) != state.get(key)
        )
        described = ", ".join(f"{CHANGED_WHAT.get(key, key)} ({key})" for key in changed)
        raise UserError(
            f"--resume with different options or inputs than the run in {out}: changed {described}; rerun with the "
            "first run's options and inputs, or choose an empty --out folder"
        )


def build_manifest(
    options: "GenerateOptions",
    tokenizer: "Tokenizer",
    templates: "PromptTemplates",
    corpus: "Corpus",
    results: dict[str, dict[str, "LengthResult"]],
    paired_all: dict[str, dict],
    annotator: dict | None = None,
    skipped: dict[str, str] | None = None,
    left_out: dict[str, list[str]] | None = None,
    controls: dict[str, dict[str, "ControlsResult | None"]] | None = None,
    chances: dict[str, dict[str, float]] | None = None,
) -> dict:
    """Describe the finished output folder and write ``OUT/manifest.json`` atomically (``annotator``: who labelled
    the one-document tasks' chunks, with prompt versions, calls and cache hits; ``skipped``: the suite's tasks not
    built, each with why; ``left_out``: stand-in sources kept out of a task's ground truth by its suite)."""
    files, tasks, shortfalls, underfilled = {}, {}, [], []
    for task, by_label in results.items():
        tasks[task] = {
            "paired_rows_all_lengths": paired_all[task]["rows"],
            "paired_over_lengths": paired_all[task]["lengths"],
            "template_sha256": templates.fingerprint(task)["sha256"],
            "lengths": {},
        }
        if reserved_output(
            task, options.reserve_output
        ):  # the recall tasks keep answer room of their own
            tasks[task]["reserved_output_tokens"] = reserved_output(task, options.reserve_output)
        for label, result in by_label.items():
            path = data_file_path(options.out, task, label)
            relative = path.relative_to(options.out).as_posix()
            files[relative] = {"sha256": result.sha256 or file_sha256(path), "rows": result.rows}
            tasks[task]["lengths"][label] = {
                "rows": result.rows,
                "eligible_items": result.eligible,
                "paired_rows": result.paired_rows,
                "reused_rows": result.reused,
                "failed_rows": result.failed_rows,
                "sources": result.sources,
                **({"unlabelled_rows": result.unlabelled_rows} if result.unlabelled_rows else {}),
                **(
                    {"prompt_tokens_by_tokenizer": result.fill_by_tokenizer}
                    if result.fill_by_tokenizer
                    else {}
                ),
            }
            if result.rows < options.rows:
                shortfalls.append(
                    {
                        "task": task,
                        "label": label,
                        "rows": result.rows,
                        "requested": options.rows,
                        "reason": shortfall_reason(result, result.eligible != 0),
                    }
                )
            if result.ran_out:
                underfilled.append(
                    underfilled_entry(
                        task,
                        label,
                        dict(options.lengths)[label],
                        result.ran_out,
                        corpus.unavailable_with_role(task, "noisy"),
                    )
                )
    manifest = {
        "tool": "longbench100",
        "version": __version__,
        "python": platform.python_version(),
        "options": options.shaping(),
        "suite": options.suite.record(),
        "lengths": {label: budget for label, budget in options.lengths},
        "tokenizer": {
            "spec": tokenizer.spec,
            "identity": tokenizer.identity,
            "chat_template": options.chat_template,
            "reserve_output": options.reserve_output,
            "counting": tokenizer.counting,
            **(
                {
                    "tokenizers": [
                        {
                            "spec": member.spec,
                            "identity": member.identity,
                            "counting": member.counting,
                        }
                        for member in tokenizer.members
                    ]
                }
                if len(tokenizer.members) > 1
                else {}
            ),
        },
        "sources": {
            **{
                name: {
                    **_source_identity(corpus, name),
                    "unanswerable": dict(data.unanswerable),
                    "files": data.files,
                    "documents": len(data.documents),
                    "items": len(data.items),
                }
                for name, data in corpus.sources.items()
            },
            **{
                name: {
                    **_source_identity(corpus, name),
                    "files": corpus.raw_files[name],
                    "documents": None,
                    "items": None,
                    "raw_documents": len(corpus.raw[name]),
                }
                for name in corpus.drawn_only()
            },
        },
        "missing_sources": corpus.missing,
        "near_duplicates": corpus.near_duplicates.settings(),
        "tasks": tasks,
        "files": files,
        "shortfalls": shortfalls,
        **({"underfilled": underfilled} if underfilled else {}),
        **({"skipped_tasks": skipped} if skipped else {}),
        **({"stand_ins_left_out": left_out} if left_out else {}),
        **({"annotator": {**annotator, **_rows_left_out(results)}} if annotator else {}),
        **({"controls": _controls_entry(controls, chances or {})} if controls is not None else {}),
    }
    manifest = sealed_manifest(manifest)
    write_json_atomic(options.out / MANIFEST, manifest, indent=2)
    return manifest


def _source_identity(corpus: "Corpus", name: str) -> dict:
    """What the manifest says of every source it read: where from, under which terms, and how its
    text was cleaned and its items checked."""
    entry = corpus.entries[name]
    return {
        "repo_id": entry.repo_id,
        "revision": entry.revision,
        "commit": corpus.commits.get(name),
        "license": entry.license,
        "stand_in_for": entry.stand_in_for,
        "clean": list(entry.clean),
        "answerable": list(entry.answerable),
    }


def _controls_entry(
    controls: dict[str, dict[str, "ControlsResult | None"]], chances: dict[str, dict[str, float]]
) -> dict:
    """``{"folder": "controls", "files": {path: {"sha256", "rows": {kind: rows}}}, "chance": {task:
    {label: c}}}``: the control twins' files (paths relative to the data folder), like ``files`` for
    the data, and the chance level a model's score on them is judged against."""
    files = {
        f"{CONTROLS_FOLDER}/{task}/{label}.jsonl": {"sha256": result.sha256, "rows": result.rows}
        for task, by_label in controls.items()
        for label, result in by_label.items()
        if result is not None
    }
    return {"folder": CONTROLS_FOLDER, "files": files, "chance": chances}


def record_shortcut_check(out: Path, manifest: dict, verdict: dict) -> dict:
    """The manifest with the no-model baselines' verdict (key ``shortcuts``), written back to ``out``."""
    manifest = sealed_manifest({**manifest, "shortcuts": verdict})
    write_json_atomic(out / MANIFEST, manifest, indent=2)
    return manifest


def shortfall_reason(result: "LengthResult", has_items: bool) -> str:
    """Why a task and length got fewer rows than asked: no item fits at all, or how many rows needed a chunk the
    annotator gave no label (``--allow-unlabelled``) and how many others could not be built."""
    if not has_items:
        return "no ground-truth item fits this length"
    unlabelled = len(result.unlabelled_rows)
    others = len(result.failed_rows) - unlabelled
    verb = "needs" if unlabelled == 1 else "need"
    parts = (
        [
            f"{unlabelled} {_rows(unlabelled)} {verb} a chunk the annotator gave no usable label (--allow-unlabelled)"
        ]
        if unlabelled
        else []
    )
    if others:
        parts.append(
            f"{others} {_rows(others)} could not be built: the material does not fit the budget, or holds nothing to ask"
        )
    if (
        not parts and result.eligible is not None
    ):  # rows were not planned: too few items for a task that asks none twice
        parts.append(
            f"only {result.eligible} ground-truth {'item fits' if result.eligible == 1 else 'items fit'} this length, "
            "and this task asks none twice"
        )
    return "; ".join(parts)


def underfilled_entry(
    task: str, label: str, length: int, rows: list[RanOutRow], unavailable: list[str]
) -> dict:
    """The manifest's note on a task and length whose ``rows`` ran out of padding: how many, their
    fill (share of the ``length``) and why: the tokens of distinct text each source of their pool
    holds (the most any row's pool held), against the length, and the task's padding sources this
    run could not read (``unavailable``)."""
    held: dict[str, int] = {}
    for row in rows:
        for source, tokens in row.pool_tokens.items():
            held[source] = max(held.get(source, 0), tokens)
    held = dict(sorted(held.items(), key=lambda pair: (-pair[1], pair[0])))
    fills = [row.fill for row in rows]
    return {
        "task": task,
        "label": label,
        "rows": len(rows),
        "fill_min": round(min(fills), 4),
        "fill_max": round(max(fills), 4),
        "length": length,
        "padding_tokens": held,
        "unavailable_sources": unavailable,
        "reason": _underfill_reason(length, held, unavailable),
    }


def _underfill_reason(length: int, held: dict[str, int], unavailable: list[str]) -> str:
    """Why rows ran out of padding, with the figures of :func:`underfilled_entry`."""
    per_source = ", ".join(f"{source} {tokens:,}" for source, tokens in held.items())
    reason = (
        "every document its padding draws from is already in the prompt: the sources hold too "
        f"little distinct text for this length, {sum(held.values()):,} tokens against "
        f"{length:,} ({per_source})"
    )
    if unavailable:
        reason += f"; not available to this run: {', '.join(unavailable)}"
    return reason


def underfilled_line(entry: dict) -> str:
    """One line on an :func:`underfilled_entry`, as ``generate`` and ``inspect`` print it."""
    fills = dict.fromkeys(f"{100 * entry[key]:.1f}%" for key in ("fill_min", "fill_max"))
    return (
        f"{entry['task']} {entry['label']}: {entry['rows']} {_rows(entry['rows'])} fill only "
        f"{'-'.join(fills)} of the length ({entry['reason']})"
    )


def _rows_left_out(results: dict[str, dict[str, "LengthResult"]]) -> dict:
    """``{"rows_left_out": {task: {label: rows}}}`` for the rows left out for want of chunk labels (else nothing)."""
    left_out = {
        task: {label: len(result.unlabelled_rows) for label, result in by_label.items()}
        for task, by_label in results.items()
        if any(result.unlabelled_rows for result in by_label.values())
    }
    return {"rows_left_out": left_out} if left_out else {}


def _rows(count: int) -> str:
    """ "row" or "rows"."""
    return "row" if count == 1 else "rows"


def log_unlabelled_row(out: Path, task: str, label: str, row: int) -> None:
    """Note in ``out`` that a row was left out for a chunk without a label (kept across ``--resume``)."""
    with open(out / UNLABELLED_LOG, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"task": task, "label": label, "row": row}) + "\n")


def logged_unlabelled_rows(out: Path, task: str, label: str) -> set[int]:
    """The rows of ``task`` at ``label`` noted by :func:`log_unlabelled_row` in this run or a resumed one."""
    path = out / UNLABELLED_LOG
    if not path.exists():
        return set()
    entries = (
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    )
    return {entry["row"] for entry in entries if entry["task"] == task and entry["label"] == label}


def log_finished_file(out: Path, path: Path, sha256: str) -> None:
    """Note in ``out`` the sha256 of the file at ``path`` (a data file, or its control twins' file)
    that this run just finished."""
    with open(out / FINISHED_LOG, "a", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"file": path.relative_to(out).as_posix(), "sha256": sha256}) + "\n"
        )


def check_finished_file(out: Path, path: Path) -> str:
    """The sha256 of the file at ``path`` (a data file, or its control twins' file) that a previous
    part of this run finished, refusing (one line) a file edited since: ``--resume`` would otherwise
    take the edited rows (or twins that no longer match their rows), or count a deleted row as one
    that could not be built. A file finished before the run kept this note (an older version) is
    hashed as it is."""
    relative = path.relative_to(out).as_posix()
    actual = file_sha256(path)
    log = out / FINISHED_LOG
    if not log.exists():
        return actual
    recorded = [entry.get("sha256") for entry in _log_entries(log) if entry.get("file") == relative]
    if recorded and recorded[-1] != actual:
        raise UserError(
            f"--resume: {path} changed since this run wrote it "
            f"(sha256 {actual[:12]}..., written {str(recorded[-1])[:12]}...); "
            "restore it, or start again in an empty --out folder"
        )
    return actual


def _log_entries(path: Path) -> list[dict]:
    """The JSON objects of a run log, one a line (a torn last line, left by a crash, is skipped)."""
    entries = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries
