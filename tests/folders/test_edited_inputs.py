"""Inputs edited or broken after they were written are refused in one line, never read as if they
were whole.

The cases of issue 47, each run through the CLI as a user would: data edited after generation (every
reading command compares its files with the manifest's sha256), lines that are not UTF-8, not JSON
or of the wrong type, a manifest of the wrong shape, predictions that are not UTF-8, results.json
edited by hand, and a filter run that dies half-way. Each asserts the exit code, one ``error:`` line
naming the file, and that every input is byte-identical afterwards.
"""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.layout import sealed_manifest
from tests.support.generate_helpers import assert_one_line_error, generate_from_demo, reseal
from tests.support.openai_stub import OpenAIStub

TASKS = ("kv_retrieval", "single_doc_qa")


def invoke(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    return result.exit_code, result.output


def files_of(*paths: Path) -> dict[str, bytes]:
    """Every file under the given paths, by path: to prove nothing changed."""
    return {
        str(file): file.read_bytes()
        for path in paths
        for file in (
            [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        )
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A generated data folder, predictions that answer it right, and their results.json."""
    root = tmp_path_factory.mktemp("edited")
    data = root / "data"
    generate_from_demo(data, TASKS, (("2k", 2048),), rows=2)
    predictions = root / "predictions"
    for path in sorted(data.glob("*/*.jsonl")):
        target = predictions / path.relative_to(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        target.write_text(
            "".join(json.dumps({"id": r["id"], "prediction": r["answers"][0]}) + "\n" for r in rows)
        )
    results = root / "results.json"
    assert invoke("score", "--data", data, "--predictions", predictions, "--out", results)[0] == 0
    return {"root": root, "data": data, "predictions": predictions, "results": results}


def edited_copy(world: dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the data folder whose kv_retrieval answers were all set to "42" after
    generation."""
    data = tmp_path / "edited"
    shutil.copytree(world["data"], data)
    path = data / "kv_retrieval" / "2k.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**row, "answers": ["42"]}) + "\n" for row in rows))
    return data


READERS = {
    "inspect": lambda w, d, t: ["inspect", d],
    "score": lambda w, d, t: [
        "score",
        "--data",
        d,
        "--predictions",
        w["predictions"],
        "--out",
        t / "r.json",
    ],
    "filter": lambda w, d, t: [
        "filter",
        "--data",
        d,
        "--predictions",
        w["predictions"],
        "--out",
        t / "f",
    ],
    "baselines": lambda w, d, t: ["baselines", d],
    "export lm-eval": lambda w, d, t: ["export", "lm-eval", d, t / "e"],
    "coverage": lambda w, d, t: ["coverage", "--data", d],
    "dolce probes": lambda w, d, t: ["dolce", "probes", "--data", d, "--out", t / "p"],
    "report --data": lambda w, d, t: ["report", w["results"], "--data", d, "--out", t / "rep"],
    "publish": lambda w, d, t: ["publish", "--data", d, "--out", t / "snap"],
}


@pytest.mark.parametrize("command", sorted(READERS))
def test_data_edited_after_generation_is_refused_by_every_reader(
    world: dict[str, Path], tmp_path: Path, command: str
):
    data = edited_copy(world, tmp_path)
    before = files_of(data, world["predictions"], world["results"])
    assert_one_line_error(
        *invoke(*READERS[command](world, data, tmp_path)),
        "kv_retrieval/2k.jsonl differs from manifest.json",
    )
    assert files_of(data, world["predictions"], world["results"]) == before
    assert not any((tmp_path / name).exists() for name in ("r.json", "f", "e", "p", "rep", "snap"))


def test_predict_refuses_edited_data_before_any_request(world: dict[str, Path], tmp_path: Path):
    data = edited_copy(world, tmp_path)
    before = files_of(data)
    with OpenAIStub(lambda body: "7") as server:
        code, output = invoke(
            "predict",
            "--data",
            data,
            "--model",
            server.model,
            "--base-url",
            server.base_url,
            "--out",
            tmp_path / "pred",
        )
        assert not server.bodies
    assert_one_line_error(code, output, "differs from manifest.json")
    assert files_of(data) == before


def _set_first_record(data: Path, change) -> Path:
    """Replace the first line of kv_retrieval/2k.jsonl by ``change(record)`` (bytes or a JSON
    value), resealed."""
    path = data / "kv_retrieval" / "2k.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    new = change(json.loads(lines[0]))
    lines[0] = new if isinstance(new, bytes) else json.dumps(new).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    reseal(data)
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: b'\xff\xfe{"id": 1}\n', ":1: not valid UTF-8"),
        (lambda r: b'{"id": \n', ":1: not valid JSON"),
        (lambda r: None, ":1: the content must be an object, not null"),
        (lambda r: [], ":1: the content must be an object, not a list"),
        (lambda r: 42, ":1: the content must be an object, not an integer"),
        (lambda r: {**r, "length": "4k"}, ":1: length must be an integer, not a string"),
        (
            lambda r: {**r, "prompt_tokens": "12"},
            ":1: prompt_tokens must be an integer, not a string",
        ),
        (lambda r: {**r, "id": ["a"]}, ":1: id must be a string, not a list"),
    ],
)
@pytest.mark.parametrize(
    "command", ["inspect", "score", "baselines", "export lm-eval", "filter", "coverage"]
)
def test_broken_lines_name_file_and_line(
    world: dict[str, Path], tmp_path: Path, change, message: str, command: str
):
    data = tmp_path / "data"
    shutil.copytree(world["data"], data)
    path = _set_first_record(data, change)
    before = files_of(data, world["predictions"])
    assert_one_line_error(*invoke(*READERS[command](world, data, tmp_path)), f"{path}{message}")
    assert files_of(data, world["predictions"]) == before


