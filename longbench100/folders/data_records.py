"""Read a generated data folder (``OUT/<task>/<label>.jsonl`` plus ``manifest.json``) for scoring."""

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from longbench100.catalog.task_info import TASKS
from longbench100.core.digests import prompt_sha256
from longbench100.core.errors import UserError
from longbench100.folders.layout import (
    MANIFEST,
    DataFileRef,
    check_record,
    open_data_folder,
    read_file_records,
)


@dataclass(frozen=True)
class DataRecord:
    """The fields of one data record that scoring needs (see docs/schema.md)."""

    id: str
    task: str
    label: str
    length: int
    row: int
    answers: tuple[str, ...]
    question: str | None
    closed_book_prompt: str | None
    options: tuple[str, ...] | None = (
        None  # counting_stars: gold.options, the answer options in order
    )
    prompt_sha256: str | None = (
        None  # fingerprint of the stored prompt (None when the record has no prompt)
    )
    closed_book_prompt_sha256: str | None = None
    depth: float | None = (
        None  # gold.depth: relative position (0-1) of the gold material in the prompt
    )
    source: str | None = None  # gold.sources[0]: the source the gold material comes from
    gold: dict | None = field(
        default=None, compare=False, hash=False
    )  # the record's whole gold object, for task metrics
    sections: tuple[str, ...] | None = field(
        default=None, compare=False, hash=False
    )  # section texts, for tasks a judge grades section by section
    # padding provenance, in prompt order
    distractors: tuple[dict, ...] | None = field(default=None, compare=False, hash=False)
    # a control twin's kind ("gold_removed", "context_swapped"); None for a real sample
    control: str | None = None
    twin_of: str | None = None  # a control twin's real sample id


def data_files(data_dir: Path, option: str = "--data", *, unfinished: bool = False) -> list[Path]:
    """Return the data files ``<task>/<label>.jsonl`` under ``data_dir``, in task order then by
    length, once each matches the folder's manifest
    (:func:`longbench100.folders.layout.open_data_folder`; ``unfinished``: the folder of a
    generation run that has not written its manifest yet)."""
    return [ref.path for ref in open_data_folder(data_dir, option, unfinished=unfinished).files]


def parse_record(data: object, where: str) -> DataRecord:
    """Validate one decoded JSON line and keep the scoring fields; ``where`` is ``file:line`` for errors."""
    data = check_record(data, where)
    if data["task"] not in TASKS:
        raise UserError(f"{where}: task is {data['task']!r}, not a known task")
    if not data["answers"]:
        raise UserError(f"{where}: answers must be a non-empty list of strings")
    return DataRecord(
        id=data["id"],
        task=data["task"],
        label=data["label"],
        length=data["length"],
        row=data["row"],
        answers=tuple(data["answers"]),
        question=data["question"],
        closed_book_prompt=data["closed_book_prompt"],
        options=_options(data.get("gold")),
        prompt_sha256=prompt_sha256(data["prompt"])
        if isinstance(data.get("prompt"), str)
        else None,
        closed_book_prompt_sha256=None
        if data["closed_book_prompt"] is None
        else prompt_sha256(data["closed_book_prompt"]),
        depth=_depth(data.get("gold")),
        source=_first_source(data.get("gold")),
        gold=data["gold"] if isinstance(data.get("gold"), dict) else None,
        sections=_section_texts(data) if TASKS[data["task"]].judged_by_section else None,
        distractors=tuple(data["distractors"])
        if isinstance(data.get("distractors"), list)
        else None,
        control=data["control"] if isinstance(data.get("control"), str) else None,
        twin_of=data["twin_of"] if isinstance(data.get("twin_of"), str) else None,
    )


def _section_texts(data: dict) -> tuple[str, ...] | None:
    """The texts of the record's gold spans (its sections, in order), cut from its prompt; ``None`` without them."""
    gold, prompt = data.get("gold"), data.get("prompt")
    spans = (gold.get("spans") or {}).get("gold") if isinstance(gold, dict) else None
    if not isinstance(prompt, str) or not isinstance(spans, list):
        return None
    try:
        return tuple(prompt[start:end] for start, end in spans)
    except (TypeError, ValueError):
        return None


def _options(gold: object) -> tuple[str, ...] | None:
    """``gold.options`` when it is a list of strings (counting_stars), else ``None``."""
    options = gold.get("options") if isinstance(gold, dict) else None
    if isinstance(options, list) and options and all(isinstance(option, str) for option in options):
        return tuple(options)
    return None


def _depth(gold: object) -> float | None:
    """``gold.depth`` when it is a number from 0 to 1, else ``None`` (e.g. passage_count)."""
    depth = gold.get("depth") if isinstance(gold, dict) else None
    if isinstance(depth, (int, float)) and not isinstance(depth, bool) and 0.0 <= depth <= 1.0:
        return float(depth)
    return None


def _first_source(gold: object) -> str | None:
    """The first name in ``gold.sources``, or ``None`` when the record names none."""
    sources = gold.get("sources") if isinstance(gold, dict) else None
    if isinstance(sources, list) and sources and isinstance(sources[0], str):
        return sources[0]
    return None


def load_data(data_dir: Path) -> list[DataRecord]:
    """Read every record of a data folder; ids must be unique across the folder."""
    return [record for record, _ in load_data_with_prompts(data_dir)]


def load_data_with_prompts(
    data_dir: Path, *, unfinished: bool = False
) -> list[tuple[DataRecord, str]]:
    """Every record of a data folder with its whole prompt text (records keep only its hash), in one
    read (``unfinished``: see :func:`data_files`)."""
    return [
        pair
        for task_records in task_records_with_prompts(data_dir, unfinished=unfinished)
        for pair in task_records
    ]


def task_records_with_prompts(
    data_dir: Path, *, unfinished: bool = False
) -> Iterator[list[tuple[DataRecord, str]]]:
    """The records of a data folder with their prompts, one task (all its lengths) at a time, so
    a reader that needs only one task at once holds only that task's prompts; ids are unique
    across the folder."""
    seen: dict[str, str] = {}
    for refs in task_files(data_dir, unfinished=unfinished):
        yield records_with_prompts(refs, seen)


def task_files(data_dir: Path, *, unfinished: bool = False) -> Iterator[list[DataFileRef]]:
    """The data files of a data folder, one task (all its lengths) at a time, in task order."""
    files = open_data_folder(data_dir, unfinished=unfinished).files  # in task order
    for _, refs in itertools.groupby(files, key=lambda ref: ref.task):
        yield list(refs)


def records_with_prompts(
    files: list[DataFileRef], seen: dict[str, str]
) -> list[tuple[DataRecord, str]]:
    """The records of ``files`` with their prompts; ``seen`` maps each id read so far (across
    calls) to where it was, so an id given twice is refused."""
    return [
        (parse_record(value, where), value.get("prompt") or "")
        for ref in files
        for where, value in read_file_records(ref, seen)
    ]


def manifest_sha256(data_dir: Path) -> str | None:
    """Return the sha256 of ``data_dir/manifest.json``, or ``None`` when the folder has none."""
    path = data_dir / MANIFEST
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def tokenizer_identity(manifest: dict | None) -> str | None:
    """The tokenizer identity a data folder was generated with (manifest ``tokenizer.identity``), if recorded."""
    tokenizer = manifest.get("tokenizer") if manifest else None
    identity = tokenizer.get("identity") if isinstance(tokenizer, dict) else None
    return identity if isinstance(identity, str) else None
