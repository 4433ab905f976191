"""The command line starts at once: no help imports the heavy libraries a command uses when it runs.

Each ``--help`` runs in a child forked from a process that imported only :mod:`longbench100.cli`, so
what the child finds in ``sys.modules`` afterwards is what that help imported (checked by module,
not by time, so the test does not depend on the machine's speed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from longbench100.cli import COMMANDS, main

REPO = Path(__file__).resolve().parents[2]

HEAVY = (
    "numpy",
    "httpx",
    "matplotlib",
    "pytrec_eval",
    "sklearn",
    "scipy",
    "tokenizers",
    "transformers",
    "tiktoken",
    "jinja2",
    "datasets",
    "pyarrow",
    "huggingface_hub",
    "rouge",
    "rouge_score",
    "bm25s",
    "ftfy",
    "inscriptis",
    "yaml",
    "markdown_it",
    "regex",
    "longbench100.generate.run",
    "longbench100.scoring.run",
)
"""Libraries (and our own machinery) that a command loads when it runs and its help must not."""

_CHILD = """
import io, json, os, sys
from contextlib import redirect_stdout
from longbench100.cli import main
found = {}
for path in json.loads(sys.argv[1]):
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        shown = io.StringIO()
        try:
            with redirect_stdout(shown):
                main.main([*path, "--help"], prog_name="longbench100")
        except SystemExit:
            pass
        found = {"modules": sorted(sys.modules), "help": shown.getvalue()}
        os.write(write, json.dumps(found).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        found[" ".join(path)] = json.loads(pipe.read())
    os.wait()
print(json.dumps(found))
"""


def command_paths(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """``path`` and the path of every subcommand below ``command`` (imports them here)."""
    paths = [path]
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            paths += command_paths(command.get_command(context, name), (*path, name))
    return paths


@pytest.fixture(scope="module")
def helps() -> dict[str, dict]:
    """What each command's ``--help`` printed and imported, by command path (``""``: the group)."""
    paths = command_paths(main)
    python_path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": python_path}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(paths)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=REPO,
    )
    return json.loads(done.stdout)


def test_every_help_imports_no_heavy_library(helps: dict[str, dict]):
    assert len(helps) > len(COMMANDS)  # the group, every command and the groups' subcommands
    loaded = {
        path or "(group)": sorted(set(found["modules"]) & set(HEAVY))
        for path, found in helps.items()
    }
    assert {path: heavy for path, heavy in loaded.items() if heavy} == {}
    for path, found in helps.items():
        assert found["help"].startswith("Usage: longbench100"), (path, found["help"])


def test_the_group_help_imports_no_command_and_lists_every_one(helps: dict[str, dict]):
    group = helps[""]
    assert not [name for name in group["modules"] if name.startswith("longbench100.commands.")]
    listed = group["help"].split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == list(COMMANDS)


def test_the_listed_summaries_are_the_commands_own():
    context = click.Context(main)
    for name, (_, summary) in COMMANDS.items():
        command = main.get_command(context, name)
        assert summary == command.get_short_help_str(limit=1000), name
        for limit in (30, 45, 60):
            listed = click.Command(name, help=summary).get_short_help_str(limit)
            assert listed == command.get_short_help_str(limit), (name, limit)


RUN_HEAVY = ("sklearn", "scipy", "pandas", "httpx", "matplotlib", "pytrec_eval")
"""Libraries that ``generate`` of a niah cell needs none of: the task modules and the chance levels
of the control twins must not load them."""

_RUN_CHILD = """
import json, sys
from longbench100.cli import main
try:
    main.main(sys.argv[1:], prog_name="longbench100")
except SystemExit as stop:
    code = stop.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _generate_in_a_child(arguments: list[str]) -> list[str]:
    """Run ``longbench100 generate`` with ``arguments`` in a fresh interpreter; the modules it
    imported (it must succeed)."""
    python_path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _RUN_CHILD, "generate", *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": python_path},
        check=True,
        cwd=REPO,
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["code"] == 0, done.stderr
    return found["modules"]


@pytest.mark.parametrize("task", ["niah_single_1", "niah_single_2", "niah_multikey_1"])
def test_generate_of_a_niah_cell_imports_no_heavy_library(task: str, tmp_path: Path):
    arguments = ["--sources", "demo", "--tasks", task, "--lengths", "2k"]
    arguments += ["--rows", "2", "--workers", "1", "--quiet", "--out", str(tmp_path / "out")]
    imported = _generate_in_a_child(arguments)
    assert (tmp_path / "out" / "controls" / task / "2k.jsonl").is_file()  # the twins ran too
    modules = {name.split(".")[0] for name in imported}
    assert sorted(modules & set(RUN_HEAVY)) == []
    assert "longbench100.tasks.passage_retrieval" not in imported


def test_generate_without_twins_imports_no_twin_code(tmp_path: Path):
    arguments = ["--sources", "demo", "--tasks", "niah_single_1", "--lengths", "2k"]
    arguments += ["--rows", "2", "--workers", "1", "--quiet", "--no-controls"]
    arguments += ["--out", str(tmp_path / "out")]
    imported = _generate_in_a_child(arguments)
    assert not (tmp_path / "out" / "controls").exists()
    assert "longbench100.generate.run" in imported
    twin_code = {"longbench100.generate.controls", "longbench100.generate.inspection"}
    assert sorted(twin_code & set(imported)) == []


ONE_PROCESS_UNUSED = (
    "socket",
    "secrets",
    "tarfile",
    "ctypes",
    "multiprocessing",
    "concurrent.futures.process",
)
"""What a run in one process from a mirror without tar archives never uses: the network, random
tokens, worker pools. Each costs the start of every run."""


def test_a_run_in_one_process_imports_no_network_log_or_pool_machinery(tmp_path: Path):
    arguments = ["--sources", "demo", "--tasks", "niah_single_1", "--lengths", "2k"]
    arguments += ["--rows", "2", "--workers", "1", "--quiet", "--no-controls"]
    arguments += ["--out", str(tmp_path / "out")]
    imported = _generate_in_a_child(arguments)
    assert sorted(set(ONE_PROCESS_UNUSED) & set(imported)) == []
