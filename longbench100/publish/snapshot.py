"""Assemble a snapshot folder from a generated data folder: Parquet files, dataset card, manifests.

The snapshot is built in a hidden sibling folder and renamed into place at the end, so an interrupted
run never leaves a half-written snapshot behind (so single files need no atomic writes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from longbench100.core.errors import UserError
from longbench100.core.version import __version__

from .card import ConfigSchema, SplitFile, json_columns_by_task, render_card
from .checksums import write_snapshot_manifest
from .parquet import (
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    WRITER_SETTINGS,
    arrow_schema,
    json_columns_of,
    structured_types,
    write_parquet,
)
from .source import DataFile, DataFolder, read_data_folder
from .staging import check_empty_target, staged_folder

CARD = "README.md"
GENERATION_MANIFEST = "generation-manifest.json"
DEFAULT_NAME = "longbench100"


@dataclass(frozen=True)
class PublishResult:
    """What a publish run wrote."""

    splits: list[SplitFile]
    empty: list[tuple[str, str]]
    manifest: dict


def publish_snapshot(
    data: Path,
    snapshot: Path,
    name: str | None = None,
    repo_id: str | None = None,
    echo: Callable[[str], None] = print,
) -> PublishResult:
    """Write ``snapshot`` from the data folder ``data``; see ``docs/publish.md`` for the layout."""
    check_empty_target(snapshot, "--out")
    folder = read_data_folder(data)
    title = name or (repo_id.split("/")[-1] if repo_id else DEFAULT_NAME)
    with staged_folder(snapshot, "--out") as staging:
        splits, empty, manifest = _write(folder, staging, title, repo_id, echo)
    return PublishResult(splits, empty, manifest)


def _write(
    folder: DataFolder, staging: Path, title: str, repo_id: str | None, echo: Callable[[str], None]
) -> tuple[list[SplitFile], list[tuple[str, str]], dict]:
    """Write every snapshot file into ``staging``; return the splits, the empty task/length pairs and the manifest."""
    import pyarrow
    import pyarrow.parquet as pq

    splits: list[SplitFile] = []
    empty: list[tuple[str, str]] = []
    files: dict[str, dict] = {}
    schemas = config_schemas(folder.files)
    for item in folder.files:
        relative = f"data/{item.task}/{item.label}.parquet"
        schema = schemas[item.task].schema
        rows = write_parquet(item.path, staging / relative, item.task, item.label, schema)
        if rows == 0:  # datasets cannot read a Parquet file without rows: leave the split out
            (staging / relative).unlink()
            empty.append((item.task, item.label))
            echo(f"skipped {item.relative}: no rows")
            continue
        metadata = pq.read_metadata(staging / relative)
        groups = range(metadata.num_row_groups)
        num_bytes = sum(metadata.row_group(index).total_byte_size for index in groups)
        file_bytes = (staging / relative).stat().st_size
        splits.append(SplitFile(item.task, item.label, relative, rows, num_bytes, file_bytes))
        files[relative] = {"rows": rows, "source": item.relative, "source_sha256": item.sha256}
        echo(f"wrote {relative} ({rows} rows)")
    if not splits:
        raise UserError(f"--data {folder.root}: every data file is empty; nothing to publish")
    card = render_card(title, repo_id, splits, empty, folder.manifest, schemas)
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
            "json_columns": json_columns_by_task(schemas),
        },
        "empty_splits": [f"{task}/{label}" for task, label in empty],
    }
    listed = {CARD: {}, GENERATION_MANIFEST: {}, **files}
    return splits, empty, write_snapshot_manifest(staging, header, listed, folder.manifest)


def config_schemas(files: list[DataFile]) -> dict[str, ConfigSchema]:
    """Each task's schema, ``gold`` and ``distractors`` typed from every one of its data files."""
    schemas = {}
    for task in dict.fromkeys(item.task for item in files):
        schema = arrow_schema(structured_types([item.path for item in files if item.task == task]))
        schemas[task] = ConfigSchema(schema, json_columns_of(schema))
    return schemas
