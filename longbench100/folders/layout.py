"""A generated data folder: its ``<task>/<label>.jsonl`` files in one canonical order, and the one
reader of its format that every command uses.

The reader decodes lines and the manifest with one wording (``FILE:LINE: not valid UTF-8``, ``not
valid JSON``, ``FIELD must be an integer, not a string``), and checks every data file against the
sha256 its folder's ``manifest.json`` records, so data edited after generation is refused in one
line that names the file, instead of being scored as if it were the original.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Iterable, Protocol, Sequence, TypeVar

from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError, json_error_text
from longbench100.core.json_shape import check_shape
from longbench100.core.lengths import canonical_label, normalized_label, parse_length


@dataclass(frozen=True)
class DataFileRef:
    """One data file: its task, canonical length label, budget in tokens and path."""

    task: str
    label: str
    length: int
    path: Path


def data_file_path(folder: Path, task: str, label: str) -> Path:
    """``folder/<task>/<label>.jsonl``."""
    return folder / task / f"{label}.jsonl"


def data_file_ref(folder: Path, task: str, label: str) -> DataFileRef:
    """The data file of ``task`` at the canonical length ``label`` under ``folder``."""
    return DataFileRef(task, label, parse_length(label), data_file_path(folder, task, label))


CONTROLS_FOLDER = "controls"
CONTROL_KINDS = ("gold_removed", "context_swapped")
"""The kinds of control twin, each record's ``control`` (``generate/controls.py``)."""


def controls_folder(folder: Path) -> Path:
    """``folder/controls``: the control twins of a data folder, laid out as a data folder of their
    own."""
    return folder / CONTROLS_FOLDER


def list_data_files(folder: Path, tasks: Iterable[str] | None = None) -> list[DataFileRef]:
    """The data files under ``folder`` (of ``tasks``, default all), in task order and then by length.

    Files whose name is not a length label (``notes.jsonl``) and unknown task folders are ignored.
    """
    refs = []
    for task in tasks if tasks is not None else TASKS:
        for path in (folder / task).glob("*.jsonl"):
            try:
                length = parse_length(path.stem)
            except UserError:
                continue
            refs.append(DataFileRef(task, canonical_label(length), length, path))
    order = list(TASKS)
    return sorted(refs, key=lambda ref: (order.index(ref.task), ref.length))


MANIFEST = "manifest.json"
SNAPSHOT_GENERATION_MANIFEST = "generation-manifest.json"
"""A published snapshot's copy of its data folder's manifest: what tells a snapshot from a data
folder (``publish``)."""
MANIFEST_DIGEST = "manifest_sha256"
"""The manifest's own key for the sha256 of its other content (:func:`sealed_manifest`): the
data files have their checksums in the manifest, and this is the manifest's."""
RUN_STATE = ".longbench100-run.json"  # a generation run in progress (generate/manifest.py)

RECORD_SHAPE = {
    "id": str,
    "task": str,
    "label": str,
    "length": int,
    "row": int,
    "answers": [str],
    "question": (str, type(None)),
    "closed_book_prompt": (str, type(None)),
    "prompt?": str,
    "prompt_tokens?": int,
    "gold?": dict,
}
"""What every data record holds, as readers rely on it (docs/schema.md); other fields are the
task's."""

_LENGTH_FACTS = {
    "rows": int,
    "eligible_items": (int, type(None)),
    "paired_rows": (int, type(None)),
    "reused_rows": (int, type(None)),
    "failed_rows?": list,
    "sources?": ({"*": int}, type(None)),
}
MANIFEST_SHAPE = {
    "files": {"*": {"sha256": str, "rows?": int}},
    "tasks?": {
        "*": {
            "paired_rows_all_lengths": int,
            "paired_over_lengths": [str],
            "template_sha256?": str,
            "lengths": {"*": _LENGTH_FACTS},
        }
    },
    "shortfalls?": [{"task": str, "label": str, "rows": int, "requested": int, "reason": str}],
    "skipped_tasks?": {"*": str},
    "tokenizer?": {"spec?": str, "identity?": (str, type(None)), "counting?": (str, type(None))},
    "sources?": {"*": {"unanswerable?": {"*": int}}},
    "near_duplicates?": (
        {"dropped": {"*": int}, "identical?": {"*": int}, "threshold": float, "shingle_words": int},
        type(None),
    ),
    "annotator?": dict,
    "shortcuts?": dict,
    "suite?": (dict, type(None)),
    "options?": {"tokenizer?": str, "chat_template?": (bool, str, type(None))},
    "controls?": {"files": {"*": {"sha256": str}}},
    f"{MANIFEST_DIGEST}?": str,
}
"""The parts of a data (or probe) folder's manifest.json that readers rely on."""


