"""Index a generated data folder (``OUT/<task>/<label>.jsonl``) and read samples back one at a time.

Indexing reads and checks every line once but keeps only ids and byte offsets, so memory stays
small even for 256k-token prompts; :func:`load_sample` re-reads one line when its turn comes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from longbench100.core.digests import prompt_sha256
from longbench100.core.errors import UserError
from longbench100.core.lengths import normalized_label, parse_length
from longbench100.folders.layout import check_record, decode_json, open_data_folder


@dataclass(frozen=True)
class SampleRef:
    """Where one data record lives (its file and the byte offset of its line), its row and prompt fingerprints.

    ``row`` is the record's ``row`` number (its position in the file when it has none);
    ``prompt_sha256`` / ``closed_book_prompt_sha256`` fingerprint the prompts as stored
    (:func:`longbench100.core.digests.prompt_sha256`; ``None`` when there is no closed-book prompt).
    """

    id: str
    task: str
    label: str
    path: Path
    offset: int
    row: int
    prompt_sha256: str
    closed_book_prompt_sha256: str | None

    @property
    def has_closed_book(self) -> bool:
        """Whether the record has a closed-book prompt."""
        return self.closed_book_prompt_sha256 is not None


@dataclass(frozen=True)
class Sample:
    """The parts of a data record the predictor sends."""

    id: str
    prompt: str
    closed_book_prompt: str | None
    answer_tokens: int | None = (
        None  # gold.answer_tokens: the answer room a task sized for this record
    )


def _canonical(label: str) -> str | None:
    """Return the canonical form of a length label (``8192`` -> ``8k``), or ``None`` if it is not one."""
    try:
        return normalized_label(label)
    except UserError:
        return None


def _check_record(record: object, path: Path, line_no: int, task: str, label: str) -> dict:
    """Return the record if it has what the predictor needs, else raise UserError naming file and line."""
    where = f"{path}:{line_no}"
    record = check_record(record, where)
    for key in ("id", "prompt"):
        if not record.get(key):
            raise UserError(f"{where}: {key} is missing or empty")
    if record.get("task", task) != task:
        raise UserError(
            f"{where}: record has task {record['task']!r} but lies in the {task!r} folder"
        )
    if "label" in record and _canonical(str(record["label"])) != _canonical(label):
        raise UserError(f"{where}: record has label {record['label']!r} but lies in {path.name}")
    return record


def _index_file(path: Path, task: str, label: str) -> list[SampleRef]:
    """Read and check one data file, returning a reference per record."""
    refs: list[SampleRef] = []
    offset = 0
    with path.open("rb") as handle:
        for line_no, line in enumerate(handle, start=1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            value = decode_json(line, f"{path}:{line_no}")
            record = _check_record(value, path, line_no, task, label)
            row = record["row"] if isinstance(record.get("row"), int) else len(refs)
            closed = record.get("closed_book_prompt")
            fingerprints = (
                prompt_sha256(record["prompt"]),
                None if closed is None else prompt_sha256(closed),
            )
            refs.append(SampleRef(record["id"], task, label, path, start, row, *fingerprints))
    return refs


def index_data(
    data_dir: Path, tasks: list[str] | None = None, labels: list[str] | None = None
) -> list[SampleRef]:
    """Return references to the selected samples, in task order, then length order, then file order.

    ``tasks`` / ``labels`` of ``None`` take whatever the folder holds; a task or length named
    explicitly must have data. Raises UserError for a missing folder, unreadable lines (naming file
    and line), duplicate ids or an empty selection.
    """
    if not data_dir.is_dir():
        raise UserError(
            f"data folder {data_dir} does not exist (create it with `longbench100 generate --out`)"
        )
    wanted_labels = None if labels is None else {normalized_label(label) for label in labels}
    files = open_data_folder(data_dir).files_of(tasks, wanted_labels)
    for task in tasks or []:
        if not any(ref.task == task for ref in files):
            raise UserError(
                f"no data for task {task} under {data_dir} (looked for {data_dir / task}/<length>.jsonl)"
            )
    if wanted_labels is not None:
        missing = sorted(wanted_labels - {ref.label for ref in files}, key=parse_length)
        if missing:
            raise UserError(
                f"no data at length {', '.join(missing)} under {data_dir} for the selected tasks"
            )
    if not files:
        raise UserError(
            f"no data files under {data_dir}: expected <task>/<length>.jsonl, e.g. kv_retrieval/8k.jsonl"
        )
    refs: list[SampleRef] = []
    seen: dict[str, Path] = {}
    for file in files:
        task, path = file.task, file.path
        for ref in _index_file(path, task, path.stem):
            if ref.id in seen:
                raise UserError(f"duplicate id {ref.id!r} in {path} (also in {seen[ref.id]})")
            seen[ref.id] = path
            refs.append(ref)
    return refs


def load_sample(ref: SampleRef) -> Sample:
    """Read the record that ``ref`` points to."""
    with ref.path.open("rb") as handle:
        handle.seek(ref.offset)
        record = json.loads(handle.readline())
    answer_tokens = (record.get("gold") or {}).get("answer_tokens")
    return Sample(
        record["id"],
        record["prompt"],
        record.get("closed_book_prompt"),
        answer_tokens if isinstance(answer_tokens, int) else None,
    )
