"""A fuzzer over every input a reading command takes: valid data, prediction, results and snapshot
files, mutated at random, fed to the commands that read them (in-process, through the CLI).

Whatever the mutation, a command never raises an uncaught exception (a traceback), never changes its
inputs, and exits non-zero whenever the input no longer matches its manifest (data and snapshot
files, whose sha256 the manifests record) or is no longer valid JSON. Mutations: bytes flipped,
inserted or cut, a line dropped or doubled, and JSON values replaced by values of other types.
Hypothesis draws them from a fixed seed, so a run is repeatable; the whole file takes seconds.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from click.testing import CliRunner  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st

from longbench100.cli import main  # noqa: E402
from tests.support.generate_helpers import generate_from_demo

TASKS = ("kv_retrieval", "single_doc_qa")
ODD_VALUES = [
    None,
    [],
    {},
    42,
    -1,
    0,
    1.5e308,
    "",
    "4k",
    True,
    [None],
    {"": None},
    "\u0000",
    [[[[]]]],
]
FUZZ = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder, right predictions, their results.json and a published snapshot, under one
    root."""
    root = tmp_path_factory.mktemp("fuzz")
    data = root / "data"
    generate_from_demo(data, TASKS, (("2k", 2048),), rows=2)
    for path in sorted(data.glob("*/*.jsonl")):
        target = root / "predictions" / path.relative_to(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        target.write_text(
            "".join(json.dumps({"id": r["id"], "prediction": r["answers"][0]}) + "\n" for r in rows)
        )
    for args in (
        [
            "score",
            "--data",
            data,
            "--predictions",
            root / "predictions",
            "--out",
            root / "results.json",
        ],
        ["publish", "--data", data, "--out", root / "snapshot", "--quiet"],
    ):
        result = CliRunner().invoke(main, [str(arg) for arg in args])
        assert result.exit_code == 0, result.output
    return root


def _mutate_json(value: object, path: list, replacement: object) -> object:
    """``value`` with the node reached by following ``path`` (indices taken modulo each container's
    size) replaced."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return replacement
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[key] = _mutate_json(value[key], path[1:], replacement)
    return copy


@st.composite
def mutations(draw: st.DrawFn, lines_are_records: bool) -> tuple[str, object]:
    """One mutation: how it changes a file's bytes, as a name and a function of the bytes."""
    kind = draw(
        st.sampled_from(
            ["flip", "insert", "cut", "json"]
            + (["drop line", "double line"] if lines_are_records else [])
        )
    )
    where, count = draw(st.integers(0, 10**9)), draw(st.integers(1, 8))
    junk = draw(st.binary(min_size=1, max_size=8))
    path = draw(st.lists(st.integers(0, 50), min_size=0, max_size=6))
    replacement = draw(st.sampled_from(ODD_VALUES))

    def apply(raw: bytes) -> bytes:
        at = where % max(len(raw), 1)
        if kind == "flip":
            return raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :] if raw else b"\xff"
        if kind == "insert":
            return raw[:at] + junk + raw[at:]
        if kind == "cut":
            return raw[:at] + raw[at + count :]
        lines = raw.splitlines(keepends=True)
        if kind in ("drop line", "double line"):
            index = where % max(len(lines), 1)
            kept = (
                lines[:index]
                + ([lines[index]] * 2 if kind == "double line" and lines else [])
                + lines[index + 1 :]
            )
            return b"".join(kept)
        if lines_are_records:
            index = where % len(lines)
            lines[index] = (
                json.dumps(_mutate_json(json.loads(lines[index]), path, replacement)).encode()
                + b"\n"
            )
            return b"".join(lines)
        return json.dumps(_mutate_json(json.loads(raw), path, replacement)).encode()

    return kind, apply


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _run(root: Path, *args: object) -> int:
    """Run one command in-process; assert it ended as the CLI ends (an exit code, never an uncaught
    exception)."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        result.output,
        result.exc_info,
    )
    assert "Traceback" not in result.output, result.output
    if result.exit_code != 0:
        assert [line.startswith("error:") for line in result.output.splitlines()].count(
            True
        ) == 1, result.output
    return result.exit_code


def _fuzz(world: Path, target: str, mutation: tuple[str, object], commands, must_fail) -> None:
    """Copy the world, mutate ``target``, run every command on it and check the three promises."""
    kind, apply = mutation
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "w"
        shutil.copytree(world, root)
        out = Path(temp) / "out"
        original = (root / target).read_bytes()
        try:
            mutated = apply(original)
        except (ValueError, IndexError):
            return  # a JSON mutation of bytes that are not one JSON value: nothing to try
        (root / target).write_bytes(mutated)
        before = _files(root)
        for args in commands(root, out):
            code = _run(root, *args)
            if mutated != original and must_fail(mutated):
                assert code != 0, (target, kind, args)
        assert _files(root) == before, (target, kind)


def _not_json_lines(raw: bytes) -> bool:
    try:
        for line in raw.splitlines():
            if line.strip() and not isinstance(json.loads(line), dict):
                return True
    except ValueError:
        return True
    return False


def _not_json_object(raw: bytes) -> bool:
    try:
        return not isinstance(json.loads(raw), dict)
    except ValueError:
        return True


def _data_readers(root: Path, out: Path) -> list[list]:
    data = root / "data"
    return [
        ["inspect", data],
        ["score", "--data", data, "--predictions", root / "predictions", "--out", out / "r.json"],
        ["baselines", data],
        ["coverage", "--data", data],
        ["export", "lm-eval", data, out / "e"],
    ]


@FUZZ
@given(mutation=mutations(lines_are_records=True), task=st.sampled_from(TASKS))
def test_mutated_data_files_are_refused(world: Path, mutation, task: str):
    _fuzz(
        world, f"data/{task}/2k.jsonl", mutation, _data_readers, must_fail=lambda raw: True
    )  # sha256 differs


@FUZZ
@given(mutation=mutations(lines_are_records=False))
def test_a_mutated_data_manifest_never_crashes(world: Path, mutation):
    _fuzz(world, "data/manifest.json", mutation, _data_readers, must_fail=_not_json_object)


@FUZZ
@given(mutation=mutations(lines_are_records=True), task=st.sampled_from(TASKS))
def test_mutated_predictions_never_crash(world: Path, mutation, task: str):
    def commands(root: Path, out: Path) -> list[list]:
        return [
            [
                "score",
                "--data",
                root / "data",
                "--predictions",
                root / "predictions",
                "--out",
                out / "r.json",
            ]
        ]

    _fuzz(world, f"predictions/{task}/2k.jsonl", mutation, commands, must_fail=_not_json_lines)


@FUZZ
@given(mutation=mutations(lines_are_records=False))
def test_mutated_results_never_crash(world: Path, mutation):
    def commands(root: Path, out: Path) -> list[list]:
        return [
            ["report", root / "results.json", "--out", out / "rep", "--n-boot", "0"],
            ["show", root / "results.json", "--id", "kv_retrieval-2k-0000"],
        ]

    _fuzz(world, "results.json", mutation, commands, must_fail=_not_json_object)


@FUZZ
@given(mutation=mutations(lines_are_records=False), which=st.integers(0, 100))
def test_mutated_snapshot_files_are_refused(world: Path, mutation, which: int):
    names = sorted(
        path.relative_to(world).as_posix()
        for path in (world / "snapshot").rglob("*")
        if path.is_file() and path.name != "manifest.json" and not path.name.startswith(".")
    )
    target = names[which % len(names)]

    def commands(root: Path, out: Path) -> list[list]:
        return [
            ["verify-snapshot", root / "snapshot"],
            ["verify-snapshot", root / "snapshot", "--unpack-to", out / "u"],
        ]

    _fuzz(world, target, mutation, commands, must_fail=lambda raw: True)  # its sha256 is listed


@FUZZ
@given(mutation=mutations(lines_are_records=False))
def test_a_mutated_snapshot_manifest_never_crashes(world: Path, mutation):
    def commands(root: Path, out: Path) -> list[list]:
        return [["verify-snapshot", root / "snapshot"]]

    _fuzz(world, "snapshot/manifest.json", mutation, commands, must_fail=_not_json_object)
