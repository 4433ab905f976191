"""``longbench100 publish`` and ``longbench100 verify-snapshot``: dataset snapshots for ``datasets`` and the hub."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from longbench100.core import console
from longbench100.core.errors import UserError
from longbench100.core.version import __version__

from .data_folder_option import data_folder_option


@click.command()
@data_folder_option(
    "Data folder written by `generate` (or `filter`): OUT/manifest.json and "
    "OUT/<task>/<label>.jsonl."
)
@click.option(
    "--out",
    "snapshot",
    required=True,
    type=click.Path(path_type=Path),
    help="Snapshot folder to write: a new or empty folder.",
)
@click.option(
    "--name",
    help="Dataset title in the card [default: the NAME of --repo-id, else 'longbench100'].",
)
@click.option(
    "--repo-id",
    metavar="ORG/NAME",
    help="Hub dataset repository; named in the card's loading examples.",
)
@click.option(
    "--push",
    is_flag=True,
    help="Upload the snapshot to --repo-id (needs a hub token; checked before anything is written).",
)
@click.option("--private", is_flag=True, help="With --push: create the repository as private.")
@click.option(
    "--controls",
    is_flag=True,
    help="Also publish the data's control twins (DATA/controls, written by generate) as configs "
    "of their own, <task>_controls; left out otherwise.",
)
def publish(
    data_dir: Path,
    snapshot: Path,
    name: str | None,
    repo_id: str | None,
    push: bool,
    private: bool,
    controls: bool,
) -> None:
    """Write a dataset snapshot that `datasets.load_dataset` and the Hugging Face hub can use.

    The snapshot holds one Parquet file per task and length (data/<task>/<label>.parquet), a dataset
    card (README.md) whose YAML header declares one config per task and one split per length label,
    and manifest.json with the sha256 of every file plus the generation manifest. With --controls,
    each task's control twins are the config <task>_controls (controls/<task>/<label>.parquet),
    covered by the same checksums. The same data always gives byte-identical files.

    \b
    Examples:
      longbench100 publish --data out --out snapshot
      python -c 'import datasets; print(datasets.load_dataset("snapshot", "single_doc_qa", split="8k"))'
      longbench100 publish --data out --out snapshot --controls
      python -c 'import datasets; print(datasets.load_dataset("snapshot", "kv_retrieval_controls"))'
      longbench100 publish --data out --out snapshot --repo-id my-org/longbench100-snapshot --push
    """
    from longbench100.folders.guard import guard_output_dir
    from longbench100.folders.lock import output_lock

    from ..publish.hub import check_push_access, check_repo_id, push_snapshot
    from ..publish.snapshot import publish_snapshot
    from ..publish.staging import check_empty_target, remove_stale_staging

    if repo_id:
        check_repo_id(repo_id)
    if push and not repo_id:
        raise UserError("--push needs --repo-id ORG/NAME")
    if private and not push:
        raise UserError("--private only applies with --push")
    guard_output_dir(snapshot, "--out", "snapshot", {"--data": data_dir})
    check_empty_target(snapshot, "--out")
    for stale in remove_stale_staging(snapshot):
        click.echo(f"removed {stale}: left by an interrupted publish")
    token = check_push_access() if push else None
    with output_lock(snapshot, "--out"):
        echo = (lambda _: None) if console.quiet() else console.echo
        result = publish_snapshot(
            data_dir, snapshot, name=name, repo_id=repo_id, echo=echo, controls=controls
        )
    rows = sum(split.rows for split in result.splits)
    tasks = len({split.task for split in result.splits})
    skipped = f"; {len(result.empty)} empty data files left out" if result.empty else ""
    click.echo(
        f"snapshot {snapshot}: {rows} rows in {len(result.splits)} Parquet files ({tasks} configs){skipped}"
    )
    if controls:
        twins = sum(split.rows for split in result.twin_splits)
        configs = len({split.task for split in result.twin_splits})
        empty = (
            f"; {len(result.twins_empty)} empty twin files left out" if result.twins_empty else ""
        )
        click.echo(
            f"control twins: {twins} rows in {len(result.twin_splits)} Parquet files "
            f"({configs} configs){empty}"
        )
    if token is not None and repo_id is not None:
        url = push_snapshot(
            snapshot,
            repo_id,
            token,
            private,
            f"Publish {result.manifest['name']} (longbench100 {__version__})",
        )
        click.echo(f"pushed to {repo_id}: {url}")


@click.command("verify-snapshot")
@click.argument("snapshot", type=click.Path(path_type=Path))
@click.option(
    "--unpack-to",
    "unpack_to",
    type=click.Path(path_type=Path),
    help="After verifying, rebuild the original data folder here (for `predict` and `score`).",
)
def verify_snapshot(snapshot: Path, unpack_to: Path | None) -> None:
    """Recompute the sha256 of every file listed in SNAPSHOT/manifest.json, and rebuild the data
    files.

    Every data file is rebuilt from its Parquet file and checked against the sha256 the generation
    manifest records for it, so a Parquet file changed after publishing is caught even when the
    snapshot's checksum list was updated to match. Exits with status 1 naming the first file that
    changed or is missing, 0 when all match. With --unpack-to, the rebuilt <task>/<label>.jsonl and
    manifest.json are written, byte-identical to the data folder that was published.

    \b
    Example (a snapshot downloaded from the hub):
      hf download my-org/longbench100-snapshot --repo-type dataset --local-dir snapshot
      longbench100 verify-snapshot snapshot --unpack-to data
    """
    from longbench100.folders.guard import guard_output_dir

    from ..publish.checksums import SnapshotChanged
    from ..publish.checksums import verify_snapshot as verify
    from ..publish.staging import check_empty_target, remove_stale_staging
    from ..publish.unpack import check_snapshot_contents, unpack_snapshot

    if unpack_to is not None:
        guard_output_dir(unpack_to, "--unpack-to", "data", {"SNAPSHOT": snapshot})
        check_empty_target(unpack_to, "--unpack-to")
        for stale in remove_stale_staging(unpack_to):
            click.echo(f"removed {stale}: left by an interrupted unpack")
    try:
        manifest = verify(snapshot)
        files = len(manifest["files"])
        click.echo(f"{snapshot}: all {files} files match manifest.json")
        if unpack_to is not None:
            records = unpack_snapshot(snapshot, manifest, unpack_to)
            click.echo(
                f"rebuilt {unpack_to}: {records} records, checksums match the generation manifest"
            )
        else:
            records = check_snapshot_contents(snapshot, manifest)
            click.echo(
                f"{snapshot}: {records} records rebuilt in memory match the generation manifest"
            )
    except SnapshotChanged as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(1)
