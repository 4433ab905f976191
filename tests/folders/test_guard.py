"""No command writes onto its own input, into a folder of another kind, or crashes on a bad output path.

Every case asserts the exit code, one ``error:`` line without a traceback, and that every input is
byte-identical afterwards. The sweep at the end runs every command of the CLI that writes against
the same bad output places; a command missing from its table fails the test, so none can forget.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import COMMANDS, main
from longbench100.folders.guard import KIND_FILE, folder_kind
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from tests.support.openai_stub import OpenAIStub

TASKS = ("kv_retrieval", "single_doc_qa")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    return result.exit_code, result.output


def snapshot_of(*paths: Path) -> dict[str, bytes]:
    """Every file under the given paths (hidden ones too), by path: to prove nothing changed."""
    files: dict[str, bytes] = {}
    for path in paths:
        for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
            files[str(file)] = file.read_bytes()
    return files


def assert_refused(code: int, output: str, *needles: str) -> None:
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in output, output
    assert all(needle in errors[0] for needle in needles), errors[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A data folder, predictions for it, results, probes and a Dolce fit: the inputs of every command."""
    root = tmp_path_factory.mktemp("guard")
    data = root / "data"
    run_generate(
        GenerateOptions(
            tasks=TASKS,
            lengths=(("2k", 2048),),
            rows=2,
            seed=1,
            tokenizer="cl100k_base",
            out=data,
            sources="demo",
            workers=1,
        ),
        echo=lambda _: None,
        progress=False,
    )
    predictions = root / "predictions"
    for path in sorted(data.glob("*/*.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        target = predictions / path.relative_to(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            "".join(
                json.dumps(
                    {"id": r["id"], "prediction": r["answers"][0], "closed_book_prediction": "no"}
                )
                + "\n"
                for r in records
            )
        )
    results = root / "results.json"
    assert invoke("score", "--data", data, "--predictions", predictions, "--out", results)[0] == 0
    probes = root / "probes"
    assert (
        invoke("dolce", "probes", "--data", data, "--out", probes, "--windows", "0,1,all")[0] == 0
    )
    fit = root / "dolce.json"
    assert invoke("dolce", "fit", "--probes", probes, "--oracle", "--out", fit)[0] == 0
    snapshot = root / "snapshot"
    assert invoke("publish", "--data", data, "--out", snapshot, "--quiet")[0] == 0
    return {
        "root": root,
        "data": data,
        "predictions": predictions,
        "results": results,
        "probes": probes,
        "fit": fit,
        "snapshot": snapshot,
    }


def test_folders_say_what_they_are(world: dict[str, Path]):
    assert (world["data"] / KIND_FILE).read_text().strip() == "data" and folder_kind(
        world["data"]
    ) == "data"
    assert folder_kind(world["probes"]) == "probes" and folder_kind(world["snapshot"]) == "snapshot"
    assert (
        folder_kind(world["predictions"]) == "predictions"
    )  # no marker (written by hand): known by its records
    (world["root"] / "other").mkdir(exist_ok=True)
    assert folder_kind(world["root"] / "other") is None


def test_predict_into_its_own_data_folder_is_refused_and_the_data_kept(
    world: dict[str, Path], tmp_path: Path
):
    """The data-loss bug: predict --out onto a copy of the data folder overwrote data records."""
    import shutil

    copy = tmp_path / "pself"
    shutil.copytree(world["data"], copy)
    before = snapshot_of(copy)
    with OpenAIStub(lambda body: "7") as server:
        code, output = invoke(
            "predict",
            "--data",
            copy,
            "--model",
            server.model,
            "--base-url",
            server.base_url,
            "--out",
            copy,
            "--limit",
            "1",
        )
        assert not server.requests
    assert_refused(code, output, "--out", "is the input --data")
    assert snapshot_of(copy) == before
    with OpenAIStub(lambda body: "7") as server:  # another data folder is refused by its kind
        code, output = invoke(
            "predict",
            "--data",
            world["data"],
            "--model",
            server.model,
            "--base-url",
            server.base_url,
            "--out",
            copy,
        )
    assert_refused(code, output, "is a data folder, not a predictions folder")
    assert snapshot_of(copy) == before