def decode_json(raw: bytes, where: str) -> Any:
    """One JSON document from ``raw`` bytes (any JSON value: callers check its shape); ``where``
    (``FILE`` or ``FILE:LINE``) starts any error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"{where}: not valid UTF-8 (byte {error.start + 1} of the line)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"{where}: not valid JSON ({json_error_text(error)})") from None
    except RecursionError:
        raise UserError(f"{where}: not valid JSON (nested too deeply)") from None


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``, or a one-line error naming it."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise UserError(f"{path}: cannot read it ({_reason(error)})") from None


def read_jsonl(path: Path) -> list[tuple[str, Any]]:
    """Decode every non-blank line of a JSONL file, returning ``(file:line, value)`` pairs (any JSON
    values: callers check their shape)."""
    return [
        (f"{path}:{number}", decode_json(line, f"{path}:{number}"))
        for number, line in enumerate(read_bytes(path).splitlines(), start=1)
        if line.strip()
    ]


def check_record(value: Any, where: str) -> dict:
    """``value`` when it is a data record with the fields of :data:`RECORD_SHAPE`, else a one-line error."""
    check_shape(value, RECORD_SHAPE, where)
    return value


def read_records(path: Path) -> list[tuple[str, dict]]:
    """Every record of a data file, checked by :func:`check_record`, as ``(file:line, record)``
    pairs."""
    return [(where, check_record(value, where)) for where, value in read_jsonl(path)]


def read_file_records(ref: DataFileRef, seen: dict[str, str]) -> list[tuple[str, dict]]:
    """Every record of one data file (:func:`read_records`), each of the file's own task and
    length, and with an id that ``seen`` (id to ``file:line``, shared over a folder's files and
    filled here) does not hold yet."""
    records = read_records(ref.path)
    for where, record in records:
        if record["task"] != ref.task or _label_of(record["label"], where) != ref.label:
            raise UserError(
                f"{where}: a {record['task']} {record['label']} record in "
                f"{ref.task}/{ref.path.name}: a record belongs to its own task's file "
                "at its own length"
            )
        if record["id"] in seen:
            first = seen[record["id"]]
            raise UserError(f"{where}: duplicate id {record['id']!r} (first at {first})")
        seen[record["id"]] = where
    return records


def _label_of(label: str, where: str) -> str:
    """The canonical form of a record's length label, or a one-line error naming the record."""
    try:
        return normalized_label(label)
    except UserError as error:
        raise UserError(f"{where}: label {label!r}: {error}") from None


def manifest_digest(manifest: dict) -> str:
    """The sha256 of a manifest's canonical JSON (sorted keys, no spaces), less its own
    :data:`MANIFEST_DIGEST`."""
    content = {key: value for key, value in manifest.items() if key != MANIFEST_DIGEST}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sealed_manifest(manifest: dict) -> dict:
    """``manifest`` with its :data:`MANIFEST_DIGEST` (re)computed, for a command that writes one."""
    content = {key: value for key, value in manifest.items() if key != MANIFEST_DIGEST}
    return {**content, MANIFEST_DIGEST: manifest_digest(content)}


def read_folder_manifest(folder: Path) -> dict | None:
    """The decoded ``folder/manifest.json`` checked against :data:`MANIFEST_SHAPE` and, when it
    records one (folders written before it did not), its :data:`MANIFEST_DIGEST`; ``None`` when
    absent."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    manifest = decode_json(read_bytes(path), str(path))
    check_shape(manifest, MANIFEST_SHAPE, str(path))
    recorded = manifest.get(MANIFEST_DIGEST)
    if recorded is not None and recorded != manifest_digest(manifest):
        raise UserError(
            f"{path}: edited after it was written (its content no longer matches its "
            f"{MANIFEST_DIGEST}); restore it or generate the folder again"
        )
    return manifest


def _checked_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, or a one-line error naming it when it cannot be read."""
    from longbench100.core.digests import file_sha256  # noqa: PLC0415 - the loader's imports are heavy; only readers need it

    try:
        return file_sha256(path)
    except OSError as error:
        raise UserError(f"{path}: cannot read it ({_reason(error)})") from None


def _reason(error: OSError) -> str:
    """The operating system's reason for a failed read, in words."""
    return error.strerror or type(error).__name__


def check_data_files(
    folder: Path, manifest: dict, files: list[DataFileRef], option: str = "--data"
) -> None:
    """Refuse, in one line, a data file that is not the one ``manifest`` lists: edited (its sha256
    differs), added after generation (not listed) or deleted (listed, missing)."""
    listed: dict = manifest["files"]
    for ref in files:
        relative = ref.path.relative_to(folder).as_posix()
        entry = listed.get(relative)
        if entry is None:
            raise UserError(
                f"{option} {folder}: {relative} is not listed in {MANIFEST} "
                "(added after generation?); remove it or generate the folder again"
            )
        actual = _checked_sha256(ref.path)
        if actual != entry["sha256"]:
            raise UserError(
                f"{option} {folder}: {relative} differs from {MANIFEST} "
                f"(sha256 {actual[:12]}..., recorded {entry['sha256'][:12]}...): "
                "edited after generation; restore it or generate the folder again"
            )
    present = {ref.path.relative_to(folder).as_posix() for ref in files}
    missing = sorted(
        relative
        for relative in listed
        if relative not in present and not (folder / relative).is_file()
    )
    if missing:
        raise UserError(
            f"{option} {folder}: {missing[0]} is listed in {MANIFEST} but missing"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        )