RECORD_FAULTS = [
    (
        lambda r: {**r, "task": "passage_count"},
        ":1: a passage_count 2k record in kv_retrieval/",
    ),
    (lambda r: {**r, "label": "4k"}, ":1: a kv_retrieval 4k record in kv_retrieval/2k.jsonl"),
    (lambda r: {**r, "gold": 5}, ":1: gold must be"),
    (lambda r: {**r, "answers": "42"}, ":1: answers must be a list"),
    (lambda r: {k: v for k, v in r.items() if k != "answers"}, ":1: answers is missing"),
    (lambda r: {**r, "id": "kv_retrieval-2k-0001"}, "duplicate id 'kv_retrieval-2k-0001'"),
]
"""Records out of their file's task or length, of the wrong shape, or with an id seen before:
every reader of a data folder refuses them."""
NO_ANSWERS = (lambda r: {**r, "answers": []}, ":1: answers must be a non-empty list")
"""Refused by the readers that grade answers (inspect only summarises prompts)."""
GRADING_READERS = ["score", "baselines", "coverage"]


@pytest.mark.parametrize(
    ("command", "change", "message"),
    [
        *[
            (command, *fault)
            for command in [*GRADING_READERS, "inspect"]
            for fault in RECORD_FAULTS
        ],
        *[(command, *NO_ANSWERS) for command in GRADING_READERS],
    ],
)
def test_a_record_out_of_place_or_of_the_wrong_shape_is_one_line(
    world: dict[str, Path], tmp_path: Path, change, message: str, command: str
):
    data = tmp_path / "data"
    shutil.copytree(world["data"], data)
    path = _set_first_record(data, change)
    before = files_of(data, world["predictions"])
    assert_one_line_error(*invoke(*READERS[command](world, data, tmp_path)), str(path), message)
    assert files_of(data, world["predictions"]) == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: [m], "manifest.json: the content must be an object, not a list"),
        (
            lambda m: {
                **m,
                "tasks": {
                    **m["tasks"],
                    "kv_retrieval": {
                        **m["tasks"]["kv_retrieval"],
                        "lengths": {
                            "2k": {
                                key: value
                                for key, value in m["tasks"]["kv_retrieval"]["lengths"][
                                    "2k"
                                ].items()
                                if key != "reused_rows"
                            }
                        },
                    },
                },
            },
            "manifest.json: tasks.kv_retrieval.lengths.2k.reused_rows is missing",
        ),
        (
            lambda m: {key: value for key, value in m.items() if key != "files"},
            "manifest.json: files is missing",
        ),
        (
            lambda m: {**m, "files": {**m["files"], "kv_retrieval/2k.jsonl": {"sha256": 7}}},
            "manifest.json: files.kv_retrieval/2k.jsonl.sha256 must be a string, not an integer",
        ),
    ],
)
@pytest.mark.parametrize("command", ["inspect", "score", "coverage"])
def test_a_manifest_of_the_wrong_shape_is_one_line(
    world: dict[str, Path], tmp_path: Path, change, message: str, command: str
):
    data = tmp_path / "data"
    shutil.copytree(world["data"], data)
    manifest = data / "manifest.json"
    manifest.write_text(json.dumps(change(json.loads(manifest.read_text()))))
    before = files_of(data)
    assert_one_line_error(*invoke(*READERS[command](world, data, tmp_path)), message)
    assert files_of(data) == before