@pytest.mark.parametrize(
    "case",
    [
        "score onto a data file",
        "score onto its predictions",
        "coverage onto the manifest",
        "dolce fit onto the probes manifest",
        "filter into the data",
        "export into the data",
        "report into the data",
        "generate into predictions",
        "publish into the data",
        "unpack into the snapshot",
        "dolce report into probes",
        "score into a snapshot",
    ],
)
def test_no_command_writes_onto_its_inputs(world: dict[str, Path], case: str):
    data, predictions, probes = world["data"], world["predictions"], world["probes"]
    data_file = next(iter(sorted(data.glob("*/*.jsonl"))))
    prediction_file = next(iter(sorted(predictions.glob("*/*.jsonl"))))
    commands = {
        "score onto a data file": (
            ["score", "--data", data, "--predictions", predictions, "--out", data_file],
            "lies inside the input --data",
        ),
        "score onto its predictions": (
            ["score", "--data", data, "--predictions", prediction_file, "--out", prediction_file],
            "is the input --predictions",
        ),
        "coverage onto the manifest": (
            ["coverage", "--data", data, "--out", data / "manifest.json"],
            "lies inside the input --data",
        ),
        "dolce fit onto the probes manifest": (
            ["dolce", "fit", "--probes", probes, "--oracle", "--out", probes / "manifest.json"],
            "lies inside the input --probes",
        ),
        "filter into the data": (
            ["filter", "--data", data, "--predictions", predictions, "--out", data],
            "is the input --data",
        ),
        "export into the data": (
            ["export", "lm-eval", data, data / "lm"],
            "lies inside the input DATA",
        ),
        "report into the data": (
            ["report", world["results"], "--out", data],
            "is a data folder, not a report folder",
        ),
        "generate into predictions": (
            [
                "generate",
                "--sources",
                "demo",
                "--lengths",
                "2k",
                "--rows",
                "1",
                "--out",
                predictions,
            ],
            "is a predictions folder",
        ),
        "publish into the data": (
            ["publish", "--data", data, "--out", data],
            "is the input --data",
        ),
        "unpack into the snapshot": (
            ["verify-snapshot", world["snapshot"], "--unpack-to", world["snapshot"]],
            "is the input SNAPSHOT",
        ),
        "dolce report into probes": (
            ["dolce", "report", world["fit"], "--out", probes],
            "is a Dolce probe folder",
        ),
        "score into a snapshot": (
            [
                "score",
                "--data",
                data,
                "--predictions",
                predictions,
                "--out",
                world["snapshot"] / "r.json",
            ],
            "lies inside a dataset snapshot",
        ),
    }
    args, message = commands[case]
    before = snapshot_of(world["data"], world["predictions"], world["probes"], world["snapshot"])
    assert_refused(*invoke(*args), message)
    assert (
        snapshot_of(world["data"], world["predictions"], world["probes"], world["snapshot"])
        == before
    )


