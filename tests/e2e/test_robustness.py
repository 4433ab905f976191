"""Crashes and stuck processes: unwritable outputs, killed or interrupted runs, failed starts, error style."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.task_info import TASKS
from longbench100.cli import main
from longbench100.core.atomic import write_json_atomic
from longbench100.core.errors import UserError
from longbench100.folders import writable
from longbench100.folders.layout import read_jsonl
from longbench100.folders.writable import ensure_writable_dir, ensure_writable_file
from longbench100.generate import run as runner
from longbench100.generate.manifest import RUN_STATE
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.scoring.results import write_results
from longbench100.tasks import BUILDERS
from longbench100.tasks.one_document import OneDocumentTask
from tests.scoring.test_predictions import RIGHT, write_dataset, write_predictions
from tests.support.generate_helpers import (
    assert_examples_cover,
    record_template_variables,
    terminal_signals,
)
from tests.support.openai_stub import OpenAIStub

REPO = Path(__file__).resolve().parents[2]


def _one_error_line(result) -> str:
    """The single ``error: ...`` line of a failed command (asserting it is the only output)."""
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (
        result.output
    )
    assert "Traceback" not in result.output
    return lines[0]


# --- writability ------------------------------------------------------------------------------------


def test_out_under_a_file_or_in_proc_is_refused(tmp_path: Path) -> None:
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    with pytest.raises(
        UserError, match=r"^--out .*plain.txt/sub: cannot create it, .*plain.txt is a file$"
    ):
        ensure_writable_dir(a_file / "sub")
    with pytest.raises(UserError, match=r"^--out .*plain.txt: is a file, not a folder$"):
        ensure_writable_dir(a_file)
    with pytest.raises(UserError, match=r"^--out /proc/longbench100-out: cannot write there \("):
        ensure_writable_dir(Path("/proc/longbench100-out"))
    with pytest.raises(UserError, match=r"^--out .*: is a folder, not a file$"):
        ensure_writable_file(tmp_path)
    ensure_writable_dir(tmp_path / "new" / "deeper")
    assert not (tmp_path / "new").exists()  # checked, not created
    assert list(tmp_path.iterdir()) == [a_file]  # the probe file is gone


def test_a_read_only_file_system_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what the operating system answers on a read-only mount, for root too
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(writable, "create_new_file", read_only)
    with pytest.raises(
        UserError, match=r"^--out .*results.json: cannot write there \(Read-only file system\)$"
    ):
        ensure_writable_file(tmp_path / "results.json")


def test_generate_score_and_report_refuse_a_read_only_out_in_one_line(
    read_only_dir: Path, tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_loading(*args, **kwargs):
        raise AssertionError("sources loaded before the --out check")

    monkeypatch.setattr(runner, "load_corpus", no_loading)
    out = read_only_dir / "data"
    line = _one_error_line(
        CliRunner().invoke(
            main, ["generate", "--sources", str(mirror), "--out", str(out), "--quiet"]
        )
    )
    assert line.startswith(f"error: --out {out}: cannot write there (")

    data = write_dataset(tmp_path / "data", tasks=("kv_retrieval",), labels=("2k",), rows=1)
    predictions = write_predictions(
        tmp_path / "model", data, answer=lambda record: RIGHT[record["task"]]
    )
    args = [
        "score",
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(read_only_dir / "results.json"),
    ]
    line = _one_error_line(CliRunner().invoke(main, args))
    assert line.startswith(f"error: --out {read_only_dir / 'results.json'}: cannot write there (")

    line = _one_error_line(
        CliRunner().invoke(main, ["report", str(tmp_path / "results.json"), "--out", str(out)])
    )
    assert line.startswith(f"error: --out {out}: cannot write there (")


def test_predict_refuses_a_read_only_out_before_sending_anything(
    read_only_dir: Path, tmp_path: Path
) -> None:
    data = write_dataset(tmp_path / "data", tasks=("kv_retrieval",), labels=("2k",), rows=1)
    out = read_only_dir / "preds"
    with OpenAIStub(lambda body: "an answer") as server:
        args = [
            "predict",
            "--data",
            str(data),
            "--out",
            str(out),
            "--model",
            "stub-model",
            "--base-url",
            server.base_url,
            "--no-progress",
        ]
        line = _one_error_line(CliRunner().invoke(main, args))
    assert line.startswith(f"error: --out {out}: cannot write there (")
    assert not any(request.path.endswith("/completions") for request in server.requests)


# --- killed and interrupted runs --------------------------------------------------------------------


def _start_generate(mirror: Path, out: Path) -> subprocess.Popen:
    """``generate --workers 2`` in its own process group, with enough work to be stopped mid-run.

    Its output goes to ``out``'s sibling files, not pipes: an orphaned worker would hold a pipe open.
    """
    command = [
        sys.executable,
        "-m",
        "longbench100",
        "generate",
        "--sources",
        str(mirror),
        "--out",
        str(out),
        "--tasks",
        "passage_count",
        "--lengths",
        "16k,64k",  # 33 M prompt tokens: past SERIAL_BELOW, so the rows are built by workers
        "--rows",
        "400",
        "--workers",
        "2",
        "--quiet",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(out.with_name("stdout"), "w") as stdout, open(out.with_name("stderr"), "w") as stderr:
        return subprocess.Popen(
            command,
            stdout=stdout,
            stderr=stderr,
            env=env,
            start_new_session=True,
            preexec_fn=terminal_signals,
        )


def _stderr(out: Path) -> str:
    return out.with_name("stderr").read_text()


def _wait_for_rows(process: subprocess.Popen, out: Path, timeout_s: float = 120) -> None:
    """Wait until the run has written a row through its workers (so it is mid-run)."""
    partial = out / "passage_count" / "16k.jsonl.partial"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, _stderr(out)
        if partial.exists() and partial.stat().st_size:
            return
        time.sleep(0.05)
    process.kill()
    pytest.fail("generate wrote no row in time")


def _group_members(group: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``group``."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def _assert_group_gone(group: int, within_s: float = 10) -> None:
    """Fail (after killing them) when processes of ``group`` are still alive after ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while _group_members(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = _group_members(group)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], "worker processes outlived generate"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the workers")
