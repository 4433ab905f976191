"""The hub download path (``--sources hub``) against a local fake hub serving a synthetic mirror.

huggingface_hub reads its endpoint and cache folder from ``huggingface_hub.constants`` at call
time, except that the resolve URL template is built from ``HF_ENDPOINT`` at import time, so both
``ENDPOINT`` and ``HUGGINGFACE_CO_URL_TEMPLATE`` (used by ``hf_hub_url``) are pointed at the stub.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from huggingface_hub import constants

from longbench100.cli import main
from longbench100.core import hub_access
from longbench100.core.errors import SourceAbsent, UserError
from longbench100.core.paths import packaged_dir
from longbench100.sources import locations
from longbench100.sources.loader import load_source
from longbench100.sources.locations import resolve_location
from longbench100.sources.records import SourceData
from longbench100.sources.registry import load_registry
from tests.support.fixture_mirror import write_mirror
from tests.support.hub_stub import HubStub

SERVED = {
    "hotpotqa",
    "financial_qa",
    "cnn_dailymail",
}  # a zip member, an L-Eval jsonl, a parquet file


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private huggingface_hub cache and home (no token, no user files touched)."""
    home = tmp_path / "hf-home"
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(home / ".agent_harnesses.json"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return home / "hub"


@contextmanager
def serving(mirror: Path, monkeypatch: pytest.MonkeyPatch, **options: object) -> Iterator[HubStub]:
    """A fake hub serving ``mirror`` (``options`` go to :class:`HubStub`), with huggingface_hub pointed at it."""
    with HubStub(mirror, **options) as hub:
        monkeypatch.setattr(constants, "ENDPOINT", hub.endpoint)
        monkeypatch.setattr(
            constants,
            "HUGGINGFACE_CO_URL_TEMPLATE",
            hub.endpoint + "/{repo_id}/resolve/{revision}/{filename}",
        )
        monkeypatch.setattr(
            hub_access, "_LISTINGS", {}
        )  # file lists fetched in this process: per test
        yield hub


@pytest.fixture
def stub(tmp_path: Path, hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubStub]:
    """A fake hub serving a synthetic mirror of the ``SERVED`` sources."""
    with serving(write_mirror(tmp_path / "m", only=SERVED), monkeypatch) as hub:
        yield hub


def _load_fresh(
    location: locations.SourceLocation, name: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> SourceData:
    """Load ``name`` with an empty records cache, so its files really are parsed."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(cache))
    return load_source(location, location.registry()[name])


@pytest.mark.parametrize("name", sorted(SERVED))
def test_hub_download_maps_like_the_mirror(
    name: str, stub: HubStub, hub_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = resolve_location("hub")
    entry = hub.registry()[name]
    assert hub.local_path(entry, entry.files[0]) is None  # nothing cached yet
    from_hub = _load_fresh(hub, name, tmp_path / "cache-hub", monkeypatch)
    from_mirror = _load_fresh(
        resolve_location(str(stub.root)), name, tmp_path / "cache-mirror", monkeypatch
    )
    assert from_hub.documents and from_hub.items
    assert from_hub.documents == from_mirror.documents
    assert from_hub.items == from_mirror.items
    assert (
        from_hub.files == from_mirror.files
    )  # same sha256 per file: the bytes came through intact
    for spec in entry.files:
        cached = hub.local_path(entry, spec)
        assert cached is not None and hub_cache in cached.parents
        assert f"datasets--{entry.repo_id.replace('/', '--')}" in str(cached)
        assert cached.read_bytes() == (stub.root / entry.repo_id / spec.path).read_bytes()
        assert (
            f"/datasets/{entry.repo_id}/resolve/{entry.revision}/{spec.path}"
            in stub.file_requests("HEAD")
        )
    assert hub.is_available(entry)


def test_protocol_lfs_files_come_from_the_cdn_and_git_files_from_resolve(
    stub: HubStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = resolve_location("hub")
    for name in ("hotpotqa", "financial_qa"):
        _load_fresh(hub, name, tmp_path / "cache", monkeypatch)
    gets = stub.file_requests("GET")
    assert (
        "/datasets/L4NLP/LEval/resolve/main/LEval/Generation/financial_qa.jsonl" in gets
    )  # a plain git file (L-Eval: not pinned)
    assert not any(
        "data.zip" in path for path in gets
    )  # the zip is LFS: fetched through the redirect
    assert len(stub.calls("GET", origin="cdn")) == 1


def test_second_load_uses_the_hub_cache(
    stub: HubStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = resolve_location("hub")
    first = _load_fresh(hub, "cnn_dailymail", tmp_path / "c1", monkeypatch)
    seen = list(stub.file_requests())
    assert len(stub.file_requests("GET")) == 1
    second = _load_fresh(
        hub, "cnn_dailymail", tmp_path / "c2", monkeypatch
    )  # records cache empty again: files re-read
    assert (
        stub.file_requests() == seen
    )  # no HEAD, no GET: local_path found it via try_to_load_from_cache
    assert second.documents == first.documents and second.items == first.items
    # the stub is no longer needed at all once the file is cached
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    assert _load_fresh(hub, "cnn_dailymail", tmp_path / "c3", monkeypatch).items == first.items


def test_a_file_missing_from_an_existing_repo_is_a_one_line_error(
    stub: HubStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = resolve_location("hub")
    entry = hub.registry()[
        "legal_contract_qa"
    ]  # L4NLP/LEval is served, but only with financial_qa.jsonl
    for _ in range(2):  # the second time the absence is cached (.no_exist) and is asked again
        with pytest.raises(UserError) as caught:
            load_source(hub, entry)
        message = str(caught.value)
        assert isinstance(caught.value, SourceAbsent)
        assert "\n" not in message
        assert "legal_contract_qa" in message and "L4NLP/LEval" in message
        assert f"no file {entry.files[0].path}" in message
    assert stub.file_requests("GET") == []


def test_a_missing_repo_is_a_one_line_error_naming_repo_and_file(stub: HubStub) -> None:
    hub = resolve_location("hub")
    entry = hub.registry()["rag_mini_bioasq"]  # enelpol/rag-mini-bioasq is not served at all
    with pytest.raises(UserError) as caught:
        load_source(hub, entry)
    message = str(caught.value)
    assert isinstance(caught.value, SourceAbsent)
    assert "\n" not in message and entry.repo_id in message and entry.files[0].path in message
    assert "repository not found" in message


def _verify_rows(output: str) -> dict[str, str]:
    """``sources verify`` table rows by source name."""
    rows = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) >= 3 and (parts[0].isdigit() or parts[0] == "-"):
            rows[parts[1]] = line
    return rows


def test_sources_verify_against_the_hub(
    stub: HubStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    runner = CliRunner()
    result = runner.invoke(main, ["sources", "verify", "--sources", "hub"])
    assert not isinstance(result.exception, UserError), (
        result.output
    )  # a 404 never aborts the whole run
    assert result.exit_code == 0, result.output  # absent upstream is "missing", not malformed
    primary = sum(
        1 for entry in load_registry(packaged_dir("sources")).values() if not entry.stand_in_for
    )
    # missing: every primary not served, and rag_mini_bioasq_rerank (a stand-in whose primary is not served either)
    assert f"3 sources loaded, {primary - 3 + 1} missing, 0 malformed" in result.output
    strict = runner.invoke(main, ["sources", "verify", "--sources", "hub", "--strict"])
    assert strict.exit_code == 1, strict.output  # --strict fails on any absent source
    rows = _verify_rows(result.output)
    mirror_rows = _verify_rows(
        runner.invoke(main, ["sources", "verify", "--sources", str(stub.root)]).output
    )
    for name in SERVED:  # served sources download and map exactly as from the mirror
        assert rows[name].split()[:-1] == mirror_rows[name].split()[:-1], (
            rows[name],
            mirror_rows[name],
        )
    # every other primary source is reported on its own single line, naming what the hub lacks
    registry = resolve_location("hub").registry()
    for name, entry in registry.items():
        if name in SERVED or entry.stand_in_for:
            continue
        spec = entry.files[0]
        if not (
            stub.root / entry.repo_id
        ).is_dir():  # rag_mini_bioasq and the classification sets are not served at all
            lacking = f"{entry.repo_id}@{entry.revision}: repository not found"
        elif spec.member is None:
            lacking = f"{entry.repo_id}@{entry.revision}: no file {spec.path}"
        else:
            lacking = f"{spec.path} has no member {spec.member}"
        assert f"missing: source {name}: {lacking}" in rows[name], rows[name]
    downloaded = stub.file_requests("GET")
    assert (
        len(downloaded) == 3
    )  # data.zip once (shared by every LongBench source), one jsonl, one parquet

    second = runner.invoke(main, ["sources", "verify", "--sources", "hub"])
    assert second.exit_code == 0
    for name in SERVED:
        assert _verify_rows(second.output)[name].split()[-1] == "hit"
    assert stub.file_requests("GET") == downloaded  # the served files came from the hub cache


def test_a_wildcard_path_reads_every_shard_the_hub_lists(
    tmp_path: Path, hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = write_mirror(tmp_path / "m", only={"hotpot_qa"})
    folder = mirror / "hotpotqa" / "hotpot_qa" / "distractor"
    (folder / "train-00000-of-00001.parquet").rename(folder / "train-00000-of-00002.parquet")
    table = pq.read_table(folder / "train-00000-of-00002.parquet")
    pq.write_table(
        table.slice(6), folder / "train-00001-of-00002.parquet"
    )  # the rows split over two shards
    pq.write_table(table.slice(0, 6), folder / "train-00000-of-00002.parquet")
    (folder / "validation-00000-of-00001.parquet").write_bytes(b"not read")  # outside the pattern
    with serving(mirror, monkeypatch) as hub:
        data = _load_fresh(
            resolve_location("hub"), "hotpot_qa", tmp_path / "cache-hub", monkeypatch
        )
        asked = {unquote(path) for _, _, path in hub.requests}
    from_mirror = _load_fresh(
        resolve_location(str(mirror)), "hotpot_qa", tmp_path / "cache-mirror", monkeypatch
    )
    assert sorted(data.files) == [
        "distractor/train-00000-of-00002.parquet",
        "distractor/train-00001-of-00002.parquet",
    ]
    assert data.items and data.items == from_mirror.items and data.files == from_mirror.files
    revision = resolve_location("hub").registry()["hotpot_qa"].revision
    assert f"/api/datasets/hotpotqa/hotpot_qa/tree/{revision}" in asked
    assert not any("validation" in path for path in asked if "/resolve/" in path)


def test_trec_is_read_at_its_pinned_commit(
    tmp_path: Path, hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = write_mirror(tmp_path / "m", only={"trec_coarse"})
    revision = resolve_location("hub").registry()["trec_coarse"].revision
    with serving(mirror, monkeypatch, commits={}):  # a hub whose repository has no such commit
        with pytest.raises(
            SourceAbsent, match=rf"source trec_coarse: CogComp/trec@{revision}: no such revision"
        ):
            _load_fresh(resolve_location("hub"), "trec_coarse", tmp_path / "cache-0", monkeypatch)
    with serving(mirror, monkeypatch) as hub:
        data = _load_fresh(
            resolve_location("hub"), "trec_coarse", tmp_path / "cache-hub", monkeypatch
        )
        asked = {unquote(path) for _, _, path in hub.requests}
    from_mirror = _load_fresh(
        resolve_location(str(mirror)), "trec_coarse", tmp_path / "cache-mirror", monkeypatch
    )
    assert data.items and data.items == from_mirror.items and data.files == from_mirror.files
    assert f"/datasets/CogComp/trec/resolve/{revision}/default/train/0000.parquet" in asked
