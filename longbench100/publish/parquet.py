"""Data records to and from Parquet: one flat schema shared by every task, written byte-reproducibly.

``gold`` and ``distractors`` differ in shape from task to task, so they are stored as JSON text;
everything else keeps its type (``answers`` stays a list of strings).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from longbench100.folders.layout import decode_json
from longbench100.core.errors import UserError
from ..json_shape import check_shape

if TYPE_CHECKING:
    import pyarrow

# Record key -> (Arrow type name, accepted JSON types, whether the column holds JSON text). Order = docs/schema.md.
COLUMNS: dict[str, tuple[str, tuple[type, ...], bool]] = {
    "id": ("string", (str,), False),
    "task": ("string", (str,), False),
    "length": ("int64", (int,), False),
    "label": ("string", (str,), False),
    "row": ("int64", (int,), False),
    "prompt": ("string", (str,), False),
    "prompt_tokens": ("int64", (int,), False),
    "answers": ("list<string>", (list,), False),
    "closed_book_prompt": ("string", (str, type(None)), False),
    "metric": ("string", (str,), False),
    "question": ("string", (str, type(None)), False),
    "gold": ("string", (dict,), True),
    "distractors": ("string", (list,), True),
    "seed": ("int64", (int,), False),
}
JSON_COLUMNS = tuple(name for name, (_, _, as_json) in COLUMNS.items() if as_json)
_RECORD_SHAPE = {**{name: accepted for name, (_, accepted, _) in COLUMNS.items()}, "answers": [str]}

# Fixed writer settings: the same records always give the same bytes (for one pyarrow version).
ROW_GROUP_ROWS = 64
WRITER_SETTINGS = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 6,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
}


def arrow_schema() -> "pyarrow.Schema":
    """The Arrow schema of every snapshot file (no schema metadata, so nothing varies between runs)."""
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "list<string>": pa.list_(pa.string())}
    return pa.schema([pa.field(name, types[type_name], nullable=True) for name, (type_name, _, _) in COLUMNS.items()])


def to_row(record: object, where: str, task: str, label: str) -> dict:
    """Check one decoded data record against the schema and return its Parquet row; ``where`` is
    ``file:line``."""
    check_shape(record, _RECORD_SHAPE, where)
    extra = [key for key in record if key not in COLUMNS]  # type: ignore[union-attr]
    if extra:
        raise UserError(f"{where}: record keys differ from docs/schema.md "
                        f"(unknown {', '.join(extra)})")
    if (record["task"], record["label"]) != (task, label):
        raise UserError(f"{where}: record of {record['task']}/{record['label']} in the file for {task}/{label}")
    row = dict(record)
    for key in JSON_COLUMNS:
        row[key] = json.dumps(record[key], ensure_ascii=False)
    return row


def write_parquet(jsonl: Path, target: Path, task: str, label: str) -> int:
    """Convert one ``<task>/<label>.jsonl`` file to Parquet at ``target``; return the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema()
    rows = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(target, schema, **WRITER_SETTINGS) as writer:
        for batch in _batches(jsonl, task, label):
            writer.write_table(pa.Table.from_pylist(batch, schema=schema), row_group_size=ROW_GROUP_ROWS)
            rows += len(batch)
    return rows


def _batches(jsonl: Path, task: str, label: str) -> Iterator[list[dict]]:
    """Rows of a JSONL data file in lists of ``ROW_GROUP_ROWS``.

    Every line must be exactly what the generator writes (``json.dumps(record, ensure_ascii=False)`` and a
    newline), so that ``verify-snapshot --unpack-to`` can rebuild the file byte for byte.
    """
    batch: list[dict] = []
    with open(jsonl, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            where = f"{jsonl}:{number}"
            record = decode_json(line, where)
            row = to_row(record, where, task, label)
            canonical = json.dumps({key: record[key] for key in COLUMNS}, ensure_ascii=False) + "\n"
            if canonical.encode("utf-8") != line:
                raise UserError(f"{where}: not written the way the generator writes records (key order, spacing or "
                                "line ending), so the snapshot could not rebuild this file byte for byte")
            batch.append(row)
            if len(batch) == ROW_GROUP_ROWS:
                yield batch
                batch = []
    if batch:
        yield batch


def read_records(path: Path) -> Iterator[dict]:
    """The data records of a snapshot Parquet file, with ``gold`` and ``distractors`` decoded, keys in schema order."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    if parquet.schema_arrow.names != list(COLUMNS):
        raise UserError(f"{path}: columns {parquet.schema_arrow.names} are not the snapshot schema")
    for batch in parquet.iter_batches(batch_size=ROW_GROUP_ROWS):
        for row in batch.to_pylist():
            yield {key: json.loads(row[key]) if key in JSON_COLUMNS else row[key] for key in COLUMNS}