# Every command of the CLI: how to make it write to OUT ({out}), or None for commands that write nothing.
WRITERS = {
    "generate": lambda w, out: [
        "generate",
        "--sources",
        "demo",
        "--lengths",
        "2k",
        "--rows",
        "1",
        "--out",
        out,
    ],
    "predict": lambda w, out: [
        "predict",
        "--data",
        w["data"],
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        out,
    ],
    "score": lambda w, out: [
        "score",
        "--data",
        w["data"],
        "--predictions",
        w["predictions"],
        "--out",
        out,
    ],
    "filter": lambda w, out: [
        "filter",
        "--data",
        w["data"],
        "--predictions",
        w["predictions"],
        "--out",
        out,
    ],
    "report": lambda w, out: ["report", w["results"], "--out", out],
    "coverage": lambda w, out: ["coverage", "--data", w["data"], "--out", out],
    "dolce probes": lambda w, out: ["dolce", "probes", "--data", w["data"], "--out", out],
    "dolce fit": lambda w, out: ["dolce", "fit", "--probes", w["probes"], "--oracle", "--out", out],
    "dolce report": lambda w, out: ["dolce", "report", w["fit"], "--out", out],
    "export lm-eval": lambda w, out: ["export", "lm-eval", w["data"], out],
    "baselines": lambda w, out: ["baselines", w["data"], "--out", out],
    "publish": lambda w, out: ["publish", "--data", w["data"], "--out", out],
    "verify-snapshot": lambda w, out: ["verify-snapshot", w["snapshot"], "--unpack-to", out],
}
READERS = {
    "sources",
    "suites",
    "inspect",
    "show",
}  # print only (sources verify fills the cache: tested in test_robustness)
GROUPS = {"dolce": ("probes", "fit", "report"), "export": ("lm-eval",)}


def test_the_sweep_covers_every_command():
    listed = set()
    for name in COMMANDS:
        listed |= {f"{name} {sub}" for sub in GROUPS[name]} if name in GROUPS else {name}
    assert listed == set(WRITERS) | READERS
    from longbench100.commands.dolce import dolce
    from longbench100.commands.export import export

    assert set(dolce.commands) == set(GROUPS["dolce"]) and set(export.commands) == set(
        GROUPS["export"]
    )


@pytest.mark.parametrize("command", sorted(WRITERS))
@pytest.mark.parametrize("place", ["under a file", "proc", "read-only"])
def test_every_writer_refuses_a_bad_output_place_in_one_line(
    world: dict[str, Path], command: str, place: str, request: pytest.FixtureRequest, tmp_path: Path
):
    if place == "under a file":
        (tmp_path / "a-file").write_text("x")
        out = tmp_path / "a-file" / "out"
    elif place == "proc":
        out = Path("/proc/longbench100-out")
    else:
        out = request.getfixturevalue("read_only_dir") / "out"
    if command in ("score", "coverage", "dolce fit", "baselines"):
        out = out.with_suffix(".json")
    before = snapshot_of(world["data"], world["predictions"], world["probes"])
    code, output = invoke(*WRITERS[command](world, out))
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code != 0 and len(errors) == 1 and "Traceback" not in output, output
    assert snapshot_of(world["data"], world["predictions"], world["probes"]) == before


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["generate", "--sources", "demo", "--lengths", "", "--out", "{tmp}/g"],
            "no lengths given",
        ),
        (
            ["generate", "--sources", "demo", "--tasks", "all,kv_retrieval", "--out", "{tmp}/g"],
            "'all' stands alone",
        ),
        (
            ["generate", "--sources", "{tmp}/a-file", "--lengths", "2k", "--out", "{tmp}/g"],
            "--sources {tmp}/a-file: is a file",
        ),
        (["sources", "verify", "--sources", "{tmp}/empty"], "no registered source is in mirror"),
        (
            [
                "score",
                "--data",
                "{data}",
                "--predictions",
                "{predictions}",
                "--base-lengths",
                "99k",
                "--out",
                "{tmp}/r.json",
            ],
            "--base-lengths 99k: the data has no rows at any of them",
        ),
    ],
)
def test_small_mistakes_are_one_line_errors(
    world: dict[str, Path], tmp_path: Path, args: list[str], message: str
):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "empty").mkdir()
    filled = [
        arg.format(tmp=tmp_path, data=world["data"], predictions=world["predictions"])
        for arg in args
    ]
    code, output = invoke(*filled)
    assert_refused(code, output, message.format(tmp=tmp_path))
    assert not (tmp_path / "g").exists() and not (tmp_path / "r.json").exists()


