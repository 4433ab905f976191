"""The declarative source registry: one TOML entry per upstream dataset, read into :class:`SourceEntry`.

An entry names the hub repository, a revision, the files inside it, their format and the mapping of
their fields into :class:`~longbench100.sources.records.Document` and :class:`~longbench100.sources.records.Item`
records, and the task roles the source plays (``<task>:real`` for ground truth, ``<task>:noisy`` for
distractors). Adding a dataset means adding a file; see ``sources/README.md``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from longbench100.catalog.entities import DEFAULT_ENTITIES, ENTITY_TYPES
from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError
from longbench100.sources.answerability import RULE_NAMES
from longbench100.sources.cleaning import CLEANING_STEPS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

FORMATS = ("jsonl", "json", "parquet")
ROLE_KINDS = ("real", "noisy")
ITEM_KINDS = ("qa", "summary", "classification", "ranking")
_NEEDED_FIELDS = {
    "qa": ("question", "answers"),
    "summary": ("summary",),
    "classification": ("text", "label"),
    "ranking": ("question", "grades"),
}
DOCUMENT_SPLITS = ("passages", "titled_passages", "lists", "records")
WhereValue = str | int | float | bool


@dataclass(frozen=True)
class DocumentMapping:
    """How a row yields documents: the text field, optional title and id fields, optional passage split."""

    text: str
    title: str | None = None
    id: str | None = None
    split: str | None = (
        None  # "passages" / "titled_passages": split LongBench "Passage N:" contexts;
    )
    # "lists": text and title are parallel lists, one document per element (HotpotQA's context.title /
    # context.sentences; an element that is a list of sentences is joined as written);
    # "records": the row holds a list of objects, one document each: text = "ctxs.text" reads key "text"
    # of every object of list "ctxs" (title and id likewise; a missing title is no title)


@dataclass(frozen=True)
class ItemMapping:
    """How a row yields items (questions with answers, reference summaries, or labelled texts)."""

    kind: str  # "qa" | "summary" | "classification"
    id: str | None = None
    question: str | None = None
    answers: str | None = None
    summary: str | None = None
    parallel: bool = (
        False  # question/answer (or summary) fields are parallel lists: one item per pair
    )
    doc_ids: str | None = None  # items refer to documents of an earlier file of this entry by id
    doc_titles: str | None = (
        None  # items use only the row's documents with these titles (HotpotQA's supporting facts)
    )
    where: tuple[
        tuple[str, tuple[WhereValue, ...]], ...
    ] = ()  # keep rows whose field holds one of the values
    min_documents: int = 1  # keep items that refer to at least this many documents
    text: str | None = None  # classification: the field holding the text to classify
    label: str | None = (
        None  # classification: the label field (a class name, or an index into the file's class names)
    )
    split: str | None = (
        None  # classification: the split the file's rows belong to ("train", "test", ...)
    )
    grades: str | None = (
        None  # ranking: one relevance grade (an integer >= 0) per document of the row, in order
    )


@dataclass(frozen=True)
class FileSpec:
    """One file inside the hub repository and the mapping of its rows."""

    path: str
    format: str
    member: str | None = None  # a member inside a zip or tar archive (.zip, .tar, .tar.gz, .tgz)
    document: DocumentMapping | None = None
    item: ItemMapping | None = None

    @property
    def display(self) -> str:
        """The file as a user would name it (``data.zip:data/qmsum.jsonl``)."""
        return f"{self.path}:{self.member}" if self.member else self.path

    @property
    def is_pattern(self) -> bool:
        """Whether ``path`` holds wildcards (``*``, ``?``, ``[``) and names every matching file."""
        return any(character in self.path for character in "*?[")


@dataclass(frozen=True)
class SourceEntry:
    """A registered upstream dataset."""

    name: str
    repo_id: str
    revision: str
    files: tuple[FileSpec, ...]
    roles: tuple[str, ...]
    number: int | None = None
    title: str = ""
    license: str = ""
    stand_in_for: str | None = None
    clean: tuple[
        str, ...
    ] = ()  # cleaning steps applied to every text of the source (longbench100.sources.cleaning)
    answerable: tuple[
        str, ...
    ] = ()  # answerability rules its QA items must pass (longbench100.sources.answerability)
    entities: str = (
        DEFAULT_ENTITIES  # what recalling lists in its documents (longbench100.catalog.entities)
    )
    entry_file: str = ""
    aliases: tuple[str, ...] = ()  # former ids of the repository (a mirror may hold one of them)
    not_on_hub: str = ""  # why the entry cannot be read from the hub (mirrors only, then)

    def has_role(self, task: str, kind: str) -> bool:
        """Whether this source plays ``kind`` ("real" or "noisy") in ``task``."""
        return f"{task}:{kind}" in self.roles

    def fingerprint(self) -> str:
        """A digest of the entry's data-shaping fields; part of every token-count cache key."""
        shaping = {
            "repo_id": self.repo_id,
            "revision": self.revision,
            "files": [asdict(f) for f in self.files],
            "clean": list(self.clean),
            "answerable": list(self.answerable),
        }
        return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:16]


