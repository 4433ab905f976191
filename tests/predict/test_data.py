"""Predict input handling: data indexing, user errors reported in one line, and the prediction store."""

import json

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.predict.data import index_data, load_sample
from longbench100.predict.store import PredictionStore
from tests.scoring.test_predictions import seal
from tests.support.openai_stub import OpenAIStub
from tests.support.predict_helpers import data_record, write_data


def test_index_orders_and_selects(tmp_path):
    write_data(
        tmp_path,
        {
            ("single_doc_sum", "2k"): 1,
            ("kv_retrieval", "16k"): 1,
            ("kv_retrieval", "2k"): 2,
            ("single_doc_qa", "4k"): 1,
        },
    )
    seal(tmp_path)
    (tmp_path / "kv_retrieval" / "notes.jsonl").write_text("not data\n")
    refs = index_data(tmp_path)
    assert [r.id for r in refs] == [
        "kv_retrieval-2k-0000",
        "kv_retrieval-2k-0001",
        "kv_retrieval-16k-0000",
        "single_doc_qa-4k-0000",
        "single_doc_sum-2k-0000",
    ]
    assert [r.has_closed_book for r in refs] == [False, False, False, True, False]
    sample = load_sample(refs[3])
    assert sample.prompt == data_record("single_doc_qa", "4k", 0)["prompt"]
    assert sample.closed_book_prompt == "[single_doc_qa-4k-0000] closed book"
    assert [r.id for r in index_data(tmp_path, ["kv_retrieval"], ["16k"])] == [
        "kv_retrieval-16k-0000"
    ]
    assert [r.id for r in index_data(tmp_path, ["kv_retrieval"], ["16384"])] == [
        "kv_retrieval-16k-0000"
    ]


def test_index_refuses_a_bad_length_label_from_the_library_in_one_line(tmp_path):
    write_data(tmp_path, {("kv_retrieval", "2k"): 1})
    with pytest.raises(UserError, match="bad length label 'eight'"):  # was a TypeError from sorting
        index_data(tmp_path, labels=["2k", "eight"])


def test_index_skips_blank_lines_and_finds_offsets(tmp_path):
    path = tmp_path / "passage_count" / "2k.jsonl"
    path.parent.mkdir()
    lines = [json.dumps(data_record("passage_count", "2k", row)) for row in range(3)]
    path.write_text(lines[0] + "\n\n" + lines[1] + "\n" + lines[2])  # no final newline either
    refs = index_data(tmp_path)
    assert [load_sample(ref).id for ref in refs] == [
        f"passage_count-2k-000{row}" for row in range(3)
    ]


def _error(args: list[str], env: dict | None = None) -> str:
    result = CliRunner().invoke(main, ["predict", *args], env=env)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def _args(data, out, *extra, base_url="http://127.0.0.1:9/v1"):
    return [
        "--data",
        str(data),
        "--out",
        str(out),
        "--model",
        "stub-model",
        "--base-url",
        base_url,
        *extra,
    ]


def test_user_errors_are_one_line(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 2})
    out = tmp_path / "pred"
    assert "does not exist" in _error(_args(tmp_path / "missing", out))
    assert "unknown task nope" in _error(_args(data, out, "--tasks", "kv_retrieval,nope"))
    assert "bad length label" in _error(_args(data, out, "--lengths", "2k,eight"))
    assert "no data at length 8k" in _error(_args(data, out, "--lengths", "2k,8k"))
    assert "no data for task passage_count" in _error(_args(data, out, "--tasks", "passage_count"))
    assert "environment variable NO_SUCH_KEY" in _error(
        _args(data, out, "--api-key-env", "NO_SUCH_KEY"), env={"NO_SUCH_KEY": None}
    )
    assert "bad --max-new-tokens" in _error(_args(data, out, "--max-new-tokens", "lots"))
    assert "bad --base-url" in _error(_args(data, out, base_url="127.0.0.1:8000/v1"))
    assert "cannot reach the server" in _error(_args(data, out))
    assert not out.exists() or not any(out.rglob("*.jsonl"))


def test_bad_data_lines_name_file_and_line(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 2})
    path = data / "kv_retrieval" / "2k.jsonl"
    good = path.read_text()
    path.write_text(good + '{"id": "x", "prompt": \n')
    assert f"{path}:3: not valid JSON" in _error(_args(data, tmp_path / "pred"))
    path.write_text(good + '{"id": "x"}\n')
    assert f"{path}:3: task is missing" in _error(_args(data, tmp_path / "pred"))
    empty_prompt = {**data_record("kv_retrieval", "2k", 2), "prompt": ""}
    path.write_text(good + json.dumps(empty_prompt) + "\n")
    assert f"{path}:3: prompt is missing or empty" in _error(_args(data, tmp_path / "pred"))
    path.write_text(good + good.splitlines()[0] + "\n")
    assert "duplicate id 'kv_retrieval-2k-0000'" in _error(_args(data, tmp_path / "pred"))
    wrong = data_record("kv_retrieval", "4k", 0)
    path.write_text(json.dumps(wrong) + "\n")
    assert f"{path}:1: record has label '4k' but lies in 2k.jsonl" in _error(
        _args(data, tmp_path / "pred")
    )


def test_model_not_served_is_reported_before_any_request(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(model="served-model") as server:
        message = _error(_args(data, tmp_path / "pred", base_url=server.base_url))
    assert (
        message
        == f"error: model 'stub-model' is not served at {server.base_url}; it serves: served-model"
    )
    assert server.requests == []


def test_store_truncates_a_partial_last_line(tmp_path):
    store = PredictionStore(tmp_path)
    store.append("kv_retrieval", "2k", {"id": "a", "prediction": "1"})
    store.append("kv_retrieval", "2k", {"id": "b", "prediction": "2"})
    store.close()
    path = store.path("kv_retrieval", "2k")
    with path.open("ab") as handle:
        handle.write(b'{"id": "c", "predic')
    assert [r["id"] for r in store.load("kv_retrieval", "2k")] == ["a", "b"]
    assert path.read_bytes().endswith(b'"2"}\n')
    store.append("kv_retrieval", "2k", {"id": "c", "prediction": "3"})
    store.close()
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ["a", "b", "c"]


def test_store_rewrite_and_corrupt_line(tmp_path):
    store = PredictionStore(tmp_path)
    for name in "abc":
        store.append("kv_retrieval", "2k", {"id": name, "prediction": "ü"})
    store.rewrite("kv_retrieval", "2k", [{"id": "a", "prediction": "ü"}])
    store.append("kv_retrieval", "2k", {"id": "d", "prediction": None})
    store.close()
    assert [r["id"] for r in store.load("kv_retrieval", "2k")] == ["a", "d"]
    assert not list(tmp_path.rglob("*.tmp"))
    path = store.path("kv_retrieval", "2k")
    path.write_text(path.read_text() + "garbage\n")
    with pytest.raises(UserError, match=r"2k.jsonl:3: not a prediction record"):
        store.load("kv_retrieval", "2k")