def test_the_sources_variable_is_named_as_such(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("LONGBENCH100_SOURCES", str(tmp_path / "nowhere"))
    assert_refused(
        *invoke("generate", "--lengths", "2k", "--out", tmp_path / "g"),
        f"LONGBENCH100_SOURCES {tmp_path / 'nowhere'}: no such folder",
    )


def test_suites_list_and_only_base_lengths_say_so(tmp_path: Path):
    code, output = invoke("suites", "list")
    assert code == 0 and output.startswith("100-longbench: ")
    code, output = invoke(
        "generate",
        "--suite",
        "helmet-recall",
        "--sources",
        "demo",
        "--lengths",
        "8k,16k",
        "--rows",
        "1",
        "--out",
        tmp_path / "g",
        "--quiet",
    )
    assert code == 0 and "every generated length (8k, 16k) is a base length" in output


def test_an_empty_source_file_is_named(mirror: Path, tmp_path: Path):
    import shutil

    copy = tmp_path / "mirror"
    shutil.copytree(mirror, copy)
    target = next(path for path in sorted(copy.rglob("*.jsonl")) if path.stat().st_size)
    target.write_bytes(b"")
    code, output = invoke("sources", "verify", "--sources", copy)
    assert code == 1 and "holds no rows (0 bytes)" in output


def test_a_killed_publish_leaves_nothing_behind(world: dict[str, Path], tmp_path: Path):
    stale = tmp_path / ".snap.abc123.partial"
    (stale / "data").mkdir(parents=True)
    (stale / "data" / "x.parquet").write_bytes(b"half")
    code, output = invoke("publish", "--data", world["data"], "--out", tmp_path / "snap", "--quiet")
    assert code == 0 and f"removed {stale}" in output and not stale.exists()


@pytest.mark.parametrize(
    "case",
    [
        "report onto its own input",
        "report --html onto its own input",
        "score onto a user file",
        "coverage onto a user file",
        "report into a user folder",
        "export into a user folder",
    ],
)
def test_no_command_replaces_a_file_it_did_not_write(
    world: dict[str, Path], tmp_path: Path, case: str
):
    """Issue 47's data loss: a report written over its own input, results over a user's notes, a
    report into a user's folder that held a report.md and a plot of their own."""
    user = tmp_path / "user"
    user.mkdir()
    (user / "report.md").write_text("my notes\n")
    (user / "score_vs_length.png").write_bytes(b"my plot")
    own_input = tmp_path / "R" / "report.md"
    own_input.parent.mkdir()
    own_input.write_bytes(world["results"].read_bytes())
    commands = {
        "report onto its own input": (
            ["report", own_input, "--out", own_input.parent],
            "holds the input RESULTS",
        ),
        "report --html onto its own input": (
            ["report", own_input, "--out", own_input.parent, "--html"],
            "holds the input",
        ),
        "score onto a user file": (
            [
                "score",
                "--data",
                world["data"],
                "--predictions",
                world["predictions"],
                "--out",
                user / "report.md",
            ],
            "exists and is not a results file",
        ),
        "coverage onto a user file": (
            ["coverage", "--data", world["data"], "--out", user / "report.md"],
            "exists and is not a coverage report",
        ),
        "report into a user folder": (
            ["report", world["results"], "--out", user],
            "non-empty folder",
        ),
        "export into a user folder": (
            ["export", "lm-eval", world["data"], user],
            "non-empty folder",
        ),
    }
    args, message = commands[case]
    before = snapshot_of(tmp_path, world["data"], world["results"])
    assert_refused(*invoke(*args), message)
    assert snapshot_of(tmp_path, world["data"], world["results"]) == before


def test_an_earlier_output_of_the_same_kind_is_replaced(world: dict[str, Path], tmp_path: Path):
    results = tmp_path / "results.json"
    results.write_bytes(world["results"].read_bytes())
    code, output = invoke(
        "score", "--data", world["data"], "--predictions", world["predictions"], "--out", results
    )
    assert code == 0, output
    assert invoke("report", results, "--out", tmp_path / "rep")[0] == 0
    assert (
        invoke("report", results, "--out", tmp_path / "rep")[0] == 0
    )  # its own marked folder again