_READ: dict[Path, tuple[tuple, dict[str, SourceEntry]]] = {}
"""Registries read in this process, by folder, with the names, sizes and times of their files."""


def load_registry(folder: Path) -> dict[str, SourceEntry]:
    """Read every ``*.toml`` entry in ``folder``; raise :class:`UserError` naming the file and
    field at fault.

    A folder is parsed once per process while its files stay as they were (the same names, sizes
    and modification times): a run asks for the registry at several steps."""
    paths = sorted(folder.glob("*.toml"))
    stamp = tuple(
        (path.name, stat.st_size, stat.st_mtime_ns) for path in paths for stat in [path.stat()]
    )
    read = _READ.get(folder)
    if read is not None and read[0] == stamp:
        return dict(read[1])
    entries = _parsed_registry(folder, paths)
    _READ[folder] = (stamp, entries)
    return dict(entries)


def _parsed_registry(folder: Path, paths: list[Path]) -> dict[str, SourceEntry]:
    """The entries of ``paths``, the ``*.toml`` files of ``folder``, checked against each other."""
    entries: dict[str, SourceEntry] = {}
    for path in paths:
        entry = parse_entry(path)
        if entry.name in entries:
            raise UserError(
                f"{path}: source name {entry.name!r} is already used by {entries[entry.name].entry_file}"
            )
        entries[entry.name] = entry
    if not entries:
        raise UserError(f"no source entries (*.toml) in {folder}")
    for entry in entries.values():
        if entry.stand_in_for and entry.stand_in_for not in entries:
            raise UserError(
                f"{entry.entry_file}: stand_in_for names unknown source {entry.stand_in_for!r}"
            )
    return entries


