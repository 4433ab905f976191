"""``predict``'s promises to what comes after it: failures fail the run, answers carry the fingerprint of
what was asked and the settings they were asked with, and a resumed run never mixes data or settings."""

import hashlib
import json
from collections import Counter

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.predict.options import PredictOptions
from longbench100.predict.run import failure_message
from longbench100.predict.summary import RunSummary
from tests.support.openai_stub import OpenAIStub, prompt_text
from tests.support.predict_helpers import read_predictions, sample_id_of, write_data

LAYOUT = {("kv_retrieval", "2k"): 2, ("single_doc_qa", "2k"): 2}


def echo(body: dict) -> str:
    """Answer with the sample id found in the prompt."""
    return f"answer {sample_id_of(prompt_text(body).splitlines()[-1])}"


def predict(base_url: str, data, out, *extra: str):
    """Run the CLI in-process against ``base_url`` and return click's result."""
    args = [
        "predict",
        "--data",
        str(data),
        "--out",
        str(out),
        "--model",
        "stub-model",
        "--base-url",
        base_url,
    ]
    return CliRunner().invoke(main, [*args, "--max-retries", "0", *extra])


def error_lines(output: str) -> list[str]:
    """The lines of ``output`` that report an error."""
    return [line for line in output.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize(
    "reply, reason",
    [
        ((429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}), "HTTP 429"),
        ((200, "<!doctype html><html><body>Sign in</body></html>"), "HTML reply"),
        ((200, '{"choices": [{"message": ', {"Content-Type": "application/json"}), "bad response"),
    ],
)
def test_every_request_failing_exits_1_with_one_summary_line(tmp_path, reply, reason):
    data = write_data(tmp_path / "data", LAYOUT)
    with OpenAIStub(lambda body: reply) as server:
        result = predict(server.base_url, data, tmp_path / "pred")
    assert result.exit_code == 1, result.output
    assert error_lines(result.output) == [
        f"error: 4 of 4 samples failed: {reason} x 4; rerun with --retry-failed"
    ]
    assert all(record["prediction"] is None for record in read_predictions(tmp_path / "pred"))


@pytest.mark.parametrize("status, message", [(500, "engine crashed"), (404, "no such route")])
def test_a_server_failing_everything_the_same_way_stops_the_run_early(tmp_path, status, message):
    """A server answering 500 to everything used to cost every sample its full retries (45 s for one
    sample, 170 s for 38): now the run stops after BROKEN_AFTER identical failures, with one line."""
    from longbench100.llm.client import BROKEN_AFTER

    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 38})
    with OpenAIStub(lambda body: (status, {"error": {"message": message}})) as server:
        result = predict(server.base_url, data, tmp_path / "pred")
        sent = len(server.requests)
    assert result.exit_code == 2, result.output
    [line] = error_lines(result.output)
    assert (
        "failed the first" in line
        and f"HTTP {status}: {message}" in line
        and "rerun the same command" in line
    )
    assert (
        sent < BROKEN_AFTER + 8
    )  # at most one attempt more per request in flight (concurrency 8), not 38 x 7


def test_a_base_url_without_v1_is_caught_before_any_request(tmp_path):
    data = write_data(tmp_path / "data", LAYOUT)
    with OpenAIStub(echo) as server:
        root = server.base_url.removesuffix("/v1")
        result = predict(root, data, tmp_path / "pred")
    assert result.exit_code == 2, result.output
    assert error_lines(result.output) == [
        f"error: the server answered 404 at {root}/models: did you mean --base-url {root}/v1?"
    ]
    assert server.requests == []


def test_404_failures_from_a_base_url_without_v1_suggest_it():
    options = PredictOptions(
        data_dir=None, out_dir=None, model="m", base_url="http://gpu-host:8000"
    )
    summary = RunSummary(total=3, failed=Counter({"HTTP 404": 3}))
    assert failure_message(summary, options) == (
        "3 of 3 samples failed: HTTP 404 x 3; the server answered 404 at http://gpu-host:8000/chat/completions: "
        "did you mean --base-url http://gpu-host:8000/v1?; rerun with --retry-failed"
    )


