"""lm-evaluation-harness and Inspect runs of our data, end to end against local stand-ins for a
model: export, run the other tool, score its outputs; the scores equal those of our own predict on
the same replies."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.text.tokenization import _bundled_file
from tests.support.openai_stub import OpenAIStub, prompt_text

TASKS = ("kv_retrieval", "passage_count", "single_doc_qa", "single_doc_sum")
METRICS = {
    "kv_retrieval": "acc",
    "passage_count": "acc",
    "single_doc_qa": "f1",
    "single_doc_sum": "rouge_l",
}
ROOMS = {"kv_retrieval": 64, "passage_count": 32, "single_doc_qa": 128, "single_doc_sum": 512}
STUB_MODEL = "acme/stub-7b"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("integrations") / "data"
    run_generate(
        GenerateOptions(
            tasks=TASKS,
            lengths=(("2k", 2048), ("4k", 4096)),
            rows=3,
            seed=5,
            tokenizer="cl100k_base",
            out=out,
            sources="demo",
            workers=1,
        ),
        echo=lambda _: None,
        progress=False,
    )
    return out


def records(folder: Path) -> dict[str, dict]:
    return {
        record["id"]: record
        for path in sorted(folder.glob("*/*.jsonl"))
        for record in map(json.loads, path.read_text().splitlines())
    }


def replier(data: Path):
    """A model that knows the gold of every other prompt and answers the rest wrongly
    (deterministic)."""
    by_prompt = {record["prompt"]: record for record in records(data).values()}

    def reply(prompt: str) -> str:
        record = by_prompt.get(prompt)
        if record is None:
            return "no idea"
        return record["answers"][0] if record["row"] % 2 == 0 else "something else entirely"

    return reply


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


CLASSIC = ("--metric", "classic", "--qa-filter", "off")
"""How these tests score: classic metrics over every sample (no QA filter)."""


def score_args(data: Path, predictions: Path, out: Path, *options: str) -> list[str]:
    """The ``score`` command line for ``predictions`` of ``data`` into ``out``, with ``options``."""
    return [
        "score",
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        *options,
        "--out",
        str(out),
    ]


def run_mock_inspect(task, model, logs: Path, **settings):
    """Inspect's eval of ``task`` with the mock model answering through ``model`` (logs in
    ``logs``); ``settings`` are eval's own options (epochs, generate settings)."""
    from inspect_ai import eval as inspect_eval

    return inspect_eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": model},
        log_dir=str(logs),
        display="none",
        **settings,
    )


def per_sample_scores(results: Path) -> dict[str, float]:
    return {sample["id"]: sample["score"] for sample in json.loads(results.read_text())["samples"]}


def our_predict_scores(data: Path, reply, tmp_path: Path) -> dict[str, float]:
    """Scores of our own predict (completion mode, no closed book) on the same stub replies."""
    with OpenAIStub(lambda body: reply(prompt_text(body))) as server:
        invoke(
            "predict",
            "--data",
            str(data),
            "--model",
            server.model,
            "--base-url",
            server.base_url,
            "--mode",
            "completion",
            "--out",
            str(tmp_path / "ours"),
            "--no-closed-book",
        )
    invoke(*score_args(data, tmp_path / "ours", tmp_path / "ours.json", *CLASSIC))
    return per_sample_scores(tmp_path / "ours.json")


def run_tool(arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run another tool's command line (``python -m ...``) in this interpreter, its output kept,
    within five minutes."""
    return subprocess.run(
        [sys.executable, "-m", *arguments], capture_output=True, text=True, env=env, timeout=300
    )


def run_lm_eval(export: Path, logs: Path, server: OpenAIStub, chat: bool, *extra: str) -> None:
    """Run the real lm_eval CLI on the export's 100-longbench group against the stub (offline)."""
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(logs.parent / "hf-cache"),
    }
    model = (
        ["--model", "local-chat-completions", "--apply_chat_template"]
        if chat
        else ["--model", "local-completions"]
    )
    route = "chat/completions" if chat else "completions"
    run = run_tool(
        [
            "lm_eval",
            *model,
            "--model_args",
            f"base_url={server.base_url}/{route},model={server.model},tokenizer_backend=None",
            "--include_path",
            str(export),
            "--tasks",
            "longbench100_100-longbench",
            "--log_samples",
            "--output_path",
            str(logs),
            *extra,
        ],
        env,
    )
    assert run.returncode == 0, run.stderr[-3000:]


