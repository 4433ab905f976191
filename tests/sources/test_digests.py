"""Source file checksums are kept across runs under the file's identity and times, and never outlive a change."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from longbench100.sources import loader


@pytest.fixture
def new_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Forget the digests this process knows, as a new run would; hashing is counted."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    hashed: list[Path] = []
    real = loader.file_sha256
    monkeypatch.setattr(loader, "file_sha256", lambda path: hashed.append(path) or real(path))

    def start() -> list[Path]:
        loader._DIGESTS.clear()
        loader._UNSETTLED.clear()
        hashed.clear()
        return hashed

    yield start
    start()


def test_a_settled_file_is_hashed_once_across_runs_and_again_after_any_change(
    new_process, monkeypatch, tmp_path: Path
):
    monkeypatch.setattr(
        loader, "SETTLED_NS", -1
    )  # every file counts as settled (its change time cannot be aged here)
    source = tmp_path / "data.parquet"
    source.write_bytes(b"first version")
    hashed = new_process()
    assert loader.source_file_sha256(source) == hashlib.sha256(
        b"first version"
    ).hexdigest() and hashed == [source]
    hashed = new_process()
    assert (
        loader.source_file_sha256(source) == hashlib.sha256(b"first version").hexdigest()
        and hashed == []
    )
    before = source.stat()
    source.write_bytes(b"other version")  # same size, new content
    os.utime(
        source, ns=(before.st_atime_ns, before.st_mtime_ns)
    )  # even with the old modification time put back
    assert (
        source.stat().st_mtime_ns == before.st_mtime_ns and source.stat().st_size == before.st_size
    )
    hashed = new_process()
    assert loader.source_file_sha256(source) == hashlib.sha256(
        b"other version"
    ).hexdigest() and hashed == [source]


def test_a_file_changed_just_now_is_not_trusted_by_the_next_run(new_process, tmp_path: Path):
    source = tmp_path / "data.parquet"
    source.write_bytes(b"fresh")
    hashed = new_process()
    loader.source_file_sha256(source)
    loader.source_file_sha256(source)
    assert hashed == [source]  # known in this process
    hashed = new_process()
    loader.source_file_sha256(source)
    assert hashed == [source]  # but not kept for the next


def test_a_torn_digest_file_is_ignored(new_process, monkeypatch, tmp_path: Path):
    monkeypatch.setattr(loader, "SETTLED_NS", -1)
    source = tmp_path / "data.parquet"
    source.write_bytes(b"content")
    new_process()
    loader.source_file_sha256(source)
    path = loader._digests_path()
    path.write_bytes(path.read_bytes()[:7])
    hashed = new_process()
    assert loader.source_file_sha256(source) == hashlib.sha256(
        b"content"
    ).hexdigest() and hashed == [source]
