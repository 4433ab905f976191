"""Data records to and from Parquet: one flat schema shared by every task, written byte-reproducibly.

``gold`` and ``distractors`` differ in shape from task to task, so their Arrow type is inferred per
task (one config: every split shares it) and kept only when it gives every record back unchanged; a
column whose records it would change (keys in another order, absent keys, ints beside floats) is
stored as JSON text instead. Every other column has one fixed type (``answers`` is a list of
strings). Row groups hold at most :data:`ROW_GROUP_ROWS` rows and about :data:`ROW_GROUP_BYTES` of
records, so a split of very long prompts stays far below the hub viewer's row-group limit.

Control twins (``controls/<task>/<label>.jsonl``) are records of their own kind
(:data:`TWIN_COLUMNS`): the data columns plus ``control`` and ``twin_of`` after ``id``, and each
kind's own key at the end (``filled_from`` or ``context_of``), which is null in the rows of the
other kind and left out again when the records are read back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from longbench100.core.errors import UserError
from longbench100.core.json_shape import check_shape
from longbench100.folders.layout import CONTROL_KINDS, decode_json

if TYPE_CHECKING:
    import pyarrow

# Record key -> (Arrow type name, accepted JSON types, whether its type is inferred per task).
# Order = docs/schema.md.
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


@dataclass(frozen=True)
class RecordColumns:
    """The Parquet columns of one kind of record, in record key order: each key's Arrow type name,
    accepted JSON types and whether its type is inferred per config; ``optional`` keys may be absent
    from a record (stored as null, and left out again when read back)."""

    types: dict[str, tuple[str, tuple[type, ...], bool]]
    optional: tuple[str, ...] = ()

    @property
    def structured(self) -> tuple[str, ...]:
        """The columns whose Arrow type is inferred per config."""
        return tuple(name for name, (_, _, inferred) in self.types.items() if inferred)

    def shape(self) -> dict:
        """The shape every record of this kind has (:func:`check_shape`)."""
        shape = {
            name + ("?" if name in self.optional else ""): accepted
            for name, (_, accepted, _) in self.types.items()
        }
        return {**shape, "answers": [str]}


DATA_COLUMNS = RecordColumns(COLUMNS)
TWIN_COLUMNS = RecordColumns(
    {
        "id": COLUMNS["id"],
        "control": ("string", (str,), False),  # one of CONTROL_KINDS
        "twin_of": ("string", (str,), False),  # the id of the sample it twins
        **{name: column for name, column in COLUMNS.items() if name != "id"},
        "filled_from": ("string", (list,), True),  # gold_removed: what fills the gold's room
        "context_of": ("string", (str,), False),  # context_swapped: whose context it holds
    },
    optional=("filled_from", "context_of"),
)
"""A control twin (``generate/controls.py``): a data record with its kind and twinned id."""

# Fixed writer settings: the same records always give the same bytes (for one pyarrow version).
ROW_GROUP_ROWS = 64
# A row group closes before its records (as JSON lines) pass this size; a record is never split,
# and one 1M-token prompt is a few MiB, so row groups stay far below the hub viewer's 286 MiB limit.
ROW_GROUP_BYTES = 64 * 1024 * 1024
WRITER_SETTINGS = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 6,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
}


def arrow_schema(
    structured: dict[str, pyarrow.DataType], columns: RecordColumns = DATA_COLUMNS
) -> pyarrow.Schema:
    """The Arrow schema of one config's snapshot files, given the types of its structured columns
    (no schema metadata, so nothing varies between runs)."""
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "list<string>": pa.list_(pa.string())}
    return pa.schema(
        [
            pa.field(name, structured[name] if inferred else types[type_name], nullable=True)
            for name, (type_name, _, inferred) in columns.types.items()
        ]
    )


def structured_types(
    jsonl_files: list[Path], columns: RecordColumns = DATA_COLUMNS
) -> dict[str, pyarrow.DataType]:
    """The Arrow type of each structured column over every record of one config's files: the
    inferred type where it gives every value back as the same JSON, else ``string`` (JSON text)."""
    import pyarrow as pa

    values: dict[str, list] = {name: [] for name in columns.structured}
    for path in jsonl_files:
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                record = decode_json(line, f"{path}:{number}")
                for name in columns.structured:
                    values[name].append(record.get(name) if isinstance(record, dict) else None)
    return {name: _lossless_type(column) or pa.string() for name, column in values.items()}


def _lossless_type(values: list) -> pyarrow.DataType | None:
    """The type Arrow infers for ``values`` when each comes back as the same JSON; else None."""
    import pyarrow as pa

    if not values:
        return None
    try:
        array = pa.array(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    if pa.types.is_null(array.type) or not _parquet_can_hold(array.type):
        return None
    same = all(_json(back) == _json(value) for back, value in zip(array.to_pylist(), values))
    return array.type if same else None


def _parquet_can_hold(data_type: pyarrow.DataType) -> bool:
    """Whether Parquet can store ``data_type``: no struct without fields (``{}``) at any depth."""
    import pyarrow as pa

    if pa.types.is_struct(data_type):
        fields = [data_type.field(index).type for index in range(data_type.num_fields)]
        return bool(fields) and all(_parquet_can_hold(field) for field in fields)
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return _parquet_can_hold(data_type.value_type)
    return True


def _json(value: object) -> str:
    """``value`` as the generator writes it in a record."""
    return json.dumps(value, ensure_ascii=False)


def to_row(
    record: object,
    where: str,
    task: str,
    label: str,
    json_columns: tuple[str, ...],
    columns: RecordColumns = DATA_COLUMNS,
) -> dict:
    """Check one decoded record against its kind's ``columns`` and return its Parquet row, with the
    columns in ``json_columns`` as JSON text and absent optional keys as null; ``where`` is
    ``file:line``."""
    check_shape(record, columns.shape(), where)
    assert isinstance(record, dict)
    extra = [key for key in record if key not in columns.types]
    if "prompt_tokens_by_tokenizer" in extra:
        raise UserError(
            f"{where}: data fitted to several tokenizers (prompt_tokens_by_tokenizer) "
            "cannot be published yet: generate it with one --tokenizer to publish it"
        )
    if extra:
        raise UserError(
            f"{where}: record keys differ from docs/schema.md (unknown {', '.join(extra)})"
        )
    if (record["task"], record["label"]) != (task, label):
        raise UserError(
            f"{where}: record of {record['task']}/{record['label']} in the file for {task}/{label}"
        )
    if "control" in columns.types and record["control"] not in CONTROL_KINDS:
        raise UserError(
            f"{where}: control {record['control']!r} is not one of {', '.join(CONTROL_KINDS)}"
        )
    row = {key: record.get(key) for key in columns.types}
    for key in json_columns:
        row[key] = _json(record[key]) if key in record else None
    return row


def json_columns_of(
    schema: pyarrow.Schema, columns: RecordColumns = DATA_COLUMNS
) -> tuple[str, ...]:
    """The structured columns that ``schema`` stores as JSON text."""
    import pyarrow as pa

    return tuple(name for name in columns.structured if pa.types.is_string(schema.field(name).type))


def columns_of(schema: pyarrow.Schema, where: Path) -> RecordColumns:
    """Which kind of record a snapshot Parquet file holds, told by its column names."""
    for columns in (DATA_COLUMNS, TWIN_COLUMNS):
        if schema.names == list(columns.types):
            return columns
    raise UserError(f"{where}: columns {schema.names} are not the snapshot schema")


def write_parquet(
    jsonl: Path,
    target: Path,
    task: str,
    label: str,
    schema: pyarrow.Schema,
    columns: RecordColumns = DATA_COLUMNS,
) -> int:
    """Convert one ``<task>/<label>.jsonl`` file of ``columns``' kind to Parquet at ``target`` with
    its config's ``schema`` (:func:`arrow_schema`); return the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    json_columns = json_columns_of(schema, columns)
    with pq.ParquetWriter(target, schema, **WRITER_SETTINGS) as writer:
        for batch in _batches(jsonl, task, label, json_columns, columns):
            table = pa.Table.from_pylist(batch, schema=schema)
            writer.write_table(table, row_group_size=len(batch))
            rows += len(batch)
    return rows