@dataclass(frozen=True)
class CheckedFolder:
    """A data folder whose files match its manifest: the manifest (``None`` for a hand-made folder
    without one), its sha256 and the data files, in canonical order."""

    root: Path
    manifest: dict | None
    manifest_sha256: str | None
    files: list[DataFileRef]

    def files_of(
        self, tasks: Collection[str] | None, labels: Collection[str] | None
    ) -> list[DataFileRef]:
        """The data files of ``tasks`` at the canonical length ``labels`` (``None``: every one)."""
        return [
            ref
            for ref in self.files
            if (tasks is None or ref.task in tasks) and (labels is None or ref.label in labels)
        ]

    def chosen_files(
        self, tasks: Collection[str] | None, labels: Collection[str] | None
    ) -> list[DataFileRef]:
        """:meth:`files_of`, or a one-line error naming the folder (as ``--data``) when it holds
        none of them."""
        refs = self.files_of(tasks, labels)
        if not refs:
            raise UserError(f"--data {self.root}: no data files for the chosen tasks and lengths")
        return refs


def open_data_folder(
    folder: Path, option: str = "--data", *, unfinished: bool = False
) -> CheckedFolder:
    """Read and check the data folder every reading command starts from.

    The folder must exist and hold ``<task>/<label>.jsonl`` files; with a manifest, every file must
    match it (:func:`check_data_files`), and so must the control twins of a data folder
    (``DATA/controls``) match the twins its manifest lists. A folder a generation run is still
    writing (run state, no manifest) is refused unless ``unfinished`` (``inspect`` shows a run in
    progress); a published snapshot is named as such, with the command that unpacks it.
    """
    if not folder.is_dir():
        raise UserError(f"{option} {folder}: no such folder")
    files = list_data_files(folder)
    snapshot = None if files else _published_snapshot(folder)
    if snapshot is not None:
        raise UserError(
            f"{option} {folder}: a published snapshot, not a data folder; rebuild its data folder "
            f"(with the control twins it holds) by `longbench100 verify-snapshot {snapshot} "
            "--unpack-to DATA`"
        )
    if not files:
        raise UserError(
            f"{option} {folder}: no <task>/<label>.jsonl files (tasks: {', '.join(TASKS)})"
        )
    manifest = read_folder_manifest(folder)
    twins = _twins_listing(folder) if manifest is None else None
    if twins is not None:  # a data folder's controls/: checked against that folder's manifest
        check_data_files(folder.parent, twins, files, option)
        return CheckedFolder(folder, None, None, files)
    if manifest is None:
        if (folder / RUN_STATE).is_file() and not unfinished:
            raise UserError(
                f"{option} {folder}: its generation has not finished (no {MANIFEST}); "
                "finish it with `longbench100 generate --resume`"
            )
        return CheckedFolder(folder, None, None, files)
    check_data_files(folder, manifest, files, option)
    return CheckedFolder(folder, manifest, _checked_sha256(folder / MANIFEST), files)


def _published_snapshot(folder: Path) -> Path | None:
    """The published snapshot that ``folder`` is, or whose ``controls/`` it is; else ``None``."""
    candidates = [folder, folder.parent] if folder.name == CONTROLS_FOLDER else [folder]
    return next(
        (path for path in candidates if (path / SNAPSHOT_GENERATION_MANIFEST).is_file()), None
    )


def _twins_listing(folder: Path) -> dict | None:
    """``{"files": ...}``: the control twin files that the manifest of the data folder above
    ``folder`` lists, when ``folder`` is that data folder's ``controls/``; else ``None``."""
    if folder.name != CONTROLS_FOLDER:
        return None
    parent = read_folder_manifest(folder.parent)
    listed = (parent or {}).get("controls")
    return {"files": listed["files"]} if listed is not None else None


class _RowOfFile(Protocol):
    """A row of one task's file at one length (a data record, or a reference to one); read-only."""

    @property
    def task(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def row(self) -> int: ...


Row = TypeVar("Row", bound=_RowOfFile)


def first_rows(rows: Sequence[Row], limit: int) -> list[Row]:
    """Keep the ``limit`` lowest-numbered rows of each task and length (``--limit``), in their original order."""
    numbers: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        numbers.setdefault((row.task, row.label), []).append(row.row)
    kept = {key: set(sorted(values)[:limit]) for key, values in numbers.items()}
    return [row for row in rows if row.row in kept[row.task, row.label]]
