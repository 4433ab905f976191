"""The endpoint option group (commands/endpoint_options.py): judge, annotator and coverage evaluator
options reach the library as one JudgeOptions, with the library's defaults."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import longbench100.analysis.coverage.run as coverage_run
import longbench100.generate.run as generate_run
import longbench100.scoring.run as score_run
from longbench100.cli import main
from longbench100.llm.options import JudgeOptions

SCORE_ARGS = ["score", "--data", "data", "--predictions", "predictions", "--out", "results.json"]
GENERATE_ARGS = ["generate", "--tasks", "kv_retrieval", "--out", "out"]
COVERAGE_ARGS = ["coverage", "--data", "data"]


def _received(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> JudgeOptions:
    """Run a command with its library call replaced; return the endpoint options it received."""
    seen: list[Any] = []

    def record(field: str) -> Any:
        def run(options: Any, **_: Any) -> None:
            seen.append(getattr(options, field))
            raise SystemExit(0)  # stop here: the command's work after the call is not under test

        return run

    monkeypatch.setattr(
        score_run, "run_score", record("judge")
    )  # where each command imports it from
    monkeypatch.setattr(generate_run, "run_generate", record("annotator"))
    monkeypatch.setattr(coverage_run, "run_coverage", record("evaluator"))
    result = CliRunner().invoke(main, args)
    assert seen, result.output
    return seen[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (SCORE_ARGS, JudgeOptions()),
        (GENERATE_ARGS, JudgeOptions.for_annotator(None)),
        (COVERAGE_ARGS, JudgeOptions(max_tokens=400)),
    ],
)
def test_defaults_are_the_roles_library_defaults(
    monkeypatch: pytest.MonkeyPatch, args: list[str], expected: JudgeOptions
) -> None:
    """Without endpoint options each command passes its role's defaults (no model)."""
    assert _received(monkeypatch, args) == expected


@pytest.mark.parametrize(
    ("args", "role"),
    [
        (SCORE_ARGS, "judge"),
        (GENERATE_ARGS, "annotator"),
        (COVERAGE_ARGS, "evaluator"),
    ],
)
def test_given_values_reach_the_library(
    monkeypatch: pytest.MonkeyPatch, args: list[str], role: str
) -> None:
    """Every option of the group lands in its own JudgeOptions field."""
    given = [
        f"--{role}-model",
        "m1",
        f"--{role}-base-url",
        "http://127.0.0.1:9/v1",
        f"--{role}-api-key-env",
        "MY_KEY",
        f"--{role}-concurrency",
        "3",
        f"--{role}-max-tokens",
        "77",
    ]
    penalty = ([f"--{role}-loop-penalty", "0.5"], 0.5) if role == "annotator" else ([], 0.0)
    received = _received(monkeypatch, args + given + penalty[0])
    assert received == JudgeOptions("m1", "http://127.0.0.1:9/v1", "MY_KEY", 3, 77, penalty[1])


def test_an_empty_model_name_is_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--judge-model ''`` means no judge, as leaving it out does."""
    assert _received(monkeypatch, [*SCORE_ARGS, "--judge-model", ""]).model is None


@pytest.mark.parametrize(
    ("command", "role", "extra"),
    [
        ("score", "judge", []),
        ("filter", "judge", []),
        ("generate", "annotator", ["loop-penalty"]),
        ("coverage", "evaluator", []),
    ],
)
def test_each_command_offers_its_roles_options(command: str, role: str, extra: list[str]) -> None:
    """The same five options (and the annotator's loop penalty) under the role's prefix, in order."""
    help_text = CliRunner().invoke(main, [command, "--help"], terminal_width=200).output
    names = ["model", "base-url", "api-key-env", "concurrency", "max-tokens", *extra]
    positions = [help_text.find(f"--{role}-{name} ") for name in names]
    assert -1 not in positions and positions == sorted(positions), help_text


def test_out_of_range_values_are_refused() -> None:
    """A concurrency under 1 is a usage error, not a crash."""
    result = CliRunner().invoke(main, [*COVERAGE_ARGS, "--evaluator-concurrency", "0"])
    assert result.exit_code == 2 and "--evaluator-concurrency" in result.output
