"""Row readers for the registry's file formats, yielding ``(row number, row dict)`` pairs.

Every parse error names the file (and archive member) and the line or row number.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from longbench100.core.atomic import write_json_atomic
from longbench100.core.errors import SourceAbsent, UserError, json_error_text
from longbench100.core.paths import cache_dir
from longbench100.sources.registry import FileSpec


def row_unit(spec: FileSpec) -> str:
    """How positions in ``spec``'s file are named in messages: ``line`` for JSONL, ``row`` otherwise."""
    return "line" if spec.format == "jsonl" else "row"


def iter_rows(
    path: Path, spec: FileSpec, fields: Collection[str] | None = None
) -> Iterator[tuple[int, dict]]:
    """Yield the rows of ``path`` read as ``spec.format`` (inside ``spec.member`` for zip and tar archives).
    ``fields``: the top-level fields the caller reads, where it reads no other (a Parquet file's
    other columns are then left unread; its rows hold all of its columns otherwise)."""
    where = f"{path}:{spec.member}" if spec.member else str(path)
    if spec.member:
        reader = _tar_member if is_tar_archive(path) else _zip_member
        return _parse(reader(path, spec.member), spec.format, where)
    if spec.format == "parquet":
        return _parquet_rows(path, where, fields)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UserError(f"{where}: cannot read ({error.strerror})") from None
    return _parse(data, spec.format, where)


def load_readers(specs: Iterable[FileSpec]) -> None:
    """Import now the libraries that reading ``specs``' files takes (pyarrow, for Parquet), so that
    worker processes forked afterwards inherit them rather than each import them again."""
    if any(spec.format == "parquet" for spec in specs):
        import pyarrow.parquet  # noqa: F401


TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def is_tar_archive(path: Path) -> bool:
    """Whether ``path`` names a tar archive (by its suffix; anything else with a member is read as zip)."""
    return path.name.endswith(TAR_SUFFIXES)


def _zip_member(path: Path, member: str) -> bytes:
    """The bytes of ``member`` of the zip archive at ``path``."""
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.read(member)
    except KeyError:
        raise UserError(f"{path}: zip archive has no member {member}") from None
    except (OSError, zipfile.BadZipFile) as error:
        raise UserError(f"{path}: cannot read zip archive ({error})") from None


def _tar_member(path: Path, member: str) -> bytes:
    """The bytes of ``member`` of the tar archive at ``path`` (compressed or not), read as a stream
    that stops at the member: a large archive (HELMET's ``data.tar.gz``) is decompressed only up to
    it, never listed, with progress for a large one. An archive without the member is remembered as
    such (:func:`tar_member_verdict`)."""
    import tarfile  # here: most sources are not tar archives

    wanted = {member.lstrip("/"), f"./{member.lstrip('/')}"}
    try:
        with (
            open(path, "rb") as raw,
            _read_progress(raw, path) as counted,
            tarfile.open(fileobj=counted, mode="r|*") as archive,
        ):
            for info in archive:
                if info.name in wanted and info.isfile():
                    handle = archive.extractfile(info)
                    if handle is not None:
                        return handle.read()
    except (OSError, tarfile.TarError, EOFError) as error:
        raise UserError(f"{path}: cannot read tar archive ({error})") from None
    _keep_tar_verdict(path, member, False)
    raise SourceAbsent(f"{path}: tar archive has no member {member}")


SHOWN_ARCHIVE_BYTES = 256 << 20  # reading a tar archive at least this large shows progress


class _CountingReader(io.RawIOBase):
    """A binary file that reports the bytes read from it to a progress bar."""

    def __init__(self, handle: BinaryIO, bar) -> None:
        super().__init__()
        self._handle, self._bar = handle, bar

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self._handle.readinto(buffer)  # type: ignore[attr-defined]  # a file opened "rb" has it
        self._bar.update(count or 0)
        return count or 0


@contextmanager
def _read_progress(handle: BinaryIO, path: Path) -> Iterator[BinaryIO]:
    """``handle`` itself, or for an archive of :data:`SHOWN_ARCHIVE_BYTES` or more a reader showing
    progress."""
    size = path.stat().st_size
    if size < SHOWN_ARCHIVE_BYTES:
        yield handle
        return
    from longbench100.core.progress import progress_bar

    with progress_bar(size, f"reading {path.name}", "B", leave=False) as bar:
        yield io.BufferedReader(_CountingReader(handle, bar), buffer_size=1 << 20)


