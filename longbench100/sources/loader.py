"""Read one registered source into normalised records by applying its declarative field mapping."""

from __future__ import annotations

import hashlib
import json
import pickle
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from longbench100.core.checked_files import read_checked, write_checked
from longbench100.core.digests import file_sha256
from longbench100.core.errors import SourceAbsent, UserError
from longbench100.core.marshal_cache import read_marshal, write_marshal
from longbench100.core.paths import cache_dir
from longbench100.sources.answerability import SOURCE_RULES, failed_rule
from longbench100.sources.cleaning import clean_text
from longbench100.sources.locations import SourceLocation, archive_has_member
from longbench100.sources.readers import class_label_names, iter_rows, row_unit
from longbench100.sources.records import Document, Item, SourceData
from longbench100.sources.registry import DocumentMapping, FileSpec, ItemMapping, SourceEntry

RECORDS_FORMAT = 12  # bump when the mapping code changes what records it produces
_PASSAGE_HEADING = re.compile(r"^Passage \d+:[ \t]*\n", re.MULTILINE)


def records_identity(entry: SourceEntry, files: dict[str, str]) -> list:
    """What fixes the documents and items :func:`load_source` maps from ``entry``'s files (their
    checksums, ``files``): the source's name, registry fingerprint, file checksums and the records'
    format (the records cache's key holds the same)."""
    return [entry.name, entry.fingerprint(), sorted(files.items()), RECORDS_FORMAT]


def source_file_sha256(path: Path) -> str:
    """:func:`file_sha256` of a source file, read once while the file stays as it was: the digest is kept, in
    this process and in the cache folder, under the file's path, inode, size and modification and change
    times (nanoseconds). Any write to the file, or a copy put in its place, changes its change time, which
    no tool can set back; so a warm run hashes nothing (17 MB of sources on the mirror)."""
    stat = path.stat()
    version = "\0".join(
        map(str, (path.resolve(), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns))
    )
    digests = _known_digests()
    if version not in digests:
        if len(digests) >= DIGESTS_KEPT:
            digests.clear()
        digests[version] = file_sha256(path)
        if time.time_ns() - max(stat.st_mtime_ns, stat.st_ctime_ns) <= SETTLED_NS:
            _UNSETTLED.add(
                version
            )  # a file changed within the clock's grain could change again unseen: kept in this process only
        else:
            write_marshal(  # an unwritable cache only costs the hashing next time
                _digests_path(),
                {key: value for key, value in digests.items() if key not in _UNSETTLED},
            )
    return digests[version]


DIGESTS_KEPT = 10_000  # source file digests kept in the cache folder; it starts afresh when full
SETTLED_NS = 2_000_000_000  # a source file changed less than this long ago is hashed again by the next process
_DIGESTS: dict[
    str, str
] = {}  # "path\0inode\0size\0modified\0changed" -> sha256, read from the cache folder once
_UNSETTLED: set[str] = set()  # keys of files changed just now: kept in this process only


def _digests_path() -> Path:
    """Where the source files' digests are kept."""
    return cache_dir() / "source_digests.marshal"


def _known_digests() -> dict[str, str]:
    """The digests kept so far (read from the cache folder on first use; a torn or foreign file is ignored)."""
    if not _DIGESTS:
        stored = read_marshal(_digests_path())
        if isinstance(stored, dict):
            _DIGESTS.update(
                (key, value)
                for key, value in stored.items()
                if isinstance(key, str) and isinstance(value, str)
            )
    return _DIGESTS