def parse_entry(path: Path) -> SourceEntry:
    """Parse and validate one TOML registry entry."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UserError(f"{path}: cannot read registry entry ({error})") from None
    where = str(path)
    name = _required(raw, "name", str, where)
    hub = _required(raw, "hub", dict, where)
    files_raw = _required(raw, "files", list, where)
    if not files_raw:
        raise UserError(f"{where}: 'files' is empty")
    roles = tuple(raw.get("roles", []))
    for role in roles:
        task, _, kind = role.partition(":")
        if task not in TASKS or kind not in ROLE_KINDS:
            raise UserError(
                f"{where}: bad role {role!r}: use <task>:real or <task>:noisy with a task of {', '.join(TASKS)}"
            )
    files = tuple(
        _parse_file(spec, f"{where} files[{index}]") for index, spec in enumerate(files_raw)
    )
    clean = _required(raw, "clean", list, where) if "clean" in raw else []
    for step in clean:
        if not isinstance(step, str) or step not in CLEANING_STEPS:
            raise UserError(
                f"{where}: unknown cleaning step {step!r} in 'clean': use {', '.join(CLEANING_STEPS)}"
            )
    answerable = _required(raw, "answerable", list, where) if "answerable" in raw else []
    for rule in answerable:
        if not isinstance(rule, str) or rule not in RULE_NAMES:
            raise UserError(
                f"{where}: unknown answerability rule {rule!r} in 'answerable': use {', '.join(RULE_NAMES)}"
            )
    entities = raw.get("entities", DEFAULT_ENTITIES)
    if entities not in ENTITY_TYPES:
        raise UserError(
            f"{where}: unknown entity type {entities!r} in 'entities': use {', '.join(ENTITY_TYPES)}"
        )
    return SourceEntry(
        name=name,
        repo_id=_required(hub, "repo_id", str, f"{where} [hub]"),
        revision=str(hub.get("revision", "main")),
        files=files,
        roles=roles,
        number=raw.get("number"),
        title=str(raw.get("title", "")),
        license=str(raw.get("license", "")),
        stand_in_for=raw.get("stand_in_for"),
        clean=tuple(clean),
        answerable=tuple(answerable),
        entities=entities,
        entry_file=where,
        aliases=tuple(_string_list(hub, "aliases", f"{where} [hub]")),
        not_on_hub=str(hub.get("not_on_hub", "")),
    )


def _parse_file(raw: dict, where: str) -> FileSpec:
    """Parse one ``[[files]]`` table."""
    file_format = _required(raw, "format", str, where)
    if file_format not in FORMATS:
        raise UserError(f"{where}: format {file_format!r} is not one of {', '.join(FORMATS)}")
    document = item = None
    if "document" in raw:
        doc = raw["document"]
        document = DocumentMapping(
            text=_required(doc, "text", str, f"{where}.document"),
            title=doc.get("title"),
            id=doc.get("id"),
            split=doc.get("split"),
        )
        if document.split is not None and document.split not in DOCUMENT_SPLITS:
            raise UserError(
                f"{where}.document: split must be one of {', '.join(map(repr, DOCUMENT_SPLITS))}, not {document.split!r}"
            )
    if "item" in raw:
        it = raw["item"]
        kind = _required(it, "kind", str, f"{where}.item")
        if kind not in ITEM_KINDS:
            raise UserError(
                f"{where}.item: kind must be one of {', '.join(ITEM_KINDS)}, not {kind!r}"
            )
        item = ItemMapping(
            kind=kind,
            id=it.get("id"),
            question=it.get("question"),
            answers=it.get("answers"),
            summary=it.get("summary"),
            parallel=bool(it.get("parallel", False)),
            doc_ids=it.get("doc_ids"),
            doc_titles=it.get("doc_titles"),
            where=_parse_where(it.get("where", {}), f"{where}.item.where"),
            min_documents=_min_documents(it, f"{where}.item"),
            text=it.get("text"),
            label=it.get("label"),
            split=it.get("split"),
            grades=it.get("grades"),
        )
        missing = [name for name in _NEEDED_FIELDS[kind] if getattr(item, name) is None]
        if missing:
            raise UserError(
                f"{where}.item: a {kind} item needs the field mapping{'s' if len(missing) > 1 else ''} {' and '.join(map(repr, missing))}"
            )
        if document is None and item.doc_ids is None and kind != "classification":
            raise UserError(
                f"{where}.item: needs a [document] mapping in the same file or 'doc_ids' referring to one"
            )
        if kind == "ranking" and (
            document is None or item.doc_ids is not None or item.doc_titles is not None
        ):
            raise UserError(
                f"{where}.item: a ranking item grades the documents of its own row: it needs a [document] "
                "mapping in the same file and neither 'doc_ids' nor 'doc_titles'"
            )
    if document is None and item is None:
        raise UserError(f"{where}: needs a 'document' or an 'item' mapping")
    return FileSpec(
        path=_required(raw, "path", str, where),
        format=file_format,
        member=raw.get("member"),
        document=document,
        item=item,
    )


def _parse_where(table: object, where: str) -> tuple[tuple[str, tuple[WhereValue, ...]], ...]:
    """``{field = value or [values]}`` as sorted ``(field, values)`` pairs; values must be strings, numbers or booleans."""
    if not isinstance(table, dict):
        raise UserError(f"{where}: must be a table of field = value (or [values])")
    conditions = []
    for name, accepted in sorted(table.items()):
        values = accepted if isinstance(accepted, list) else [accepted]
        if not values or not all(isinstance(value, (str, int, float, bool)) for value in values):
            raise UserError(
                f"{where}: {name!r} must be a string, number or boolean, or a non-empty list of them"
            )
        conditions.append((name, tuple(values)))
    return tuple(conditions)


def _string_list(table: dict, key: str, where: str) -> list[str]:
    """``table[key]`` as a list of strings (absent: empty), or a one-line :class:`UserError`."""
    values = table.get(key, [])
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise UserError(f"{where}: field {key!r} must be a list of strings")
    return values


def _min_documents(table: dict, where: str) -> int:
    """The item's ``min_documents`` (default 1), a whole number of at least 1."""
    value = table.get("min_documents", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(
            f"{where}: min_documents must be a whole number of at least 1, not {value!r}"
        )
    return value


def _required(table: dict, key: str, kind: type, where: str):
    """Return ``table[key]`` checked against ``kind``, or raise a one-line :class:`UserError`."""
    if key not in table:
        raise UserError(f"{where}: missing field {key!r}")
    value = table[key]
    if not isinstance(value, kind):
        raise UserError(f"{where}: field {key!r} must be a {kind.__name__}")
    return value
