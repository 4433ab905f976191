"""Build a probe data folder: for every problem, its prompt with only a window of its context.

The folder has the layout ``generate`` writes (``<task>/<label>.jsonl`` plus ``manifest.json``), so
``predict`` runs it unchanged. Each probe record keeps the problem's keys; ``gold.dolce`` says where
it came from (problem id, units, L, window size C and start, and the unit range holding the gold).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from longbench100.analysis.dolce.windows import probe_windows
from longbench100.analysis.prompt_parts import (
    IDK_INSTRUCTION,
    gold_block_spans,
    split_prompt,
    window_prompt,
)
from longbench100.core.atomic import write_bytes_atomic
from longbench100.core.errors import UserError
from longbench100.core.version import __version__
from longbench100.folders.data_records import manifest_sha256
from longbench100.folders.guard import guard_output_dir, mark_folder
from longbench100.folders.layout import (
    MANIFEST,
    data_file_path,
    open_data_folder,
    read_folder_manifest,
    read_jsonl,
    sealed_manifest,
)
from longbench100.text.joint_tokenizer import load_first_tokenizer
from longbench100.text.units import covered_units, unit_spans

PROBE_KIND = "dolce-probes"


@dataclass(frozen=True)
class ProbeOptions:
    """What ``dolce probes`` was asked for."""

    data_dir: Path
    tasks: list[str] | None = None
    labels: list[str] | None = None
    units: str = "auto"
    sizes: tuple[int, ...] = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500)
    whole: bool = True
    stride: int = 1
    max_per_problem: int | None = None


@dataclass
class ProbeSet:
    """The probe records per data file, and what they cost."""

    files: dict[tuple[str, str], list[dict]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    problems: int = 0
    requests: int = 0
    prompt_tokens: int = 0


def probe_id(problem_id: str, size: int, start: int) -> str:
    """``<problem id>~C<size>~at<start>``: unique, and maps back to the problem and window."""
    return f"{problem_id}~C{size}~at{start}"


def unit_kind(task: str, requested: str, has_passages: bool) -> str:
    """``auto`` is ``passage`` when the context is made of numbered passages or records, else ``sentence``."""
    if requested != "auto":
        return requested
    return "passage" if has_passages else "sentence"


def build_probes(options: ProbeOptions) -> ProbeSet:
    """Read the data folder and build every probe record (nothing is written)."""
    folder = open_data_folder(options.data_dir)
    manifest = folder.manifest
    if manifest is None or not isinstance((manifest.get("options") or {}).get("tokenizer"), str):
        raise UserError(
            f"--data {options.data_dir}: no {MANIFEST} naming its tokenizer "
            "(probes need a folder written by generate)"
        )
    if manifest.get("kind") == PROBE_KIND:
        raise UserError(f"--data {options.data_dir}: this is already a probe folder")
    if (manifest.get("options") or {}).get("chat_template"):
        raise UserError(
            f"--data {options.data_dir}: built with --chat-template; probes need plain prompts"
        )
    tokenizer = load_first_tokenizer(manifest["options"]["tokenizer"])
    probe_set = ProbeSet()
    for ref in folder.chosen_files(options.tasks, options.labels):
        records = []
        for where, record in read_jsonl(ref.path):
            records += _record_probes(record, where, options, probe_set)
        probe_set.files[(ref.task, ref.label)] = records
    all_records = [record for records in probe_set.files.values() for record in records]
    counts = tokenizer.count_batch([record["prompt"] for record in all_records])
    for record, count in zip(all_records, counts):
        record["prompt_tokens"] = count
    probe_set.requests = len(all_records)
    probe_set.prompt_tokens = sum(counts)
    return probe_set


def _record_probes(
    record: dict, where: str, options: ProbeOptions, probe_set: ProbeSet
) -> list[dict]:
    """The probe records of one problem."""
    task = record["task"]
    parts = split_prompt(task, record["prompt"], where, record.get("gold"))
    has_passages = any(block.number is not None or block.key is not None for block in parts.blocks)
    kind = unit_kind(task, options.units, has_passages)
    probe_set.units.setdefault(task, kind)
    units = unit_spans(parts.context, [block.span for block in parts.blocks], kind)
    gold_span = covered_units(units, gold_block_spans(task, record.get("gold") or {}, parts.blocks))
    probe_set.problems += 1
    probes = []
    for size, start in probe_windows(
        options.sizes, options.whole, len(units), options.stride, options.max_per_problem
    ):
        gold = dict(record.get("gold") or {})
        gold["dolce"] = {
            "problem": record["id"],
            "units": kind,
            "L": len(units),
            "C": size,
            "start": start,
            "gold_units": list(gold_span) if gold_span else None,
        }
        probes.append(
            {
                "id": probe_id(record["id"], size, start),
                "task": task,
                "length": record["length"],
                "label": record["label"],
                "row": record["row"],
                "prompt": window_prompt(parts, units, start, size),
                "prompt_tokens": 0,
                "answers": record["answers"],
                "closed_book_prompt": None,
                "metric": record["metric"],
                "question": record.get("question"),
                "gold": gold,
                "distractors": [],
                "seed": record.get("seed"),
            }
        )
    return probes


def check_probe_folder(out_dir: Path, data_dir: Path) -> None:
    """Before any work: ``out_dir`` must be a new folder that can be written and is not inside the data."""
    guard_output_dir(out_dir, "--out", "probes", {"--data": data_dir})
    if out_dir.exists():
        raise UserError(f"--out {out_dir}: already exists; choose a new folder")


def write_probes(probe_set: ProbeSet, options: ProbeOptions, out_dir: Path) -> None:
    """Write the probe folder: into ``<out>.partial`` first, renamed to ``out`` when complete."""
    check_probe_folder(out_dir, options.data_dir)
    partial = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    files = {}
    try:
        for (task, label), records in probe_set.files.items():
            path = data_file_path(partial, task, label)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = "".join(
                json.dumps(record, ensure_ascii=False) + "\n" for record in records
            ).encode("utf-8")
            write_bytes_atomic(path, data)
            files[f"{task}/{label}.jsonl"] = {
                "sha256": hashlib.sha256(data).hexdigest(),
                "rows": len(records),
            }
        manifest = {
            "tool": "longbench100",
            "version": __version__,
            "kind": PROBE_KIND,
            "derived_from": {
                "path": str(options.data_dir),
                "manifest_sha256": manifest_sha256(options.data_dir),
            },
            "options": _source_options(options.data_dir)
            | {
                "dolce": {
                    "units": options.units,
                    "windows": list(options.sizes) + (["all"] if options.whole else []),
                    "stride": options.stride,
                    "max_probes_per_problem": options.max_per_problem,
                },
            },
            "units": probe_set.units,
            "idk_instruction": IDK_INSTRUCTION,
            "problems": probe_set.problems,
            "requests": probe_set.requests,
            "prompt_tokens": probe_set.prompt_tokens,
            "files": files,
        }
        text = json.dumps(sealed_manifest(manifest), indent=2, ensure_ascii=False) + "\n"
        write_bytes_atomic(partial / MANIFEST, text.encode("utf-8"))
        mark_folder(partial, "probes")
        partial.rename(out_dir)
    except OSError as error:
        shutil.rmtree(partial, ignore_errors=True)
        raise UserError(f"--out {out_dir}: cannot write ({error.strerror or error})") from None


def _source_options(data_dir: Path) -> dict:
    """The source folder's generate options (tokenizer and templates travel with the probes)."""
    return dict((read_folder_manifest(data_dir) or {}).get("options") or {})