def lm_eval_on_stub(data: Path, tmp_path: Path, chat: bool, *extra: str):
    """Export ``data`` and run lm_eval on the export (``extra``: its options) against a stub model
    that answers as :func:`replier`, logging to ``tmp_path/logs``; return the replier and the
    request bodies the stub received."""
    export = exported(data, tmp_path)
    reply = replier(data)
    with OpenAIStub(lambda body: reply(prompt_text(body)), model=STUB_MODEL) as server:
        run_lm_eval(export, tmp_path / "logs", server, chat, *extra)
        sent = [request.body for request in server.requests]
    return reply, sent


def exported(data: Path, tmp_path: Path) -> Path:
    """Export the data, then move the export: its documents are named relative to itself."""
    output = invoke("export", "lm-eval", str(data), str(tmp_path / "lm"))
    assert "longbench100_100-longbench: 4 tasks" in output
    assert str(tmp_path) not in "".join(
        path.read_text() for path in (tmp_path / "lm").glob("*.yaml")
    )
    return Path(shutil.move(tmp_path / "lm", tmp_path / "lm-moved"))


def printed_results(logs: Path) -> dict:
    [summary] = logs.rglob("results_*.json")
    return json.loads(summary.read_text())["results"]


def check_lm_eval_printed(printed: dict, theirs: dict[str, float]) -> None:
    """lm-eval's printed per-task, per-length and group figures are the means of our per-sample
    scores."""
    for task in TASKS:
        for label in ("2k", "4k"):
            mine = [
                score
                for sample_id, score in theirs.items()
                if sample_id.startswith(f"{task}-{label}-")
            ]
            cell = printed[f"longbench100_{task}_{label}"]
            assert cell[f"{METRICS[task]},none"] == pytest.approx(sum(mine) / len(mine))
            assert cell[f"{METRICS[task]}_{label},none"] == cell[f"{METRICS[task]},none"]
    suite = printed["longbench100_100-longbench"]
    for label in ("2k", "4k"):
        accuracy = [
            printed[f"longbench100_{task}_{label}"]["acc,none"]
            for task in ("kv_retrieval", "passage_count")
        ]
        assert suite[f"acc_{label},none"] == pytest.approx(sum(accuracy) / 2)
    assert "score,none" not in suite and {"acc,none", "f1,none", "rouge_l,none"} <= set(suite)


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
def test_lm_eval_runs_the_export_and_score_reads_its_samples(
    data: Path, tmp_path: Path, chat: bool
):
    pytest.importorskip("lm_eval")
    reply, sent = lm_eval_on_stub(data, tmp_path, chat)
    by_id = records(data)
    assert len(sent) == len(by_id)
    by_prompt = {record["prompt"]: record for record in by_id.values()}
    for body in (
        sent
    ):  # the exact prompt (as the one user message on the chat path), the answer room, greedy
        if chat:
            assert [message["role"] for message in body["messages"]] == ["user"]
        record = by_prompt[prompt_text(body)]
        assert body["max_tokens"] == ROOMS[record["task"]] and body["temperature"] == 0
    if chat:  # lm-eval's prompt_hash on the chat path: the sha256 of the message list as JSON
        for path in (tmp_path / "logs").rglob("samples_*.jsonl"):
            for sample in map(json.loads, path.read_text().splitlines()):
                messages = [{"role": "user", "content": by_id[sample["doc"]["id"]]["prompt"]}]
                assert (
                    sample["prompt_hash"]
                    == hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()
                )
    invoke(*score_args(data, tmp_path / "logs", tmp_path / "lm.json", *CLASSIC))
    results = json.loads((tmp_path / "lm.json").read_text())
    assert results["model"] == STUB_MODEL  # lm-eval's model_name, not the folder's name
    theirs = per_sample_scores(tmp_path / "lm.json")
    ours = our_predict_scores(data, reply, tmp_path)
    assert theirs == ours
    assert 0 < sum(theirs.values()) < len(theirs)  # some right, some wrong: the comparison can fail
    check_lm_eval_printed(printed_results(tmp_path / "logs"), theirs)


