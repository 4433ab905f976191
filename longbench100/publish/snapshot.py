"""Assemble a snapshot folder from a generated data folder: Parquet files, dataset card, manifests.

The snapshot is built in a hidden sibling folder and renamed into place at the end, so an interrupted
run never leaves a half-written snapshot behind (so single files need no atomic writes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from longbench100.core.digests import file_sha256
from longbench100.core.errors import UserError
from longbench100.core.version import __version__
from longbench100.folders.layout import CONTROLS_FOLDER, SNAPSHOT_GENERATION_MANIFEST

from .card import ConfigSchema, SplitFile, config_name, json_columns_by_task, render_card
from .checksums import write_snapshot_manifest
from .parquet import (
    DATA_COLUMNS,
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    TWIN_COLUMNS,
    WRITER_SETTINGS,
    RecordColumns,
    arrow_schema,
    json_columns_of,
    structured_types,
    write_parquet,
)
from .source import DataFile, DataFolder, read_data_folder
from .staging import check_empty_target, staged_folder

CARD = "README.md"
GENERATION_MANIFEST = SNAPSHOT_GENERATION_MANIFEST
DEFAULT_NAME = "longbench100"


@dataclass(frozen=True)
class PublishResult:
    """What a publish run wrote: the data splits and the control twins' splits (none without
    ``--controls``), the empty task/length pairs of each, and the snapshot manifest."""

    splits: list[SplitFile]
    empty: list[tuple[str, str]]
    manifest: dict
    twin_splits: list[SplitFile]
    twins_empty: list[tuple[str, str]]


def publish_snapshot(
    data: Path,
    snapshot: Path,
    name: str | None = None,
    repo_id: str | None = None,
    echo: Callable[[str], None] = print,
    controls: bool = False,
) -> PublishResult:
    """Write ``snapshot`` from the data folder ``data`` (with ``controls``, its control twins too,
    as configs of their own); see ``docs/publish.md`` for the layout."""
    check_empty_target(snapshot, "--out")
    folder = read_data_folder(data, controls)
    title = name or (repo_id.split("/")[-1] if repo_id else DEFAULT_NAME)
    with staged_folder(snapshot, "--out") as staging:
        return _write(folder, staging, title, repo_id, echo)


@dataclass
class _Written:
    """The Parquet files written for one kind of record: splits, empty pairs, manifest entries."""

    splits: list[SplitFile] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)
    files: dict[str, dict] = field(default_factory=dict)


def _write(
    folder: DataFolder, staging: Path, title: str, repo_id: str | None, echo: Callable[[str], None]
) -> PublishResult:
    """Write every snapshot file into ``staging``; return what was written."""
    import pyarrow

    schemas = config_schemas(folder.files)
    data = _write_parquet_files(folder.files, schemas, DATA_COLUMNS, staging, echo)
    if not data.splits:
        raise UserError(f"--data {folder.root}: every data file is empty; nothing to publish")
    twin_schemas = config_schemas(folder.twins, TWIN_COLUMNS)
    twins = _write_parquet_files(folder.twins, twin_schemas, TWIN_COLUMNS, staging, echo)
    card = render_card(
        title,
        repo_id,
        data.splits + twins.splits,
        data.empty,
        folder.manifest,
        {**schemas, **twin_schemas},
        bool(folder.twins),
    )
    (staging / CARD).write_text(card, encoding="utf-8")
    (staging / GENERATION_MANIFEST).write_bytes(folder.manifest_bytes)
    header = {
        "name": title,
        "repo_id": repo_id,
        "published_with": {
            "tool": "longbench100",
            "version": __version__,
            "pyarrow": pyarrow.__version__,
        },
        "parquet": {
            **WRITER_SETTINGS,
            "row_group_rows": ROW_GROUP_ROWS,
            "row_group_bytes": ROW_GROUP_BYTES,
            "json_columns": json_columns_by_task({**schemas, **twin_schemas}),
        },
        "control_twins": bool(folder.twins),
        "empty_splits": [
            f"{prefix}{task}/{label}"
            for prefix, empty in (("", data.empty), (f"{CONTROLS_FOLDER}/", twins.empty))
            for task, label in empty
        ],
    }
    listed = {CARD: {}, GENERATION_MANIFEST: {}, **data.files, **twins.files}
    manifest = write_snapshot_manifest(staging, header, listed, folder.manifest)
    return PublishResult(data.splits, data.empty, manifest, twins.splits, twins.empty)


def _write_parquet_files(
    items: list[DataFile],
    schemas: dict[str, ConfigSchema],
    columns: RecordColumns,
    staging: Path,
    echo: Callable[[str], None],
) -> _Written:
    """Convert each JSON lines file of ``items`` (all of ``columns``' kind) to Parquet under its
    own path with ``.parquet`` (``data/`` first for data files), its config's schema; a file
    without rows gets no Parquet file (``datasets`` cannot read one)."""
    import pyarrow.parquet as pq

    written = _Written()
    twins = columns is TWIN_COLUMNS
    for item in items:
        relative = item.relative.removesuffix(".jsonl") + ".parquet"
        relative = relative if twins else f"data/{relative}"
        schema = schemas[config_name(item.task, twins)].schema
        rows = write_parquet(item.path, staging / relative, item.task, item.label, schema, columns)
        if rows == 0:
            (staging / relative).unlink()
            written.empty.append((item.task, item.label))
            echo(f"skipped {item.relative}: no rows")
            continue
        metadata = pq.read_metadata(staging / relative)
        groups = range(metadata.num_row_groups)
        num_bytes = sum(metadata.row_group(index).total_byte_size for index in groups)
        file_bytes = (staging / relative).stat().st_size
        digest = file_sha256(staging / relative)
        written.splits.append(
            SplitFile(item.task, item.label, relative, rows, num_bytes, file_bytes, digest, twins)
        )
        entry = {"rows": rows, "source": item.relative, "source_sha256": item.sha256}
        written.files[relative] = entry
        echo(f"wrote {relative} ({rows} rows)")
    return written


def config_schemas(
    files: list[DataFile], columns: RecordColumns = DATA_COLUMNS
) -> dict[str, ConfigSchema]:
    """Each config's schema (one config per task, for data or for twins), ``gold`` and
    ``distractors`` typed from every one of its files."""
    twins = columns is TWIN_COLUMNS
    schemas = {}
    for task in dict.fromkeys(item.task for item in files):
        paths = [item.path for item in files if item.task == task]
        schema = arrow_schema(structured_types(paths, columns), columns)
        schemas[config_name(task, twins)] = ConfigSchema(schema, json_columns_of(schema, columns))
    return schemas
