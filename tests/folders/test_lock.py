"""Two runs on one output, and a full disk: refuse or wait, never corrupt."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.lock import lock_path
from longbench100.generate import output
from tests.support.generate_helpers import reseal
from tests.support.openai_stub import OpenAIStub
from tests.support.predict_helpers import write_data

REPO = Path(__file__).resolve().parents[2]
GENERATE = [
    "generate",
    "--sources",
    "demo",
    "--tasks",
    "kv_retrieval,passage_count",
    "--lengths",
    "2k,4k",
    "--rows",
    "3",
    "--workers",
    "1",
    "--quiet",
]
HOLD = (
    "import sys; from pathlib import Path; from longbench100.folders.lock import output_lock\n"
    "with output_lock(Path(sys.argv[1]), '--out'):\n    print('held', flush=True); sys.stdin.read()"
)


def hold_lock(output_path: Path) -> subprocess.Popen:
    """Another process that holds the lock of ``output_path`` until its stdin closes (or it is killed)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(output_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=REPO,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    return result.exit_code, result.output


def records(folder: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("*/*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def test_a_second_generate_is_refused_naming_the_holder_and_kill_9_leaves_no_stale_lock(
    tmp_path: Path,
):
    out = tmp_path / "data"
    holder = hold_lock(out)
    try:
        code, text = cli(*GENERATE, "--out", out)
        assert (
            code == 2
            and f"another longbench100 run (pid {holder.pid}) is writing there" in text
            and "--wait" in text
        )
        assert not out.exists()
    finally:
        holder.kill()  # kill -9: the kernel drops the lock
        holder.wait()
    assert lock_path(out).exists()  # left by the killed holder, and locked again at once
    code, text = cli(*GENERATE, "--out", out)
    assert code == 0, text
    assert not lock_path(out).exists()  # a run that ends normally leaves nothing behind


def test_wait_waits_for_the_other_run(tmp_path: Path):
    out = tmp_path / "data"
    holder = hold_lock(out)
    waiting = subprocess.Popen(
        [sys.executable, "-m", "longbench100", *GENERATE, "--out", str(out), "--wait"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    holder.stdin.close()  # the first run ends
    assert holder.wait() == 0
    text, _ = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, text and "wrote" in text


def test_two_generate_runs_started_together_give_one_refusal_and_clean_output(tmp_path: Path):
    out = tmp_path / "g3"
    command = [sys.executable, "-m", "longbench100", *GENERATE, "--out", str(out)]
    runs = [
        subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert sorted(run.returncode for run in runs) == [0, 2], outputs
    refused = outputs[[run.returncode for run in runs].index(2)]
    assert "another longbench100 run" in refused or "already holds a generation run" in refused
    ids = [record["id"] for record in records(out)]
    assert len(ids) == len(set(ids)) == 12


def test_a_second_predict_is_refused_and_sends_nothing(tmp_path: Path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 3})
    out = tmp_path / "pred"
    holder = hold_lock(out)
    try:
        with OpenAIStub(lambda body: "7") as server:
            code, text = cli(
                "predict",
                "--data",
                data,
                "--model",
                server.model,
                "--base-url",
                server.base_url,
                "--out",
                out,
            )
            assert not server.requests
        assert code == 2 and f"pid {holder.pid}" in text
    finally:
        holder.kill()
        holder.wait()


def test_inspect_and_score_refuse_duplicate_ids(tmp_path: Path):
    out = tmp_path / "data"
    assert cli(*GENERATE, "--out", out)[0] == 0
    path = out / "kv_retrieval" / "2k.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(
        "\n".join(lines + lines[-1:]) + "\n"
    )  # what two runs appending at once left behind
    reseal(out)
    code, text = cli("inspect", out)
    assert code == 2 and "duplicate id 'kv_retrieval-2k-0002'" in text and "Traceback" not in text
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": "1"}) + "\n" for r in records(out))
    )
    code, text = cli(
        "score", "--data", out, "--predictions", predictions, "--out", tmp_path / "r.json"
    )
    assert code == 2 and "duplicate id" in text


def test_a_full_disk_is_one_line_and_resume_gives_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    clean = tmp_path / "clean"
    assert cli(*GENERATE, "--out", clean)[0] == 0
    real_write = output.LineAppender.write
    written = []

    def fills_up(self, parts: list[bytes]) -> None:
        line = b"".join(parts)
        if len(written) == 4:  # the fifth line: half of it reaches the disk, then it is full
            os.write(self._fd, line[: len(line) // 2])
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        written.append(line)
        real_write(self, parts)

    monkeypatch.setattr(output.LineAppender, "write", fills_up)
    out = tmp_path / "full"
    code, text = cli(*GENERATE, "--out", out)
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in text
    assert (
        "no space left on the device" in errors[0] and "4 rows written so far are kept" in errors[0]
    )
    assert "--resume" in errors[0]
    monkeypatch.setattr(output.LineAppender, "write", real_write)
    code, text = cli(*GENERATE, "--out", out, "--resume")
    assert code == 0, text
    for path in sorted(clean.glob("*/*.jsonl")):
        assert (out / path.relative_to(clean)).read_bytes() == path.read_bytes()
    # the manifest's checksums, kept while writing (the resumed file's earlier lines included), are the files'
    for folder in (clean, out):
        files = json.loads((folder / "manifest.json").read_text())["files"]
        assert files and all(
            entry["sha256"] == hashlib.sha256((folder / name).read_bytes()).hexdigest()
            for name, entry in files.items()
        )


def test_a_file_size_limit_is_one_line_and_resume_gives_the_same_bytes(tmp_path: Path):
    """A write past the limit on a file's size (``ulimit -f``: EFBIG, since Python ignores SIGXFSZ)
    stops a run as a full disk does: one line, exit 2, and ``--resume`` without the limit finishes
    the same bytes."""
    clean = tmp_path / "clean"
    assert cli(*GENERATE, "--out", clean)[0] == 0
    limit = max(path.stat().st_size for path in clean.glob("*/*.jsonl")) // 2

    def limit_file_size() -> None:
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))

    out = tmp_path / "limited"
    limited = subprocess.run(
        [sys.executable, "-m", "longbench100", *GENERATE, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        preexec_fn=limit_file_size,
    )
    errors = [line for line in limited.stderr.splitlines() if line.startswith("error:")]
    assert limited.returncode == 2 and "Traceback" not in limited.stderr, limited.stderr
    assert len(errors) == 1 and "size" in errors[0] and "--resume" in errors[0], errors
    code, text = cli(*GENERATE, "--out", out, "--resume")
    assert code == 0, text
    for path in sorted(clean.glob("*/*.jsonl")):
        assert (out / path.relative_to(clean)).read_bytes() == path.read_bytes()


def test_a_real_full_disk_on_a_small_tmpfs(tmp_path: Path):
    mount = tmp_path / "small"
    mount.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mount)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        code, text = cli(
            "generate",
            "--sources",
            "demo",
            "--tasks",
            "kv_retrieval",
            "--lengths",
            "8k",
            "--rows",
            "40",
            "--workers",
            "1",
            "--quiet",
            "--out",
            mount / "data",
        )
        errors = [line for line in text.splitlines() if line.startswith("error:")]
        assert (
            code == 2
            and len(errors) == 1
            and "no space left on the device" in errors[0]
            and "Traceback" not in text
        )
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
