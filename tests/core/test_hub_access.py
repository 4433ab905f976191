"""The hub as a user with internet meets it, against the local fake hub (tests/support/hub_stub.py): pinned
downloads, offline reruns from the cache for every kind of entry, rate limits and server errors in
one line, the proxy settings, stand-ins stepping in, ``sources fetch``, and HELMET's archive read as
a stream."""

from __future__ import annotations

import gzip
import io
import json
import socket
import tarfile
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from huggingface_hub import constants

from longbench100.cli import main
from longbench100.core import hub_access
from longbench100.core.errors import UserError
from longbench100.sources.loader import load_source
from longbench100.sources.locations import active_entries, resolve_location, stand_in_notes
from longbench100.sources.readers import iter_rows
from longbench100.sources.registry import FileSpec
from tests.sources.test_hub_download import hub_cache, serving  # noqa: F401 - hub_cache is a fixture
from tests.support.fixture_mirror import write_mirror
from tests.support.generate_helpers import generate

KINDS = {
    "trec_coarse": "files at a pinned commit",
    "financial_qa": "a file on a branch (not pinned)",
    "hotpotqa": "a zip member",
    "hotpot_qa": "a wildcard path",
    "helmet_msmarco": "a tar archive member",
    "project_gutenberg": "a wildcard path naming one shard",
}