def load_source(location: SourceLocation, entry: SourceEntry) -> SourceData:
    """Read every file of ``entry`` from ``location`` and map its rows to documents and items.

    Texts pass through the entry's cleaning steps, items are kept only when they meet the mapping's
    ``where`` / ``min_documents`` rules and the entry's answerability rules, and an item identical
    to an earlier one is dropped (all counted). The mapped records are cached per (entry fingerprint, file checksums), so an unchanged
    source is parsed only once; a changed file, mapping or cleaning list is parsed afresh.
    """
    files, checksums, cached_file = _records_cache(location, entry)
    cached = read_pickled(cached_file)
    if isinstance(cached, SourceData) and cached.files == checksums:
        return cached
    data = SourceData(entry.name, files=checksums)
    _CHANGED.clear()
    try:
        for spec in entry.files:
            for path in files[spec.display].values():
                _map_file(entry, spec, path, data)
    finally:
        data.cleaned = dict(_CHANGED)
        if not _sharing:
            _CLEANED.clear()
    _drop_unanswerable_items(entry, data)
    _drop_duplicate_items(data)
    _drop_items_failing_source_rules(entry, data)
    _make_item_ids_unique(data)
    write_checked(cached_file, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return data


RAW_FORMAT = 1  # bump when what load_raw_documents keeps changes


def load_raw_documents(
    location: SourceLocation, entry: SourceEntry
) -> tuple[list[RawDocument], dict[str, str]]:
    """Every document of ``entry``'s files as its rows give it, before cleaning (each distinct
    one once, in row order), and the files' checksums. Kept in the cache folder per (entry
    fingerprint, file checksums), beside the records a whole load keeps."""
    files, checksums, records_file = _records_cache(location, entry)
    cached_file = records_file.with_name(f"{records_file.stem}-raw{RAW_FORMAT}.pickle")
    cached = read_pickled(cached_file)
    if isinstance(cached, list):
        return cached, checksums
    documents: dict[RawDocument, None] = {}
    for spec in entry.files:
        if spec.document is None:
            continue
        unit = row_unit(spec)
        fields = _mapped_fields(spec.document)
        for path in files[spec.display].values():
            where = f"{path}:{spec.member}" if spec.member else str(path)
            for number, row in iter_rows(path, spec, fields):
                at = f"{where} {unit} {number}"
                with _unicode_errors_named(entry, at):
                    documents.update(dict.fromkeys(raw_documents(entry, spec.document, row, at)))
    kept = list(documents)
    write_checked(cached_file, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
    return kept, checksums


def _mapped_fields(mapping: DocumentMapping) -> set[str]:
    """The top-level fields of a row that ``mapping`` reads (a dotted name reads a field of that
    name, else the field its first part names)."""
    names = [name for name in (mapping.text, mapping.title, mapping.id) if name]
    return {*names, *(name.split(".")[0] for name in names)}


def _records_cache(
    location: SourceLocation, entry: SourceEntry
) -> tuple[dict[str, dict[str, Path]], dict[str, str], Path]:
    """The entry's files (fetched where needed), their checksums and the cache file of their mapped records."""
    files = {
        spec.display: location.fetch_all(entry, spec) for spec in entry.files
    }  # a wildcard path names several
    for spec in entry.files:
        if spec.member is not None and not archive_has_member(
            files[spec.display][spec.display], spec.member
        ):
            raise SourceAbsent(f"source {entry.name}: {spec.path} has no member {spec.member}")
    checksums = {
        display: source_file_sha256(path)
        for matched in files.values()
        for display, path in matched.items()
    }
    key = json.dumps(records_identity(entry, checksums))
    return (
        files,
        checksums,
        cache_dir()
        / "records"
        / f"{entry.name}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.pickle",
    )


def cached_checksums(location: SourceLocation, entry: SourceEntry) -> dict[str, str] | None:
    """The checksums of ``entry``'s files when its mapped records are cached (a load reads them back), else ``None``."""
    _, checksums, cached_file = _records_cache(location, entry)
    return checksums if cached_file.is_file() else None


def _map_file(entry: SourceEntry, spec: FileSpec, path: Path, data: SourceData) -> None:
    """Map every row of one file of ``spec`` into ``data``; a file without rows is an error."""
    where = f"{path}:{spec.member}" if spec.member else str(path)
    unit = row_unit(spec)
    names = class_label_names(path, spec, spec.item.label) if spec.item and spec.item.label else ()
    rows = 0
    try:
        numbered_rows = iter_rows(path, spec)
    except SourceAbsent:  # a tar archive read through without the member: said as for a zip
        absent = f"source {entry.name}: {spec.path} has no member {spec.member}"
        raise SourceAbsent(absent) from None
    for number, row in numbered_rows:
        _map_row(entry, spec, row, f"{where} {unit} {number}", number, data, names)
        rows += 1
    if rows == 0:
        raise UserError(
            f"source {entry.name}: {where} holds no rows ({path.stat().st_size} bytes); "
            "a damaged or unfinished copy? fetch it again"
        )


def read_pickled(path: Path) -> object:
    """The cached object at ``path``, or ``None`` when it is absent, unreadable, foreign or damaged."""
    content = read_checked(path)
    if content is None:
        return None
    try:
        return pickle.loads(content)
    except Exception:  # a damaged or outdated cache file is simply rebuilt
        return None


def _map_row(
    entry: SourceEntry,
    spec: FileSpec,
    row: dict,
    where: str,
    number: int,
    data: SourceData,
    names: tuple[str, ...] = (),
) -> None:
    """Add the documents and items of one row to ``data`` (``names``: the file's class names, for classification labels)."""
    with _unicode_errors_named(entry, where):
        _map_fields(entry, spec, row, where, number, data, names)


@contextmanager
def _unicode_errors_named(entry: SourceEntry, where: str) -> Iterator[None]:
    """A text of the row at ``where`` that cannot be UTF-8 encoded, as a one-line error."""
    try:
        yield
    except UnicodeEncodeError:
        raise UserError(
            f"source {entry.name}: {where}: text holds an invalid unicode escape (a lone surrogate)"
        ) from None


def _map_fields(
    entry: SourceEntry,
    spec: FileSpec,
    row: dict,
    where: str,
    number: int,
    data: SourceData,
    names: tuple[str, ...],
) -> None:
    """The body of :func:`_map_row`."""
    doc_ids: list[str] = []
    titles: dict[str, str] = {}  # the row's document titles -> ids (for doc_titles)
    documents = _documents(entry, spec.document, row, where) if spec.document is not None else []
    grades = (
        _grades(entry, spec.item, row, where, len(documents))
        if spec.item is not None and spec.item.grades
        else None
    )
    kept_grades: list[int] = []
    listed: set[str] = (
        set()
    )  # the row's document ids so far (a ranking row judges each candidate once)
    for position, document in enumerate(documents):
        if not document.text.strip():
            data.skipped_empty += 1
            continue
        known = data.documents.setdefault(document.id, document)
        if known.text != document.text:
            raise UserError(
                f"source {entry.name}: {where}: document id {document.id!r} repeats with a different text"
            )
        if grades is not None and document.id in listed:
            continue  # a candidate listed twice is judged once
        listed.add(document.id)
        doc_ids.append(document.id)
        titles.setdefault(document.title or "", document.id)
        if grades is not None:
            kept_grades.append(grades[position])
    if spec.item is None:
        return
    if spec.item.doc_titles is not None:
        wanted = _field(row, spec.item.doc_titles, entry, where)
        wanted = [
            _clean(entry, _text(title))
            for title in (wanted if isinstance(wanted, (list, tuple)) else [wanted])
        ]
        chosen = {titles[title] for title in wanted if title in titles}
        doc_ids = [
            doc_id for doc_id in doc_ids if doc_id in chosen
        ]  # in the row's order, each once
    if spec.item.doc_ids is not None:
        referenced = _field(row, spec.item.doc_ids, entry, where)
        referenced = referenced if isinstance(referenced, (list, tuple)) else [referenced]
        doc_ids = [
            f"{entry.name}/{value}"
            for value in referenced
            if f"{entry.name}/{value}" in data.documents
        ]
    wanted = all(_field(row, name, entry, where) in values for name, values in spec.item.where)
    if spec.item.kind == "classification":
        items = [_classification_item(entry, spec.item, row, where, number, names)]
    elif spec.item.kind == "ranking":
        items = [
            _ranking_item(entry, spec.item, row, where, number, tuple(doc_ids), tuple(kept_grades))
        ]
    else:
        items = _items(entry, spec.item, row, where, number, tuple(doc_ids))
    for item in items:
        if not wanted:
            data.filtered_items += 1
        elif item.kind == "classification":
            if item.question and item.label:
                data.items.append(item)
            else:
                data.skipped_empty += 1
        elif item.kind == "ranking":
            if item.question and any(item.grades):
                data.items.append(item)
            else:
                data.skipped_empty += 1  # no question, or nothing judged relevant: nothing to rank
        elif (
            not item.doc_ids
            or not (item.summary or item.answers)
            or (item.kind == "qa" and not item.question)
        ):
            data.skipped_empty += 1
        elif len(item.doc_ids) < spec.item.min_documents:
            data.filtered_items += 1
        else:
            data.items.append(item)


@dataclass(frozen=True)
class RawDocument:
    """A document as its source's row gives it, before any cleaning: :func:`document_from_raw`
    makes it the document a load gives (``form``: ``"whole"``, the row's text field; ``"block"``
    or ``"titled_block"``, one ``Passage N:`` block of it; ``"titled"``, one element of a list or
    object list, with its ``title`` above its body)."""

    source: str
    form: str
    text: str
    title: str | None = None
    local_id: str | None = None


Cleaner = Callable[[SourceEntry, str, bool], str]
"""Cleans a text by an entry's steps (``True``: a document text), as :func:`_clean` does."""


def _documents(
    entry: SourceEntry, mapping: DocumentMapping, row: dict, where: str
) -> list[Document]:
    """The documents a row yields: one, or one per ``Passage N:`` block when the mapping splits."""
    documents = (
        document_from_raw(entry, raw, _clean) for raw in raw_documents(entry, mapping, row, where)
    )
    return [document for document in documents if document is not None]


def raw_documents(
    entry: SourceEntry, mapping: DocumentMapping, row: dict, where: str
) -> list[RawDocument]:
    """The documents a row yields, before cleaning (a field the mapping names and the row lacks is
    a one-line error, as in a load)."""
    if mapping.split == "lists":
        return _listed_documents(entry, mapping, row, where)
    if mapping.split == "records":
        return _record_documents(entry, mapping, row, where)
    text = _text(_field(row, mapping.text, entry, where)).strip()
    if mapping.split is None:
        title = _text(_field(row, mapping.title, entry, where)) if mapping.title else None
        local_id = str(_field(row, mapping.id, entry, where)) if mapping.id else None
        return [RawDocument(entry.name, "whole", text, title, local_id)]
    form = "titled_block" if mapping.split == "titled_passages" else "block"
    return [RawDocument(entry.name, form, block.strip()) for block in _PASSAGE_HEADING.split(text)]


def document_from_raw(entry: SourceEntry, raw: RawDocument, clean: Cleaner) -> Document | None:
    """The document a load makes of ``raw`` with the entry's cleaning steps (``clean``), or
    ``None`` for a passage block that cleaning leaves empty (a load leaves it out)."""
    if raw.form == "whole":
        title = clean(entry, raw.title, False) if raw.title is not None else None
        text = clean(entry, raw.text, True)
        local_id = raw.local_id if raw.local_id is not None else _content_id(text)
        return Document(f"{entry.name}/{local_id}", entry.name, text, title or None)
    if raw.form == "titled":
        return _titled_document(entry, raw.title, raw.text, raw.local_id, clean)
    block = clean(entry, raw.text, True)
    if not block:
        return None
    block_title = block.split("\n", 1)[0].strip() if raw.form == "titled_block" else None
    return Document(f"{entry.name}/{_content_id(block)}", entry.name, block, block_title)


def _listed_documents(
    entry: SourceEntry, mapping: DocumentMapping, row: dict, where: str
) -> list[RawDocument]:
    """One document per element of the parallel ``text`` and ``title`` lists; an element that is itself a
    list (sentences) is joined as written. The id is a hash of title and text, so a paragraph that several
    rows share is one document."""
    texts = _field(row, mapping.text, entry, where)
    titles = (
        _field(row, mapping.title, entry, where) if mapping.title else [None] * len(texts or [])
    )
    if (
        not isinstance(texts, (list, tuple))
        or not isinstance(titles, (list, tuple))
        or len(texts) != len(titles)
    ):
        raise UserError(
            f"source {entry.name} ({entry.entry_file}): {where}: fields {mapping.text!r} and {mapping.title!r} "
            "must be lists of equal length"
        )
    return [
        _titled_raw(
            entry,
            raw_title,
            "".join(_text(part) for part in raw_text)
            if isinstance(raw_text, (list, tuple))
            else _text(raw_text),
        )
        for raw_text, raw_title in zip(texts, titles)
    ]


def _titled_raw(
    entry: SourceEntry, raw_title: Any, body: str, local_id: str | None = None
) -> RawDocument:
    """A titled document before cleaning (:func:`_titled_document` makes it)."""
    title = _text(raw_title) if raw_title is not None else None
    return RawDocument(entry.name, "titled", body, title, local_id)


def _titled_document(
    entry: SourceEntry, title_text: str | None, body: str, local_id: str | None, clean: Cleaner
) -> Document:
    """A document whose text is its cleaned title (when it has one) on a line above its body; its id is ``local_id``
    or, without one, a hash of that text."""
    title = clean(entry, title_text, False) if title_text is not None else None
    text = clean(entry, f"{title}\n{body.strip()}" if title else body.strip(), True)
    return Document(
        f"{entry.name}/{local_id if local_id is not None else _content_id(text)}",
        entry.name,
        text,
        title or None,
    )


def _record_list(entry: SourceEntry, row: dict, name: str, where: str) -> tuple[list, str]:
    """The list of objects that a dotted ``name`` (``ctxs.text``) reads from, and the key inside each object."""
    list_name, _, key = name.rpartition(".")
    records = _field(row, list_name, entry, where) if list_name else None
    if not isinstance(records, (list, tuple)) or not all(
        isinstance(record, dict) for record in records
    ):
        raise UserError(
            f"source {entry.name} ({entry.entry_file}): {where}: field {list_name or name!r} must be a list of objects "
            f'(split = "records" reads {name!r} as key {key!r} of each)'
        )
    return list(records), key


def _record_documents(
    entry: SourceEntry, mapping: DocumentMapping, row: dict, where: str
) -> list[RawDocument]:
    """One document per object of a list of objects (HELMET's ``ctxs``: ``{"id", "title", "text", ...}``). The id
    is the object's ``id`` key when the mapping names one (passage ids shared across rows), else a hash of the text."""
    records, text_key = _record_list(entry, row, mapping.text, where)
    title_key = mapping.title.rpartition(".")[2] if mapping.title else None
    id_key = mapping.id.rpartition(".")[2] if mapping.id else None
    documents = []
    for position, record in enumerate(records):
        if text_key not in record:
            raise UserError(
                f"source {entry.name} ({entry.entry_file}): {where}: object {position + 1} of the list has no key {text_key!r}"
            )
        local_id = str(record[id_key]) if id_key and record.get(id_key) is not None else None
        documents.append(
            _titled_raw(
                entry,
                (record.get(title_key) if title_key else None) or None,
                _text(record[text_key]),
                local_id,
            )
        )
    return documents


def _grades(
    entry: SourceEntry, mapping: ItemMapping, row: dict, where: str, count: int
) -> list[int]:
    """The row's relevance grades (``ctxs.label``), one integer >= 0 per document of the row."""
    records, key = _record_list(entry, row, mapping.grades or "", where)
    grades = []
    for position, record in enumerate(records):
        value = record.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            grade = value
        else:
            grade = int(value) if isinstance(value, str) and value.strip().isdigit() else -1
        if grade < 0:
            raise UserError(
                f"source {entry.name} ({entry.entry_file}): {where}: grade {key!r} of object {position + 1} "
                f"is {value!r}, not an integer >= 0"
            )
        grades.append(grade)
    if len(grades) != count:
        raise UserError(
            f"source {entry.name} ({entry.entry_file}): {where}: {len(grades)} grades for {count} documents"
        )
    return grades


def _ranking_item(
    entry: SourceEntry,
    mapping: ItemMapping,
    row: dict,
    where: str,
    number: int,
    doc_ids: tuple[str, ...],
    grades: tuple[int, ...],
) -> Item:
    """A question with every candidate document of its row and the candidates' relevance grades."""
    assert mapping.question is not None, "the registry requires a ranking item's question field"
    local_id = str(_field(row, mapping.id, entry, where)) if mapping.id else f"row{number}"
    question = _clean(entry, _text(_field(row, mapping.question, entry, where)).strip()) or None
    return Item(f"{entry.name}/{local_id}", entry.name, doc_ids, question, grades=grades)


def _items(
    entry: SourceEntry,
    mapping: ItemMapping,
    row: dict,
    where: str,
    number: int,
    doc_ids: tuple[str, ...],
) -> list[Item]:
    """The items a row yields: one, or one per pair of parallel lists."""
    base = str(_field(row, mapping.id, entry, where)) if mapping.id else f"row{number}"
    question = _field(row, mapping.question, entry, where) if mapping.question else None
    target_field = mapping.summary if mapping.kind == "summary" else mapping.answers
    assert target_field is not None, "the registry requires the answers (qa) or summary field"
    target = _field(row, target_field, entry, where)
    if not mapping.parallel:
        return [_item(entry, mapping, f"{entry.name}/{base}", doc_ids, question, target)]
    questions = question if isinstance(question, list) else [question] * len(target or [])
    if not isinstance(target, list) or len(questions) != len(target):
        raise UserError(
            f"source {entry.name} ({entry.entry_file}): {where}: fields {mapping.question!r} and {target_field!r} must be lists of equal length"
        )
    return [
        _item(entry, mapping, f"{entry.name}/{base}#{k}", doc_ids, q, t)
        for k, (q, t) in enumerate(zip(questions, target))
    ]


def _item(
    entry: SourceEntry,
    mapping: ItemMapping,
    item_id: str,
    doc_ids: tuple[str, ...],
    question: Any,
    target: Any,
) -> Item:
    """Build one item from raw field values."""
    question_text = _clean(entry, _text(question).strip()) or None if question is not None else None
    if mapping.kind == "summary":
        summary = _clean(
            entry, _text(target[0] if isinstance(target, list) and target else target).strip()
        )
        return Item(
            item_id,
            entry.name,
            doc_ids,
            question_text,
            (summary,) if summary else (),
            summary or None,
        )
    values = target if isinstance(target, list) else [target]
    answers = tuple(
        answer for answer in (_clean(entry, _text(value).strip()) for value in values) if answer
    )
    return Item(item_id, entry.name, doc_ids, question_text, answers)


def _classification_item(
    entry: SourceEntry,
    mapping: ItemMapping,
    row: dict,
    where: str,
    number: int,
    names: tuple[str, ...],
) -> Item:
    """A labelled text: the label is a class name, or an index into ``names`` (the file's class names)."""
    assert mapping.label is not None and mapping.text is not None, (
        "the registry requires a classification item's text and label fields"
    )
    value = _field(row, mapping.label, entry, where)
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < len(names):
            known = (
                f"the file names {len(names)} classes"
                if names
                else "the file records no class names for it"
            )
            raise UserError(
                f"source {entry.name} ({entry.entry_file}): {where}: label {mapping.label!r} = {value} is not a class index ({known})"
            )
        label = names[value]
    else:
        label = _clean(entry, _text(value).strip())
    text = _clean(entry, _text(_field(row, mapping.text, entry, where)).strip())
    local_id = (
        str(_field(row, mapping.id, entry, where))
        if mapping.id
        else f"{mapping.split or 'row'}-{number}"
    )
    return Item(
        f"{entry.name}/{local_id}",
        entry.name,
        (),
        text,
        (label,) if label else (),
        label=label or None,
        split=mapping.split,
    )


def _field(row: dict, name: str, entry: SourceEntry, where: str) -> Any:
    """``row[name]`` (a dotted name reads inside nested objects: ``context.title``), or a one-line error
    naming the field, the registry entry and the line."""
    if name in row:
        return row[name]
    value: Any = row
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            raise UserError(
                f"source {entry.name} ({entry.entry_file}): {where}: missing field {name!r}"
            )
        value = value[part]
    return value


def _text(value: Any) -> str:
    """A field value as text (``None`` becomes empty); text that cannot be UTF-8 encoded is refused."""
    text = "" if value is None else str(value)
    if not text.isascii():
        text.encode("utf-8")  # raises UnicodeEncodeError on lone surrogates such as "\ud800"
    return text


def clean_once(entry: SourceEntry, text: str, passage: bool) -> str:
    """``text`` after the entry's cleaning steps, as :func:`_clean` gives it, with nothing kept or
    counted (a document cleaned alone, when a row first draws it)."""
    return clean_text(text, entry.clean, passage=passage).strip()


def _clean(entry: SourceEntry, text: str, passage: bool = False) -> str:
    """``text`` after the entry's declared cleaning steps and entity unescaping (``passage``: a document text).

    Sources repeat texts (LongBench's qmsum gives every query its meeting's whole transcript), so a
    text is cleaned once per load and the result reused.
    """
    key = (entry.clean, passage, text)
    cleaned = _CLEANED.get(key)
    if cleaned is None:
        cleaned = _CLEANED[key] = clean_text(
            text, entry.clean, passage=passage, changed=_CHANGED
        ).strip()
    return cleaned


_CLEANED: dict[
    tuple[tuple[str, ...], bool, str], str
] = {}  # emptied when each source's load ends (load_source)
_CHANGED: Counter[str] = (
    Counter()
)  # texts each cleaning step changed in the load under way (load_source moves them to its data)
_sharing = (
    0  # open sharing_cleaned_texts blocks: while any is open, _CLEANED outlives each source's load
)


@contextmanager
def sharing_cleaned_texts() -> Iterator[None]:
    """Keep cleaned texts from one source's load to the next inside this block (sources that read the same files
    with the same cleaning steps, such as the rag-mini-bioasq entries, then clean each text once)."""
    global _sharing
    _sharing += 1
    try:
        yield
    finally:
        _sharing -= 1
        if not _sharing:
            _CLEANED.clear()


def _content_id(text: str) -> str:
    """A stable id derived from the text itself, so identical passages are one document."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _drop_unanswerable_items(entry: SourceEntry, data: SourceData) -> None:
    """Drop the QA items that fail one of the entry's per-item answerability rules, counted per rule."""
    if not entry.answerable:
        return
    kept = []
    for item in data.items:
        rule = None
        if item.kind == "qa":
            rule = failed_rule(
                entry.answerable,
                item.question or "",
                item.answers,
                [data.documents[doc_id].text for doc_id in item.doc_ids],
            )
        if rule is None:
            kept.append(item)
        else:
            data.unanswerable[rule] = data.unanswerable.get(rule, 0) + 1
    data.items = kept


def _drop_items_failing_source_rules(entry: SourceEntry, data: SourceData) -> None:
    """Drop the items that fail a rule comparing the source's items with each other (after duplicates are
    gone, so each distinct item counts once), counted per rule."""
    for rule in (name for name in entry.answerable if name in SOURCE_RULES):
        texts = [
            tuple(data.documents[doc_id].text for doc_id in item.doc_ids) for item in data.items
        ]
        failing = SOURCE_RULES[rule](data.items, texts)
        if failing:
            data.items = [
                item for position, item in enumerate(data.items) if position not in failing
            ]
            data.unanswerable[rule] = data.unanswerable.get(rule, 0) + len(failing)


def _drop_duplicate_items(data: SourceData) -> None:
    """Keep the first of items with the same document texts, question, reference and split; count the rest."""
    seen: set[tuple] = set()
    kept = []
    for item in data.items:
        key = (
            tuple(data.documents[doc_id].text for doc_id in item.doc_ids),
            item.question,
            item.answers,
            item.summary,
            item.split,
            item.grades,
        )
        if key in seen:
            data.duplicate_items += 1
            continue
        seen.add(key)
        kept.append(item)
    data.items = kept


def _make_item_ids_unique(data: SourceData) -> None:
    """Suffix repeated item ids (``~2``, ``~3``) so every item id is unique within its source."""
    seen: dict[str, int] = {}
    for index, item in enumerate(data.items):
        count = seen.get(item.id, 0) + 1
        seen[item.id] = count
        if count > 1:
            data.items[index] = replace(item, id=f"{item.id}~{count}")