def test_a_partial_lm_eval_run_is_refused_or_scored_on_its_complete_rows(
    data: Path, tmp_path: Path
):
    pytest.importorskip("lm_eval")
    lm_eval_on_stub(data, tmp_path, True, "--limit", "2")
    args = score_args(data, tmp_path / "logs", tmp_path / "lm.json", *CLASSIC, "--n-boot", "0")
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert (
        "are incomplete: 8 of 24 records have no prediction, in 8 task and length cells"
        in refused.output
    )
    assert "kv_retrieval 2k 2 of 3 rows" in refused.output and not (tmp_path / "lm.json").exists()
    invoke(*args, "--allow-missing")
    results = json.loads((tmp_path / "lm.json").read_text())
    assert sorted({sample["row"] for sample in results["samples"]}) == [0, 1]
    assert results["missing_predictions"] == 8
    assert results["rows"]["incomplete"]["kv_retrieval"]["2k"] == {
        "rows": 3,
        "predicted": 2,
        "scored": 2,
    }
    printed = printed_results(tmp_path / "logs")
    for (
        task
    ) in TASKS:  # each figure rests on the two rows lm-eval ran: lm-eval's own means, no zeros
        for label in ("2k", "4k"):
            cell = results["aggregates"]["tasks"][task]["lengths"][label]
            assert cell["n"] == 2
            assert cell["score"] == pytest.approx(
                100 * printed[f"longbench100_{task}_{label}"][f"{METRICS[task]},none"]
            )


def test_score_names_how_lm_eval_changed_the_messages(data: Path, tmp_path: Path):
    record = next(iter(records(data).values()))
    messages = json.dumps(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": record["prompt"]}],
        ensure_ascii=False,
    )
    sample = {
        "doc": {"id": record["id"]},
        "filtered_resps": ["7"],
        "arguments": {"gen_args_0": {"arg_0": [messages]}},
        "prompt_hash": hashlib.sha256(messages.encode()).hexdigest(),
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "samples_longbench100_x_2026.jsonl").write_text(json.dumps(sample) + "\n")
    result = CliRunner().invoke(
        main, score_args(data, logs, tmp_path / "r.json", "--allow-missing")
    )
    assert result.exit_code == 2 and "other prompts" in result.output
    assert (
        "lm-eval sent 2 messages (system, user), not the prompt alone as one user message"
        in result.output
    )


def test_score_refuses_lm_eval_samples_of_other_prompts(data: Path, tmp_path: Path):
    record = next(iter(records(data).values()))
    logs = tmp_path / "logs"
    logs.mkdir()
    sample = {
        "doc_id": 0,
        "doc": {"id": record["id"]},
        "filtered_resps": ["7"],
        "prompt_hash": "0" * 64,
    }
    (logs / "samples_longbench100_x_2026.jsonl").write_text(json.dumps(sample) + "\n")
    result = CliRunner().invoke(
        main, score_args(data, logs, tmp_path / "r.json", "--allow-missing")
    )
    assert (
        result.exit_code == 2
        and "Traceback" not in result.output
        and "other prompts" in result.output
    )
    assert "was the export made from another data folder or seed than --data" in result.output
    (logs / "samples_longbench100_x_2026.jsonl").write_text(json.dumps({"doc_id": 0}) + "\n")
    result = CliRunner().invoke(main, score_args(data, logs, tmp_path / "r.json"))
    assert result.exit_code == 2 and "not an lm-eval sample" in result.output


@pytest.fixture
def mock_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's mock model counts tokens with o200k: give tiktoken the bundled ranks (offline)."""
    cache = tmp_path / "tiktoken"
    cache.mkdir()
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(
        gzip.decompress(_bundled_file(O200K_URL).read_bytes())
    )
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))


