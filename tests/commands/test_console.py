"""Every command's output: results on stdout, warnings and notes on stderr, -q and -v."""

from __future__ import annotations

import logging

import click
import pytest
from click.testing import CliRunner

from longbench100.cli import COMMANDS, main
from tests.scoring.test_predictions import write_dataset, write_predictions
from tests.support.openai_stub import OpenAIStub
from tests.support.predict_helpers import write_data


def all_commands() -> dict[str, click.Command]:
    """Every command and group by its full name (``sources``, ``sources list``, ``score``, ...)."""
    found: dict[str, click.Command] = {}
    context = click.Context(main)

    def walk(name: str, command: click.Command) -> None:
        found[name] = command
        if isinstance(command, click.Group):
            for sub_name, sub in command.commands.items():
                walk(f"{name} {sub_name}", sub)

    for name in COMMANDS:
        walk(name, main.get_command(context, name))
    return found


def test_every_command_takes_quiet_and_verbose():
    commands = all_commands()
    assert {"score", "generate", "sources list", "dolce fit", "verify-snapshot"} <= set(commands)
    for name, command in commands.items():
        options = {option for parameter in command.params for option in parameter.opts}
        assert {"-q", "--quiet", "-v", "--verbose"} <= options, name


def test_score_prints_results_on_stdout_and_warnings_on_stderr(tmp_path):
    data = write_dataset(tmp_path / "data", tasks=("kv_retrieval",), labels=("2k", "4k"), rows=2)
    predictions = write_predictions(tmp_path / "m", data)
    runs = {}
    for flags in ((), ("-q",)):
        out = tmp_path / f"r{len(flags)}.json"
        result = CliRunner().invoke(
            main,
            [
                "score",
                *flags,
                "--data",
                str(data),
                "--predictions",
                str(predictions),
                "--out",
                str(out),
                "--n-boot",
                "10",
            ],
        )
        assert result.exit_code == 0, result.output
        runs[flags] = result
        assert (
            "warning:" not in result.stdout
            and "kv_retrieval" in result.stdout
            and f"wrote {out}" in result.stdout
        )
        assert "warning: kv_retrieval: Base Ability is the mean over 2k, 4k only" in result.stderr
    assert "no graded samples at base length 6k" in runs[("-q",)].stderr  # -q keeps warnings


def test_quiet_and_verbose_together_is_a_usage_error():
    result = CliRunner().invoke(main, ["suites", "-q", "-v"])
    assert result.exit_code == 2 and "exclude each other" in result.stderr


@pytest.fixture
def root_logger():
    """The root logger, its handlers and level put back after the test (-v adds a handler to it)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


def test_verbose_logs_each_request_on_stderr(tmp_path, root_logger):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(lambda body: "an answer") as server:
        for flag, out in (("-v", "loud"), ("-q", "quiet")):
            result = CliRunner().invoke(
                main,
                [
                    "predict",
                    flag,
                    "--data",
                    str(data),
                    "--model",
                    server.model,
                    "--base-url",
                    server.base_url,
                    "--out",
                    str(tmp_path / out),
                ],
            )
            assert result.exit_code == 0, result.output
            assert ("HTTP Request: POST" in result.stderr) is (flag == "-v")
            assert "1 done" in result.stdout