def test_records_carry_the_fingerprints_of_what_was_asked(tmp_path):
    data = write_data(tmp_path / "data", LAYOUT)
    files = {
        path.relative_to(data).as_posix(): {"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        for path in sorted(data.glob("*/*.jsonl"))
    }
    manifest = json.dumps({"made": "by this test", "files": files}).encode("utf-8") + b"\n"
    (data / "manifest.json").write_bytes(manifest)
    with OpenAIStub(echo) as server:
        assert predict(server.base_url, data, tmp_path / "pred").exit_code == 0
    prompts = {}
    for path in data.glob("*/*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            prompts[record["id"]] = (record["prompt"], record["closed_book_prompt"])
    records = read_predictions(tmp_path / "pred")
    assert len(records) == 4
    for record in records:
        prompt, closed = prompts[record["id"]]
        assert record["prompt_sha256"] == hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        expected_closed = (
            None if closed is None else hashlib.sha256(closed.encode("utf-8")).hexdigest()
        )
        assert record["closed_book_prompt_sha256"] == expected_closed
        assert record["data_manifest_sha256"] == hashlib.sha256(manifest).hexdigest()
    assert sum(record["closed_book_prompt_sha256"] is not None for record in records) == 2


def test_without_a_manifest_the_manifest_fingerprint_is_null(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(echo) as server:
        assert predict(server.base_url, data, tmp_path / "pred").exit_code == 0
    assert [record["data_manifest_sha256"] for record in read_predictions(tmp_path / "pred")] == [
        None
    ]


def test_a_resumed_run_redoes_samples_whose_prompt_changed(tmp_path):
    data = write_data(tmp_path / "data", LAYOUT)
    with OpenAIStub(echo) as server:
        assert predict(server.base_url, data, tmp_path / "pred").exit_code == 0
        assert len(server.requests) == 6
        write_data(
            data, {("kv_retrieval", "2k"): 2}, prompt_words=9
        )  # regenerated: same ids, other prompts
        result = predict(server.base_url, data, tmp_path / "pred")
    assert result.exit_code == 0, result.output
    assert "4 selected, 2 done, 0 failed, 2 skipped" in result.output
    assert "2 samples were redone because their prompt changed" in result.output
    assert len(server.requests) == 8
    new_prompts = {sample_id_of(prompt_text(body)): prompt_text(body) for body in server.bodies[6:]}
    records = [r for r in read_predictions(tmp_path / "pred") if r["task"] == "kv_retrieval"]
    assert len(records) == 2  # the superseded records are gone
    for record in records:
        assert (
            record["prompt_sha256"]
            == hashlib.sha256(new_prompts[record["id"]].encode()).hexdigest()
        )


def test_limit_takes_the_first_rows_by_row_number(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 5, ("kv_retrieval", "4k"): 3})
    path = data / "kv_retrieval" / "2k.jsonl"
    path.write_text(
        "".join(reversed(path.read_text().splitlines(keepends=True)))
    )  # rows 4..0 in the file
    with OpenAIStub(echo) as server:
        result = predict(server.base_url, data, tmp_path / "pred", "--limit", "2")
        assert result.exit_code == 0, result.output
        assert "4 selected, 4 done" in result.output
        assert sorted(r["id"] for r in read_predictions(tmp_path / "pred")) == [
            "kv_retrieval-2k-0000",
            "kv_retrieval-2k-0001",
            "kv_retrieval-4k-0000",
            "kv_retrieval-4k-0001",
        ]
        result = predict(server.base_url, data, tmp_path / "pred")  # without --limit: the rest
    assert "8 selected, 4 done, 0 failed, 4 skipped" in result.output
    assert len(server.requests) == 8


def test_pass_throughs_reach_the_request_body(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 2})
    extra = [
        "--system-prompt",
        "Answer briefly.",
        "--top-p",
        "0.9",
        "--stop",
        "###",
        "--stop",
        "\n\n",
        "--extra-body",
        '{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}}',
    ]
    with OpenAIStub(echo) as server:
        result = predict(server.base_url, data, tmp_path / "pred", *extra)
    assert result.exit_code == 0, result.output
    assert len(server.bodies) == 2
    for body in server.bodies:
        assert body["messages"][0] == {"role": "system", "content": "Answer briefly."}
        assert body["messages"][1]["role"] == "user"
        assert body["top_p"] == 0.9 and body["stop"] == ["###", "\n\n"] and body["top_k"] == 20
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
    settings = read_predictions(tmp_path / "pred")[0]["request_settings"]
    assert settings["system_prompt"] == "Answer briefly." and settings["extra_body"]["top_k"] == 20


def test_without_pass_throughs_the_body_has_none_of_them(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(echo) as server:
        assert predict(server.base_url, data, tmp_path / "pred").exit_code == 0
    assert set(server.bodies[0]) == {"model", "messages", "max_tokens", "temperature"}


@pytest.mark.parametrize(
    "extra, expected",
    [
        (
            ["--mode", "completion", "--system-prompt", "Be brief."],
            "--system-prompt needs --mode chat",
        ),
        (["--extra-body", "{top_k: 20}"], "bad --extra-body '{top_k: 20}': not valid JSON"),
        (["--extra-body", "[1, 2]"], "bad --extra-body '[1, 2]': expected a JSON object"),
        (["--extra-body", '{"temperature": 1}'], "--extra-body may not set temperature"),
    ],
)
def test_bad_pass_throughs_are_one_line_errors(tmp_path, extra, expected):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(echo) as server:
        result = predict(server.base_url, data, tmp_path / "pred", *extra)
    assert result.exit_code == 2, result.output
    lines = error_lines(result.output)
    assert len(lines) == 1 and expected in lines[0]
    assert server.requests == []


def test_resuming_with_other_request_settings_is_refused(tmp_path):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 3})
    with OpenAIStub(echo) as server:
        assert (
            predict(
                server.base_url, data, tmp_path / "pred", "--limit", "1", "--top-p", "0.9"
            ).exit_code
            == 0
        )
        before = (tmp_path / "pred" / "kv_retrieval" / "2k.jsonl").read_bytes()
        result = predict(
            server.base_url, data, tmp_path / "pred", "--top-p", "0.8", "--stop", "END"
        )
        assert result.exit_code == 2, result.output
        assert "holds predictions made with other --top-p, --stop" in error_lines(result.output)[0]
        assert len(server.requests) == 1
        assert (tmp_path / "pred" / "kv_retrieval" / "2k.jsonl").read_bytes() == before
        result = predict(
            server.base_url, data, tmp_path / "pred", "--top-p", "0.9"
        )  # the same settings resume
    assert result.exit_code == 0 and "3 selected, 2 done, 0 failed, 1 skipped" in result.output