def test_inspect_task_runs_with_epochs_and_rows_and_score_reads_its_log(
    data: Path, tmp_path: Path, mock_tokens
):
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ModelOutput

    from longbench100.integrations.inspect_tasks import longbench100

    reply = replier(data)
    asked: list[tuple[int, float]] = []
    calls: dict[str, int] = {}

    def model(messages, tools, tool_choice, config) -> ModelOutput:
        """Epoch 1 answers as ``replier``; a prompt's second call (epoch 2) is always wrong."""
        asked.append((config.max_tokens, config.temperature))
        prompt = messages[-1].text
        calls[prompt] = calls.get(prompt, 0) + 1
        content = reply(prompt) if calls[prompt] == 1 else "something else entirely"
        return ModelOutput.from_content(model="mockllm", content=content)

    [log] = run_mock_inspect(
        longbench100(data=str(data), rows=2), model, tmp_path / "ilogs", epochs=2
    )
    assert (
        log.status == "success" and len(log.samples) == 2 * 2 * len(TASKS) * 2
    )  # rows x lengths x tasks x epochs
    assert sorted(set(asked)) == [
        (32, 0),
        (64, 0),
        (128, 0),
        (512, 0),
    ]  # greedy, each record's answer room
    metadata = {key for sample in log.samples for key in sample.metadata}
    assert metadata == {"task", "length", "max_tokens"}
    assert len(log.eval.model_dump_json()) < 10_000  # arguments name the data, not hold it
    metrics = {name for score in log.results.scores for name in score.metrics}
    assert {*TASKS, "all", "2k", "4k"} <= metrics
    args = score_args(
        data, tmp_path / "ilogs", tmp_path / "inspect.json", *CLASSIC, "--n-boot", "0"
    )
    refused = CliRunner().invoke(main, args)
    assert (
        refused.exit_code == 2
        and "are incomplete: 8 of 24 records have no prediction" in refused.output
    )
    invoke(*args, "--limit", "2")
    results = json.loads((tmp_path / "inspect.json").read_text())
    assert results["model"] == "mockllm/model" and results["epochs"] == {
        "graded": [1, 2],
        "present": [1, 2],
    }
    by_epoch = {
        (str(sample.id), sample.epoch): sample.scores["longbench100_metric"].value
        for sample in log.samples
    }
    theirs = per_sample_scores(tmp_path / "inspect.json")
    assert theirs == {
        sample_id: (by_epoch[sample_id, 1] + by_epoch[sample_id, 2]) / 2
        for sample_id, _ in by_epoch
    }
    assert 0 < sum(theirs.values()) < len(theirs)
    invoke(*args, "--limit", "2", "--epoch", "1")
    first = per_sample_scores(tmp_path / "inspect.json")
    ours = our_predict_scores(data, reply, tmp_path)
    assert first == {
        sample_id: score for sample_id, score in ours.items() if int(sample_id[-4:]) < 2
    }


def test_inspect_generate_config_overrides_the_defaults(data: Path, tmp_path: Path, mock_tokens):
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ModelOutput

    from longbench100.integrations.inspect_tasks import longbench100

    asked: list[tuple[int, float]] = []

    def model(messages, tools, tool_choice, config) -> ModelOutput:
        asked.append((config.max_tokens, config.temperature))
        return ModelOutput.from_content(model="mockllm", content="x")

    task = longbench100(data=str(data), tasks="kv_retrieval,single_doc_qa", lengths="4k", rows=1)
    run_mock_inspect(task, model, tmp_path / "ilogs", max_tokens=7, temperature=0.5)
    assert asked == [(7, 0.5), (7, 0.5)]


def test_inspect_task_errors_are_one_line_and_a_snapshot_runs_like_its_folder(
    data: Path, tmp_path: Path
):
    pytest.importorskip("inspect_ai")
    pytest.importorskip("pyarrow")
    from inspect_ai._util.error import PrerequisiteError

    from longbench100.integrations.inspect_tasks import data_samples, longbench100

    with pytest.raises(PrerequisiteError, match="give the data folder: -T data=DATA"):
        longbench100()
    with pytest.raises(PrerequisiteError, match="no such folder"):
        longbench100(data=str(tmp_path / "nowhere"))
    with pytest.raises(PrerequisiteError, match="rows=0: give 1 or more"):
        longbench100(data=str(data), rows=0)
    invoke("publish", "--data", str(data), "--out", str(tmp_path / "snapshot"))

    def plain(samples) -> list[tuple]:
        return [(sample.id, sample.input, sample.target, sample.metadata) for sample in samples]

    assert plain(data_samples(tmp_path / "snapshot", lengths="4k")) == plain(
        data_samples(data, lengths="4k")
    )
    assert len(data_samples(tmp_path / "snapshot")) == len(records(data))