def test_predictions_that_are_not_utf8_are_one_line(world: dict[str, Path], tmp_path: Path):
    predictions = tmp_path / "p"
    shutil.copytree(world["predictions"], predictions)
    path = predictions / "kv_retrieval" / "2k.jsonl"
    path.write_bytes(path.read_bytes() + b"\xff\xfe\n")
    before = files_of(predictions)
    code, output = invoke(
        "score", "--data", world["data"], "--predictions", predictions, "--out", tmp_path / "r.json"
    )
    assert_one_line_error(code, output, f"{path}:3: not valid UTF-8")
    assert files_of(predictions) == before and not (tmp_path / "r.json").exists()


def _edited_results(world: dict[str, Path], tmp_path: Path, change) -> Path:
    data = json.loads(world["results"].read_text())
    change(data)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "message", "show_too"),
    [
        (
            lambda d: d["aggregates"]["tasks"]["kv_retrieval"].update(base_ability=99.9),
            "aggregates.tasks.kv_retrieval.base_ability is 99.9 but its samples give",
            False,
        ),
        (
            lambda d: d["aggregates"]["overall"]["lengths"]["2k"].update(lc=3.0),
            "aggregates.overall.lengths.2k.lc is 3.0",
            False,
        ),
        (lambda d: d.update(model={}), "model must be a string, not an object", True),
        (
            lambda d: d.update(schema="longbench100.results/999"),
            "schema 'longbench100.results/999' is not one",
            True,
        ),
        (
            lambda d: d.update(longbench100_version="9.9.9"),
            "written by longbench100 9.9.9, newer than this",
            True,
        ),
        (
            lambda d: d["samples"][0].update(score="1.0"),
            "samples[0].score must be a number or null, not a string",
            True,
        ),
        (lambda d: d["aggregates"].pop("overall"), "aggregates.overall is missing", False),
        (
            lambda d: d["aggregates"]["tasks"]["kv_retrieval"].pop("avg_lc"),
            "avg_lc is missing",
            False,
        ),
    ],
)
def test_results_edited_by_hand_are_refused(
    world: dict[str, Path], tmp_path: Path, change, message: str, show_too: bool
):
    path = _edited_results(world, tmp_path, change)
    before = files_of(path)
    assert_one_line_error(*invoke("report", path, "--out", tmp_path / "rep"), f"{path}: ", message)
    assert not (tmp_path / "rep").exists()
    code, output = invoke("show", path, "--id", "kv_retrieval-2k-0000")
    if show_too:
        assert_one_line_error(code, output, f"{path}: ", message)
    else:
        assert code == 0, output  # show prints samples, not the aggregates
    assert files_of(path) == before