def test_kill_9_of_generate_leaves_no_worker_behind(mirror: Path, tmp_path: Path) -> None:
    process = _start_generate(mirror, tmp_path / "out")
    _wait_for_rows(process, tmp_path / "out")
    assert len(_group_members(process.pid)) >= 3  # the parent and its two workers
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    _assert_group_gone(process.pid)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the workers")
@pytest.mark.parametrize(
    ("stop", "code", "word"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
)
def test_sigterm_and_ctrl_c_stop_generate_with_the_resume_hint(
    mirror: Path, tmp_path: Path, stop, code, word
) -> None:
    out = tmp_path / "out"
    process = _start_generate(mirror, out)
    _wait_for_rows(process, out)
    if stop == signal.SIGINT:
        os.killpg(process.pid, stop)  # a terminal sends Ctrl-C to the whole group, workers included
    else:
        os.kill(process.pid, stop)
    process.wait(timeout=60)
    stderr = _stderr(out)
    assert process.returncode == code, stderr
    assert stderr.strip().splitlines() == [
        f"{word}: rows finished so far are saved in {out}; rerun with --resume to continue"
    ]
    _assert_group_gone(process.pid)
    assert (
        out / "passage_count" / "16k.jsonl.partial"
    ).stat().st_size > 0  # the rows written are kept for --resume


# --- failed starts ----------------------------------------------------------------------------------


def _options(mirror: Path, out: Path, **changes) -> GenerateOptions:
    base = dict(
        tasks=("passage_count",),
        lengths=(("2k", 2048),),
        rows=2,
        seed=3,
        tokenizer="cl100k_base",
        out=out,
        sources=str(mirror),
        workers=1,
    )
    return GenerateOptions(**{**base, **changes})


def test_a_template_with_an_undefined_variable_fails_before_claiming(
    mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "single_doc_qa.j2").write_text(
        "{% if closed_book %}{{ question }}{% else %}{{ questoin }}{% endif %}"
    )
    (templates / "passage_count.j2").write_text(
        "{% for b in blocks %}{{ b.text }}{% endfor %} {{ closed_book }}"
    )
    monkeypatch.setattr(
        runner,
        "load_corpus",
        lambda *a, **k: pytest.fail("sources loaded before the template check"),
    )
    out = tmp_path / "out"
    for task, name in (("single_doc_qa", "questoin"), ("passage_count", "closed_book")):
        with pytest.raises(UserError, match=rf"^template .*{task}.j2: '{name}' is undefined$"):
            run_generate(
                _options(mirror, out, tasks=(task,), templates=templates),
                echo=lambda _: None,
                progress=False,
            )
    assert not out.exists()


def test_template_examples_cover_every_variable_the_builders_pass(
    mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the check before claiming renders EXAMPLE_VARIABLES; a variable a builder passes but the
    # examples lack would make a valid user template fail that check
    passed = record_template_variables(monkeypatch)
    tasks = tuple(
        task for task in TASKS if not issubclass(BUILDERS[task], OneDocumentTask)
    )  # those need an annotator:
    run_generate(
        _options(mirror, tmp_path / "out", tasks=tasks, rows=1), echo=lambda _: None, progress=False
    )  # test_one_document_tasks
    assert set(passed) == set(tasks)
    assert_examples_cover(passed)


def test_a_folder_without_finished_rows_is_reused_without_resume(
    mirror: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / "passage_count").mkdir(parents=True)
    (out / RUN_STATE).write_text(
        json.dumps({"seed": 99, "tasks": ["kv_retrieval"]})
    )  # a run that failed at its start
    (out / "passage_count" / "2k.jsonl.partial").write_bytes(
        b'{"id": "torn'
    )  # and left no complete line
    run_generate(_options(mirror, out), echo=lambda _: None, progress=False)
    assert len((out / "passage_count" / "2k.jsonl").read_text().splitlines()) == 2
    assert json.loads((out / RUN_STATE).read_text())["seed"] == 3
    # with finished rows, the folder is a run to resume
    with pytest.raises(UserError, match="pass --resume"):
        run_generate(_options(mirror, out), echo=lambda _: None, progress=False)


def test_pairing_leaves_out_lengths_without_rows(mirror: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    lengths = (("100", 100), ("2k", 2048))  # no kv_retrieval prompt fits 100 tokens
    manifest = run_generate(
        _options(mirror, out, tasks=("kv_retrieval",), lengths=lengths),
        echo=lambda _: None,
        progress=False,
    )
    facts = manifest["tasks"]["kv_retrieval"]
    assert facts["lengths"]["100"]["rows"] == 0 and facts["lengths"]["2k"]["rows"] == 2
    assert facts["paired_over_lengths"] == ["2k"] and facts["paired_rows_all_lengths"] == 2
    result = CliRunner().invoke(main, ["inspect", str(out)])
    assert "rows asking the same item at every length with rows (2k): 2" in result.output


# --- error style and permissions --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "--bogus"], "error: No such option '--bogus'."),
        (["nosuch"], "error: No such command 'nosuch'."),
        (
            ["generate", "--rows", "x", "--out", "o"],
            "error: Invalid value for '--rows': 'x' is not a valid integer.",
        ),
    ],
)
def test_click_usage_errors_print_in_our_style(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, args, prog_name="longbench100")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("Usage: longbench100")
    assert lines[-1].startswith(message) and "Error:" not in result.output


def test_json_errors_are_whole_sentences(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"id": "a", "prediction": "x"}\n{"id": "b", "prediction": "tab\there"}\n')
    with pytest.raises(UserError) as caught:
        read_jsonl(path)
    assert str(caught.value) == f"{path}:2: not valid JSON (Invalid control character at column 31)"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_writes_honour_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    previous = os.umask(umask)
    try:
        write_json_atomic(tmp_path / "manifest.json", {"a": 1}, indent=2)
        write_results(tmp_path / "results.json", {"model": "m", "samples": []})
    finally:
        os.umask(previous)
    assert (tmp_path / "manifest.json").stat().st_mode & 0o777 == mode
    assert (
        tmp_path / "results.json"
    ).stat().st_mode & 0o777 == mode  # as readable as the data, never more
    assert sorted(path.name for path in tmp_path.iterdir()) == ["manifest.json", "results.json"]