@pytest.mark.skipif(
    importlib.util.find_spec("openai") is None, reason="Inspect's openai-api/ models need openai"
)
def test_inspect_cli_against_an_openai_compatible_server(data: Path, tmp_path: Path):
    pytest.importorskip("inspect_ai")
    reply = replier(data)
    with OpenAIStub(lambda body: reply(prompt_text(body))) as server:
        env = {
            **os.environ,
            "LOCAL_BASE_URL": server.base_url,
            "LOCAL_API_KEY": "none",
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH")])
            ),
        }
        run = run_tool(
            [
                "inspect_ai",
                "eval",
                "longbench100/longbench100",
                "-T",
                f"data={data}",
                "-T",
                "lengths=2k,4k",
                "--model",
                f"openai-api/local/{server.model}",
                "--log-dir",
                str(tmp_path / "ilogs"),
                "--display",
                "none",
            ],
            env,
        )
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        sent = [request.body for request in server.requests]
    assert len(sent) == len(records(data))
    assert {body["temperature"] for body in sent} == {0}
    assert {body["max_tokens"] for body in sent} == set(ROOMS.values())
    invoke(
        *score_args(data, tmp_path / "ilogs", tmp_path / "inspect.json", *CLASSIC, "--n-boot", "0")
    )
    results = json.loads((tmp_path / "inspect.json").read_text())
    assert results["model"] == f"openai-api/local/{server.model}"
    assert per_sample_scores(tmp_path / "inspect.json") == our_predict_scores(data, reply, tmp_path)


def test_exports_and_the_inspect_task_carry_the_control_twins_when_asked(
    data: Path, tmp_path: Path, mock_tokens
):
    invoke("export", "lm-eval", str(data), str(tmp_path / "plain"))
    assert not list((tmp_path / "plain").glob("*_controls.yaml"))
    invoke("export", "lm-eval", str(data), str(tmp_path / "lm"), "--controls")
    group = (tmp_path / "lm" / "longbench100_controls.yaml").read_text()
    assert all(
        f"longbench100_{task}_{label}_controls" in group for task in TASKS for label in ("2k", "4k")
    )
    twins_file = tmp_path / "lm" / "docs" / "kv_retrieval" / "2k_controls.jsonl"
    twins = [json.loads(line) for line in twins_file.read_text().splitlines()]
    assert {json.loads(twin["record"])["control"] for twin in twins} == {
        "gold_removed",
        "context_swapped",
    }

    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ModelOutput

    from longbench100.integrations.inspect_tasks import longbench100

    reply = replier(data)

    def model(messages, tools, tool_choice, config) -> ModelOutput:
        return ModelOutput.from_content(model="mockllm", content=reply(messages[-1].text))

    [log] = run_mock_inspect(longbench100(data=str(data), controls=True), model, tmp_path / "ilogs")
    twin_records = records(data / "controls")
    assert log.status == "success" and len(log.samples) == len(records(data)) + len(twin_records)
    invoke(*score_args(data, tmp_path / "ilogs", tmp_path / "inspect.json", *CLASSIC, "--controls"))
    block = json.loads((tmp_path / "inspect.json").read_text())["aggregates"]["controls"]
    assert sum(
        cell[kind]["n"]
        for cells in block.values()
        for cell in cells.values()
        for kind in ("gold_removed", "context_swapped")
    ) == len(twin_records)


def test_two_lm_eval_runs_in_one_folder_are_named_as_such(data: Path, tmp_path: Path):
    record = next(iter(records(data).values()))
    logs = tmp_path / "logs"
    logs.mkdir()
    sample = {"doc": {"id": record["id"]}, "filtered_resps": ["7"]}
    for stamp in ("2026-01-01T10", "2026-01-02T10"):
        (logs / f"samples_longbench100_x_{stamp}.jsonl").write_text(json.dumps(sample) + "\n")
    result = CliRunner().invoke(
        main, score_args(data, logs, tmp_path / "r.json", "--allow-missing")
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    first = "samples_longbench100_x_2026-01-01T10.jsonl"
    assert f"several lm-eval runs in one folder: {first} and " in result.output
    assert "point --predictions at one samples file" in result.output