def test_run_predict_is_the_library_entry(tmp_path):
    from longbench100 import PredictOptions as ExportedOptions
    from longbench100 import run_predict

    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 2})
    lines = []
    with OpenAIStub(echo) as server:
        options = ExportedOptions(
            data_dir=data,
            out_dir=tmp_path / "pred",
            model="stub-model",
            base_url=server.base_url,
            progress=False,
        )
        summary = run_predict(options, echo=lines.append)
    assert (summary.total, summary.done) == (2, 2)
    assert lines[0].startswith("samples:  2 selected, 2 done")


def test_progress_is_plain_lines_off_a_terminal(tmp_path):
    """Under CI or in a log (stderr not a terminal) a bar shows nothing useful: predict prints lines."""
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 5})
    with OpenAIStub(echo) as server:
        result = predict(server.base_url, data, tmp_path / "pred")
    assert result.exit_code == 0, result.output
    assert (
        "predict: 5 samples to do" in result.output
        and "predict: 5/5 samples (100%)" in result.output
    )
    assert "- done" in result.output


@pytest.mark.parametrize(
    "option",
    [
        ("--timeout", "nan"),
        ("--temperature", "inf"),
        ("--temperature", "nan"),
        ("--extra-body", '{"x": NaN}'),
        ("--extra-body", '{"x": -Infinity}'),
    ],
)
def test_a_number_no_request_can_carry_is_one_line(tmp_path, option):
    data = write_data(tmp_path / "data", {("kv_retrieval", "2k"): 1})
    with OpenAIStub(echo) as server:
        result = predict(server.base_url, data, tmp_path / "out", *option)
        sent = server.bodies + server.test_bodies
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(error_lines(result.output)) == 1 and option[0] in error_lines(result.output)[0]
    assert sent == [] and not (tmp_path / "out").exists()