def _batches(
    jsonl: Path, task: str, label: str, json_columns: tuple[str, ...], columns: RecordColumns
) -> Iterator[list[dict]]:
    """Rows of a JSONL data file, one list per row group: at most :data:`ROW_GROUP_ROWS` rows,
    and no more records than fit in :data:`ROW_GROUP_BYTES` (a single larger record still gets a
    row group of its own).

    Every line must be exactly what the generator writes (``json.dumps(record, ensure_ascii=False)`` and a
    newline), so that ``verify-snapshot --unpack-to`` can rebuild the file byte for byte.
    """
    batch: list[dict] = []
    batch_bytes = 0
    with open(jsonl, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            where = f"{jsonl}:{number}"
            record = decode_json(line, where)
            row = to_row(record, where, task, label, json_columns, columns)
            canonical = _json({key: record[key] for key in columns.types if key in record}) + "\n"
            if canonical.encode("utf-8") != line:
                raise UserError(
                    f"{where}: not written the way the generator writes records (key order, spacing or "
                    "line ending), so the snapshot could not rebuild this file byte for byte"
                )
            if batch and batch_bytes + len(line) > ROW_GROUP_BYTES:
                yield batch
                batch, batch_bytes = [], 0
            batch.append(row)
            batch_bytes += len(line)
            if len(batch) == ROW_GROUP_ROWS:
                yield batch
                batch, batch_bytes = [], 0
    if batch:
        yield batch


def read_records(path: Path) -> Iterator[dict]:
    """The records (data or control twins) of a snapshot Parquet file, with columns stored as JSON
    text decoded, keys in schema order and optional keys that are null left out."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    columns = columns_of(parquet.schema_arrow, path)
    json_columns = json_columns_of(parquet.schema_arrow, columns)
    for batch in parquet.iter_batches(batch_size=ROW_GROUP_ROWS):
        for row in batch.to_pylist():
            yield {
                key: json.loads(value) if key in json_columns and value is not None else value
                for key, value in row.items()
                if value is not None or key not in columns.optional
            }