def _load(name: str, cache: Path, monkeypatch: pytest.MonkeyPatch):
    """Load ``name`` from the hub with an empty records cache (its files are really read)."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(cache))
    location = resolve_location("hub")
    return load_source(location, location.registry()[name])


def test_pinned_download_then_offline_rerun_for_every_kind_of_entry(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    mirror = write_mirror(tmp_path / "m", only=set(KINDS))
    first = {}
    with serving(mirror, monkeypatch) as hub:
        for name in KINDS:
            first[name] = _load(name, tmp_path / "online", monkeypatch)
            entry = resolve_location("hub").registry()[name]
            pinned = hub_access.is_commit(entry.revision)
            assert pinned or name == "financial_qa"  # L-Eval: no commit known, read at main
            heads = [path for path in hub.file_requests("HEAD") if entry.repo_id in path]
            assert heads and all(f"/resolve/{entry.revision}/" in path for path in heads)
    shard = next((mirror / "hotpotqa" / "hotpot_qa" / "distractor").glob("train-*.parquet"))
    said = capsys.readouterr().err  # each download is said first, with its size where it is known
    size = hub_access.human_size(shard.stat().st_size)
    downloading = f"hub: downloading hotpotqa/hotpot_qa@1908d6afbbea distractor/{shard.name}"
    assert f"{downloading} ({size})" in said
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing answers there
    monkeypatch.setattr(hub_access, "_LISTINGS", {})  # a new process: only the kept lists are known
    location = resolve_location("hub")
    for name, kind in KINDS.items():
        entry = location.registry()[name]
        assert location.is_available(entry), kind
        again = _load(name, tmp_path / "offline", monkeypatch)
        assert again.items == first[name].items and again.documents == first[name].documents, kind
    listed = CliRunner().invoke(main, ["sources", "list", "--sources", "hub"])
    rows = {line.split()[1]: line for line in listed.output.splitlines()[1:]}
    for name in KINDS:
        assert " cached " in rows[name], rows[name]


def test_offline_and_not_cached_is_one_line_naming_the_fix(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    for name in ("cnn_dailymail", "hotpot_qa"):
        with pytest.raises(UserError) as caught:
            _load(name, tmp_path / "c", monkeypatch)
        assert "\n" not in str(caught.value) and "HF_HUB_OFFLINE" in str(caught.value)
        assert "sources fetch" in str(caught.value)


@pytest.mark.parametrize(
    "status, headers, words",
    [
        (429, {"Retry-After": "120"}, ["HTTP 429", "wait 120 s", "HF_TOKEN"]),
        (429, {}, ["HTTP 429", "HF_TOKEN"]),
        (503, {}, ["HTTP 503", "server error", "try again later"]),
    ],
)
def test_rate_limits_and_server_errors_are_one_line_and_bounded(
    status: int,
    headers: dict,
    words: list[str],
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    sleeps = []  # the client's waits between retries, recorded instead of slept
    monkeypatch.setattr("huggingface_hub.utils._http.time.sleep", sleeps.append)
    mirror = write_mirror(tmp_path / "m", only={"cnn_dailymail"})
    with serving(mirror, monkeypatch) as hub:
        hub.fail(status, headers=headers)
        with pytest.raises(UserError) as caught:
            _load("cnn_dailymail", tmp_path / "c", monkeypatch)
        asked = len(hub.calls())
    message = str(caught.value)
    assert "\n" not in message and all(word in message for word in words), message
    assert "abisee/cnn_dailymail" in message
    # a few answers, then the message (at once when the hub asks for a long wait): no long retries
    assert asked == (1 if headers else hub_access.BUSY_ANSWERS)
    assert sum(sleeps) < 10
    if "Retry-After" not in headers:
        assert f"HTTP {status}" in capsys.readouterr().err  # the wait in between is said


def test_gated_and_missing_repositories_are_one_line(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mirror = write_mirror(tmp_path / "m", only={"cnn_dailymail"})
    with serving(mirror, monkeypatch) as hub:
        hub.fail(403, "cnn_dailymail")
        with pytest.raises(UserError, match=r"gated: accept its terms"):
            _load("cnn_dailymail", tmp_path / "c", monkeypatch)
        hub.clear_failures()
        with pytest.raises(UserError, match=r"repository not found"):
            _load("rag_mini_bioasq", tmp_path / "c", monkeypatch)


def test_the_proxy_setting_is_honoured(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy from the environment gets the hub's requests (here it refuses them): no direct
    connection."""
    received = []
    proxy = socket.socket()
    proxy.bind(("127.0.0.1", 0))
    proxy.listen(4)

    def refuse() -> None:
        while True:
            try:
                connection, _ = proxy.accept()
            except OSError:
                return
            received.append(connection.recv(4096))
            connection.sendall(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            connection.close()

    threading.Thread(target=refuse, daemon=True).start()
    from huggingface_hub.utils import close_session

    mirror = write_mirror(tmp_path / "m", only={"cnn_dailymail"})
    with serving(mirror, monkeypatch) as hub:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
        monkeypatch.setenv("NO_PROXY", "")
        monkeypatch.setenv("no_proxy", "")
        close_session()  # the shared client reads the proxy settings when it is made
        try:
            with pytest.raises(UserError) as caught:
                _load("cnn_dailymail", tmp_path / "c", monkeypatch)
        finally:
            monkeypatch.delenv("HTTP_PROXY")
            close_session()
            proxy.close()
        assert hub.calls() == []  # the hub itself was never reached directly
    assert received and b"abisee/cnn_dailymail" in received[0]
    assert "\n" not in str(caught.value) and "HTTP 502" in str(caught.value)


def test_a_primary_missing_from_the_hub_gives_way_to_its_stand_in(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mirror = write_mirror(tmp_path / "m", only={"leval_gov_report_summ", "financial_qa"})
    with serving(
        mirror, monkeypatch
    ):  # L-Eval is served; LongBench (gov_report's repository) is not
        location = resolve_location("hub")
        registry = location.registry()
        active = active_entries(location, registry)
        assert "gov_report" not in active and "leval_gov_report_summ" in active
        notes = stand_in_notes(location, registry, active, ["single_doc_sum"])
        gov = [note for note in notes if "gov_report" in note]
        assert len(gov) == 1 and "its stand-in leval_gov_report_summ is used" in gov[0]
        assert "zai-org/LongBench" in gov[0] and "repository not found" in gov[0]
        assert load_source(location, registry["leval_gov_report_summ"]).items


def test_sources_fetch_says_the_size_first_and_leaves_an_offline_cache(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mirror = write_mirror(tmp_path / "m", only={"hotpot_qa", "banking77"})
    size = sum(path.stat().st_size for path in mirror.rglob("*.parquet"))
    with serving(mirror, monkeypatch):
        result = CliRunner().invoke(
            main, ["sources", "fetch", "--sources-list", "hotpot_qa,banking77"]
        )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("fetch: ") and hub_access.human_size(size) in lines[0]
    assert "3 to download" in lines[0] and lines[1].startswith("[1/3] ")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub_access, "_LISTINGS", {})
    location = resolve_location("hub")
    assert all(
        location.is_available(location.registry()[name]) for name in ("hotpot_qa", "banking77")
    )
    again = CliRunner().invoke(main, ["sources", "fetch", "--sources-list", "hotpot_qa,banking77"])
    assert (
        again.exit_code == 0
        and "0 to download" in again.output
        and "3 cached already" in again.output
    )
    out = generate(
        tmp_path / "data",
        "--sources",
        "hub",
        "--tasks",
        "icl_banking77",
        "--lengths",
        "2k",
        "--rows",
        "2",
    )  # offline, from the hub cache alone
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sources"]["banking77"]["commit"] == location.registry()["banking77"].revision
    assert (out / "icl_banking77" / "2k.jsonl").read_text().count("\n") == 2
    wrong = CliRunner().invoke(main, ["sources", "fetch", "--sources-list", "nope"])
    assert wrong.exit_code != 0 and "unknown source nope" in wrong.output


def _truncated_tar_gz(path: Path, member: str, data: bytes) -> None:
    """A .tar.gz whose first member is ``member``, followed by a large member cut off mid-way."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, body in ((member, data), ("data/other/big.jsonl", bytes(range(256)) * 40_000)):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
    packed = gzip.compress(buffer.getvalue())
    path.write_bytes(packed[: len(packed) * 2 // 3])  # the tail is gone: a whole read would fail


def test_a_tar_member_is_read_as_a_stream_without_unpacking_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(
        "longbench100.sources.readers.SHOWN_ARCHIVE_BYTES", 1
    )  # show progress for any size
    member = "data/msmarco/test_reranking_data_k1000_dep3.jsonl"
    path = tmp_path / "data.tar.gz"
    _truncated_tar_gz(path, member, b'{"qid": "1", "query": "q", "ctxs": []}\n')
    spec = FileSpec(path="data.tar.gz", format="jsonl", member=member)
    assert [row for _, row in iter_rows(path, spec)] == [{"qid": "1", "query": "q", "ctxs": []}]
    from longbench100.sources.locations import archive_has_member

    opened = []
    real_open = tarfile.open

    def counted_open(*args: object, **options: object) -> tarfile.TarFile:
        opened.append(args)
        return real_open(*args, **options)

    monkeypatch.setattr(tarfile, "open", counted_open)  # the module readers imports
    assert archive_has_member(path, member) and opened == []  # never listed ahead of a read
    assert "reading data.tar.gz" in capsys.readouterr().err  # the read shows its progress


def test_each_failure_names_its_cause_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import httpx2

    where, what = "source x: o/r@abc", "data.zip"
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    full = hub_access.hub_error(OSError(errno.ENOSPC, "No space left on device"), where, what)
    assert "no space left on the device" in str(full) and "HF_HOME" in str(full)
    quota = hub_access.hub_error(OSError(errno.EDQUOT, "Disk quota exceeded"), where, what)
    assert "the disk quota is used up" in str(quota) and "raise the quota" in str(quota)
    limit = hub_access.hub_error(OSError(errno.EFBIG, "File too large"), where, what)
    assert "ulimit -f" in str(limit) and "HF_HOME" not in str(limit)  # another disk won't help
    proxy = hub_access.hub_error(
        httpx2.ProxyError("407 Proxy Authentication Required"), where, what
    )
    assert "the proxy http://proxy.example:3128 failed" in str(proxy) and "407" in str(proxy)
    refused = hub_access.hub_error(
        hub_access.HubNoAnswer(httpx2.ConnectError("Connection refused")), where, what
    )
    assert "cannot reach the Hugging Face hub" in str(
        refused
    ) and "through the proxy http://proxy.example:3128" in str(refused)
    busy = hub_access.hub_error(hub_access.HubBusy(429, 61), where, what)
    assert "HTTP 429; the hub asks to wait 61 s" in str(busy) and "HF_TOKEN" in str(busy)
    for error in (full, proxy, refused, busy):
        assert str(error).startswith(where) and "\n" not in str(error)


def test_a_mirror_under_a_former_repository_id_still_works(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811 - the list below reads an empty hub cache
) -> None:
    mirror = write_mirror(tmp_path / "m", only={"hotpotqa"})
    (mirror / "THUDM").mkdir()
    (mirror / "zai-org" / "LongBench").rename(mirror / "THUDM" / "LongBench")  # the old layout
    location = resolve_location(str(mirror))
    entry = location.registry()["hotpotqa"]
    assert entry.repo_id == "zai-org/LongBench" and "THUDM/LongBench" in entry.aliases
    assert location.is_available(entry) and load_source(location, entry).items
    listed = CliRunner().invoke(main, ["sources", "list", "--sources", "hub"])
    rows = {line.split()[1]: line for line in listed.output.splitlines()[1:]}
    assert "not read from the hub" in rows["rag_mini_bioasq_summary"]  # mirrors only


# --- a hub that hangs or trickles, and what is left out ------------------------------------------


def _one_line_error(result) -> str:
    """The single ``error:`` line of a failed command (nothing else said on the way)."""
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0 and len(errors) == 1, result.output
    return errors[0]


@pytest.mark.parametrize(
    "mode, within, words",
    [
        ("hang", "", "does not answer (no reply within 0.5 s)"),  # nothing answers at all
        ("hang", "/resolve/", "does not answer (no reply within 0.5 s)"),  # a file's metadata
        ("trickle", "", "sends too slowly"),  # the whole answer a byte at a time
        ("body", "/lfs/", "sends too slowly"),  # a file's body (on the file host) a byte at a time
    ],
)
def test_a_hub_that_hangs_or_trickles_stops_within_the_wait_limit(
    mode: str,
    within: str,
    words: str,
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LONGBENCH100_HUB_TIMEOUT", "0.5")
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "c"))
    mirror = write_mirror(tmp_path / "m", only={"trec_coarse"})
    with serving(mirror, monkeypatch) as hub:
        if mode == "hang":
            hub.hang(within)
        else:
            hub.trickle(within, pause=0.05, body_only=mode == "body")
        started = time.monotonic()
        result = CliRunner().invoke(main, ["sources", "fetch", "--sources-list", "trec_coarse"])
        took = time.monotonic() - started
        endpoint = hub.endpoint
    line = _one_line_error(result)
    assert f"the Hugging Face hub at {endpoint}" in line and words in line, line
    assert "CogComp/trec" in line and "LONGBENCH100_HUB_TIMEOUT" in line
    assert took < 30  # bounded by the wait limit, not by the client's minutes of retries


def test_an_interrupt_before_any_row_does_not_claim_saved_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from longbench100.core.interrupts import Interrupted
    from longbench100.generate import run
    from longbench100.generate.options import GenerateOptions

    def stopped(*args: object) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "c"))
    monkeypatch.setattr(run, "_generate", stopped)
    out = tmp_path / "never"
    options = GenerateOptions(
        tasks=("passage_count",),
        lengths=(("2k", 2048),),
        rows=1,
        seed=1,
        tokenizer="cl100k_base",
        out=out,
        sources="demo",
        workers=1,
    )
    with pytest.raises(Interrupted) as caught:
        run.run_generate(options, echo=lambda line: None, progress=False)
    assert "saved in" not in caught.value.hint and "--resume" not in caught.value.hint
    assert "no row was finished yet" in caught.value.hint


def test_fetch_fails_in_one_line_when_a_needed_source_is_left_out(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fetch = ["sources", "fetch", "--suite", "ruler"]
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # offline, nothing cached
    offline = CliRunner().invoke(main, fetch)
    line = _one_line_error(offline)
    assert "could not be fetched" in line and "HF_HUB_OFFLINE" in line and "cnn_dailymail" in line
    assert "done:" not in offline.output
    listed = CliRunner().invoke(main, ["sources", "list", "--sources", "hub"])
    rows = {line.split()[1]: line for line in listed.output.splitlines()[1:]}
    assert "not cached (offline)" in rows["cnn_dailymail"] and "HF_HUB_OFFLINE" in listed.output
    assert "download on use" not in listed.output
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with serving(write_mirror(tmp_path / "m", only={"trec_coarse"}), monkeypatch):
        missing = CliRunner().invoke(main, fetch)  # the hub answers 404: no ruler source is there
        line = _one_line_error(missing)
        assert "could not be fetched" in line and "HF_HUB_OFFLINE" not in line
        assert "repository not found" in missing.output  # the left-out lines say why
        served = CliRunner().invoke(main, ["sources", "fetch", "--sources-list", "trec_coarse"])
    assert served.exit_code == 0 and "done: " in served.output, served.output


def test_offline_generate_names_hf_hub_offline_and_sources_fetch(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "c"))
    command = [
        "generate",
        "--suite",
        "ruler",
        "--sources",
        "hub",
        "--lengths",
        "2k",
        "--rows",
        "1",
        "--quiet",
        "--out",
        str(tmp_path / "o"),
    ]
    result = CliRunner().invoke(main, command)
    line = _one_line_error(result)
    assert "HF_HUB_OFFLINE" in line and "longbench100 sources fetch --sources-list" in line, line


def test_a_wrong_wait_limit_is_one_line(
    tmp_path: Path,
    hub_cache: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LONGBENCH100_HUB_TIMEOUT", "soon")
    with serving(write_mirror(tmp_path / "m", only={"trec_coarse"}), monkeypatch):
        result = CliRunner().invoke(main, ["sources", "fetch", "--sources-list", "trec_coarse"])
    assert "LONGBENCH100_HUB_TIMEOUT=soon" in _one_line_error(result)
