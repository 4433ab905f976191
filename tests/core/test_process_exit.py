"""The console entry's fast exit: same status, same output, exit handlers and threads honoured, no freeing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from longbench100.core.process_exit import exit_status

BUFFERED = {
    name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"
}  # so a missing flush shows


def _script(body: str) -> str:
    """Python source that runs ``body`` (which defines ``command``) under :func:`run_and_leave`."""
    return (
        "from longbench100.core.process_exit import run_and_leave\n"
        + textwrap.dedent(body)
        + "\nrun_and_leave(command)\n"
    )


def _run(body: str) -> subprocess.CompletedProcess:
    """Run :func:`_script` of ``body`` in a fresh interpreter with buffered standard streams."""
    return subprocess.run(
        [sys.executable, "-c", _script(body)],
        capture_output=True,
        text=True,
        timeout=60,
        env=BUFFERED,
    )


@pytest.mark.parametrize("code, status", [(None, 0), (0, 0), (3, 3), (2, 2)])
def test_exit_status_as_sys_exit_gives_it(code, status):
    assert exit_status(code) == status


def test_a_message_is_printed_and_exits_1(capsys):
    assert exit_status("went wrong") == 1
    assert capsys.readouterr().err == "went wrong\n"


@pytest.mark.parametrize(
    "ending, status", [("", 0), ("raise SystemExit(4)", 4), ("raise SystemExit('stopped here')", 1)]
)
def test_the_status_and_unflushed_output_survive(ending, status):
    result = _run(f"""
        import sys
        def command():
            sys.stdout.write("no newline, still buffered")
            sys.stderr.write("to stderr")
            {ending}
        """)
    assert result.returncode == status
    assert result.stdout == "no newline, still buffered"
    assert result.stderr.startswith("to stderr")
    assert result.stderr.endswith("stopped here\n") == (status == 1)


def test_exit_handlers_run_and_threads_finish_first():
    result = _run("""
        import atexit, threading, time
        def late():
            time.sleep(0.3)
            print("thread done", flush=True)
        def command():
            atexit.register(lambda: print("handler ran", flush=True))
            threading.Thread(target=late).start()
        """)
    assert result.returncode == 0
    assert result.stdout == "thread done\nhandler ran\n"


def test_an_unexpected_error_still_exits_the_usual_way():
    result = _run("""
        import atexit
        def command():
            atexit.register(lambda: print("handler ran", flush=True))
            raise RuntimeError("a bug")
        """)
    assert result.returncode == 1
    assert "RuntimeError: a bug" in result.stderr
    assert result.stdout == "handler ran\n"


def test_a_closed_stdout_gives_python_s_own_status():
    script = _script("""
        import sys, time
        def command():
            time.sleep(0.5)  # the reader has gone by now
            sys.stdout.write("still in the buffer")
        """)
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=BUFFERED,
    )
    process.stdout.close()
    assert process.wait(timeout=60) == 120


def test_the_command_line_ends_through_it():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "longbench100",
            "generate",
            "--tasks",
            "no_such_task",
            "--out",
            "unused",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: unknown task no_such_task")
    assert result.stdout == ""


def test_a_stream_the_command_closed_is_left_alone():
    result = _run("""
        import sys
        def command():
            sys.stdout.close()
        """)
    assert result.returncode == 0 and result.stderr == ""