def test_a_filter_that_dies_half_way_leaves_nothing_and_a_rerun_works(
    world: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Issue 47: a crash at a file boundary left 3 of 8 tasks that inspect and predict read; a full
    disk left a folder a rerun refused."""
    from longbench100.scoring.qa_filter import filtered_folder

    out = tmp_path / "filtered"

    def fills_up(*args, **kwargs):  # the last write: every data file is copied by then
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(filtered_folder, "write_json_atomic", fills_up)
    args = ["filter", "--data", world["data"], "--predictions", world["predictions"], "--out", out]
    before = files_of(world["data"], world["predictions"])
    assert_one_line_error(
        *invoke(*args), f"--out {out}: cannot write the filtered copy (No space left on device)"
    )
    assert not out.exists() and sorted(path.name for path in tmp_path.iterdir()) == []
    monkeypatch.undo()
    code, output = invoke(*args)
    assert code == 0, output
    assert invoke("inspect", out)[0] == 0
    assert files_of(world["data"], world["predictions"]) == before


def _edit_manifest(data: Path, change) -> Path:
    path = data / "manifest.json"
    path.write_text(json.dumps(change(json.loads(path.read_text())), indent=2))
    return path


@pytest.mark.parametrize(
    "change",
    [
        lambda m: {**m, "suite": {**m["suite"], "base_lengths": ["2k", "4k"]}},
        lambda m: {**m, "suite": {**m["suite"], "metrics": {}}},
        lambda m: {**m, "seed": 2},
    ],
)
@pytest.mark.parametrize("command", ["inspect", "score", "baselines", "coverage", "filter"])
def test_an_edited_manifest_is_refused_in_one_line(
    world: dict[str, Path], tmp_path: Path, change, command: str
):
    data = tmp_path / "data"
    shutil.copytree(world["data"], data)
    assert "manifest_sha256" in json.loads((data / "manifest.json").read_text())
    path = _edit_manifest(data, change)
    before = files_of(data, world["predictions"])
    assert_one_line_error(
        *invoke(*READERS[command](world, data, tmp_path)), f"{path}: edited after it was written"
    )
    assert files_of(data, world["predictions"]) == before


def test_a_manifest_written_before_the_digest_is_still_read(world: dict[str, Path], tmp_path: Path):
    data = tmp_path / "data"
    shutil.copytree(world["data"], data)
    _edit_manifest(data, lambda m: {k: v for k, v in m.items() if k != "manifest_sha256"})
    code, output = invoke(*READERS["score"](world, data, tmp_path))
    assert code == 0, output


def test_a_report_rewritten_without_html_drops_its_old_page(world: dict[str, Path], tmp_path: Path):
    out = tmp_path / "R"
    assert invoke("report", world["results"], "--out", out, "--html", "--n-boot", "10")[0] == 0
    assert (out / "report.html").is_file()
    (out / "mine.txt").write_text("a file of the user's own, added later")
    code, output = invoke("report", world["results"], "--out", out, "--n-boot", "10")
    assert code == 0, output
    assert not (out / "report.html").exists() and (out / "report.md").is_file()
    assert (out / "mine.txt").read_text() == "a file of the user's own, added later"


def test_an_export_of_other_data_keeps_none_of_the_old_tasks(
    world: dict[str, Path], tmp_path: Path
):
    smaller = tmp_path / "d1"
    shutil.copytree(world["data"], smaller)
    shutil.rmtree(smaller / "single_doc_qa")
    _edit_manifest(
        smaller,
        lambda m: sealed_manifest(
            {
                **m,
                "files": {
                    k: v for k, v in m["files"].items() if not k.startswith("single_doc_qa/")
                },
            }
        ),
    )
    out = tmp_path / "ex"
    assert invoke("export", "lm-eval", world["data"], out)[0] == 0
    assert any("single_doc_qa" in path.name for path in out.glob("*.yaml"))
    code, output = invoke("export", "lm-eval", smaller, out)
    assert code == 0, output
    assert not any("single_doc_qa" in path.as_posix() for path in out.rglob("*.*")), sorted(
        out.rglob("*")
    )
    assert any("kv_retrieval" in path.name for path in out.glob("*.yaml"))


TWIN_READERS = {
    "score --controls": lambda w, d, t: [
        *("score", "--data", d, "--predictions", w["predictions"], "--out", t / "r.json"),
        "--controls",
    ],
    "export lm-eval --controls": lambda w, d, t: ["export", "lm-eval", d, t / "e", "--controls"],
    "publish --controls": lambda w, d, t: [
        "publish",
        "--data",
        d,
        "--out",
        t / "snap",
        "--controls",
    ],
    "predict --controls": lambda w, d, t: [
        *("predict", "--data", d, "--model", "m", "--base-url", "http://127.0.0.1:9/v1"),
        *("--out", t / "pred", "--controls"),
    ],
}


@pytest.mark.parametrize("command", sorted(TWIN_READERS))
def test_control_twins_edited_after_generation_are_refused_by_every_reader_of_them(
    world: dict[str, Path], tmp_path: Path, command: str
):
    data = tmp_path / "edited"
    shutil.copytree(world["data"], data)
    twin = data / "controls" / "kv_retrieval" / "2k.jsonl"
    twin.write_text(twin.read_text().replace('"gold_removed"', '"context_swapped"', 1))
    before = files_of(data, world["predictions"])
    assert_one_line_error(
        *invoke(*TWIN_READERS[command](world, data, tmp_path)),
        "controls/kv_retrieval/2k.jsonl differs from manifest.json",
    )
    assert files_of(data, world["predictions"]) == before
    assert not any((tmp_path / name).exists() for name in ("r.json", "e", "snap", "pred"))


def test_the_inspect_task_refuses_edited_control_twins(world: dict[str, Path], tmp_path: Path):
    pytest.importorskip("inspect_ai")
    from longbench100.core.errors import UserError
    from longbench100.integrations.inspect_tasks import selected_records

    data = tmp_path / "edited"
    shutil.copytree(world["data"], data)
    (data / "controls" / "single_doc_qa" / "2k.jsonl").unlink()
    assert selected_records(data)[0]  # the data alone is whole
    with pytest.raises(UserError, match="controls/single_doc_qa/2k.jsonl is listed in manifest"):
        selected_records(data, controls=True)