def tar_member_verdict(path: Path, member: str) -> bool | None:
    """Whether a read of the tar archive at ``path`` found ``member`` (``None``: never read
    through), kept per version of the file (path, size, modification time) in the cache folder's
    ``tar_members/``."""
    try:
        stored = json.loads(_verdict_path(path, member).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stored if isinstance(stored, bool) else None


def _keep_tar_verdict(path: Path, member: str, found: bool) -> None:
    """Remember whether the tar archive at ``path`` holds ``member`` (a read-only cache forgets it)."""
    try:
        write_json_atomic(_verdict_path(path, member), found)
    except OSError:
        pass


def _verdict_path(path: Path, member: str) -> Path:
    """Where the verdict on ``member`` of this version of the archive at ``path`` is kept."""
    stat = path.stat()
    key = json.dumps([str(path.resolve()), stat.st_size, stat.st_mtime_ns, member.lstrip("/")])
    return cache_dir() / "tar_members" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def class_label_names(path: Path, spec: FileSpec, column: str) -> tuple[str, ...]:
    """The class names that ``column`` holds indices into, from a Parquet file's Hugging Face schema metadata.

    The hub's Parquet files (and ``datasets``) record a ``ClassLabel`` column's names in the schema's
    ``huggingface`` metadata, index order. Returns ``()`` for other formats, for zip members and when
    the file records no names for ``column``.
    """
    if spec.format != "parquet" or spec.member:
        return ()
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_schema(path).metadata or {}
        features = (
            json.loads(metadata.get(b"huggingface", b"{}")).get("info", {}).get("features", {})
        )
    except (OSError, pa.ArrowException, ValueError, AttributeError) as error:
        raise UserError(
            f"{path}: cannot read the class names of column {column!r} from the Parquet schema ({error})"
        ) from None
    feature = features.get(column) if isinstance(features, dict) else None
    names = feature.get("names") if isinstance(feature, dict) else None
    return tuple(str(name) for name in names) if isinstance(names, list) else ()


def _parse(data: bytes, file_format: str, where: str) -> Iterator[tuple[int, dict]]:
    """Parse in-memory bytes in one of the row formats."""
    if file_format == "jsonl":
        return _jsonl_rows(data, where)
    if file_format == "json":
        return _json_rows(data, where)
    return _parquet_rows(io.BytesIO(data), where)


def _jsonl_rows(data: bytes, where: str) -> Iterator[tuple[int, dict]]:
    """One JSON object per line; blank lines are allowed."""
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except UnicodeDecodeError as error:
            raise UserError(
                f"{where} line {number}: not valid UTF-8 (byte {error.start})"
            ) from None
        except json.JSONDecodeError as error:
            raise UserError(
                f"{where} line {number}: malformed JSON ({json_error_text(error)})"
            ) from None
        if not isinstance(row, dict):
            raise UserError(
                f"{where} line {number}: expected a JSON object, got {type(row).__name__}"
            )
        yield number, row


def _json_rows(data: bytes, where: str) -> Iterator[tuple[int, dict]]:
    """A JSON array of objects."""
    try:
        rows = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UserError(f"{where}: malformed JSON ({error})") from None
    if not isinstance(rows, list):
        raise UserError(f"{where}: expected a JSON array of objects")
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise UserError(f"{where} row {number}: expected a JSON object")
        yield number, row


def _parquet_rows(
    source, where: str, fields: Collection[str] | None = None
) -> Iterator[tuple[int, dict]]:
    """Rows of a Parquet file, read batch by batch: only its columns among ``fields`` where it
    has any (a file with none of them is read whole, so each row still says what it lacks)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(source)
    except (OSError, pa.ArrowException) as error:
        raise UserError(f"{where}: not a readable Parquet file ({error})") from None
    number = 0
    try:
        named = [] if fields is None else [n for n in parquet.schema_arrow.names if n in fields]
        for batch in parquet.iter_batches(batch_size=2048, columns=named or None):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except pa.ArrowException as error:
        raise UserError(f"{where}: unreadable Parquet data after row {number} ({error})") from None
