"""lm-evaluation-harness and Inspect runs of our data, end to end against local stand-ins for a model:
export, run the other tool, score its outputs; the scores equal those of our own predict on the same replies."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.text.tokenization import _bundled_file
from tests.openai_stub import OpenAIStub, prompt_text

TASKS = ("kv_retrieval", "passage_count", "single_doc_qa", "single_doc_sum")
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("integrations") / "data"
    run_generate(GenerateOptions(tasks=TASKS, lengths=(("2k", 2048), ("4k", 4096)), rows=3, seed=5, tokenizer="cl100k_base",
                                 out=out, sources="demo", workers=1), echo=lambda _: None, progress=False)
    return out


def records(folder: Path) -> dict[str, dict]:
    return {record["id"]: record for path in sorted(folder.glob("*/*.jsonl"))
            for record in map(json.loads, path.read_text().splitlines())}


def replier(data: Path):
    """A model that knows the gold of every other prompt and answers the rest wrongly (deterministic)."""
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


def per_sample_scores(results: Path) -> dict[str, float]:
    return {sample["id"]: sample["score"] for sample in json.loads(results.read_text())["samples"]}


def our_predict_scores(data: Path, reply, tmp_path: Path) -> dict[str, float]:
    """Scores of our own predict (completion mode, no closed book) on the same stub replies."""
    with OpenAIStub(lambda body: reply(prompt_text(body))) as server:
        invoke("predict", "--data", str(data), "--model", server.model, "--base-url", server.base_url,
               "--mode", "completion", "--out", str(tmp_path / "ours"), "--no-closed-book")
    invoke("score", "--data", str(data), "--predictions", str(tmp_path / "ours"), "--metric", "classic",
           "--qa-filter", "off", "--out", str(tmp_path / "ours.json"))
    return per_sample_scores(tmp_path / "ours.json")


def test_lm_eval_runs_the_export_and_score_reads_its_samples(data: Path, tmp_path: Path):
    pytest.importorskip("lm_eval")
    export = tmp_path / "lm"
    output = invoke("export", "lm-eval", str(data), str(export))
    assert "longbench100_100-longbench: 8 tasks" in output
    reply = replier(data)
    with OpenAIStub(lambda body: reply(prompt_text(body))) as server:
        env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "HF_DATASETS_CACHE": str(tmp_path / "hf-cache")}
        run = subprocess.run([sys.executable, "-m", "lm_eval", "--model", "local-completions", "--model_args",
                              f"base_url={server.base_url}/completions,model={server.model},tokenizer_backend=None",
                              "--include_path", str(export), "--tasks", "longbench100_100-longbench",
                              "--log_samples", "--output_path", str(tmp_path / "logs")],
                             capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        sent = [body for body in (request.body for request in server.requests)]
    by_id = records(data)
    assert len(sent) == len(by_id)
    rooms = {record["prompt"]: record for record in by_id.values()}
    for body in sent:  # the exact prompt, and the task's answer room
        record = rooms[body["prompt"]]
        assert body["max_tokens"] == {"kv_retrieval": 64, "passage_count": 32, "single_doc_qa": 128, "single_doc_sum": 512}[record["task"]]
    invoke("score", "--data", str(data), "--predictions", str(tmp_path / "logs"), "--metric", "classic",
           "--qa-filter", "off", "--out", str(tmp_path / "lm.json"))
    theirs = per_sample_scores(tmp_path / "lm.json")
    assert theirs == our_predict_scores(data, reply, tmp_path)
    assert 0 < sum(theirs.values()) < len(theirs)  # some right, some wrong: the comparison can fail
    [summary] = (tmp_path / "logs").rglob("results_*.json")
    printed = json.loads(summary.read_text())["results"]
    for task in TASKS:
        for label in ("2k", "4k"):
            mine = [score for sample_id, score in theirs.items() if sample_id.startswith(f"{task}-{label}-")]
            assert printed[f"longbench100_{task}_{label}"]["score,none"] == pytest.approx(sum(mine) / len(mine))


def test_score_refuses_lm_eval_samples_of_other_prompts(data: Path, tmp_path: Path):
    record = next(iter(records(data).values()))
    logs = tmp_path / "logs"
    logs.mkdir()
    sample = {"doc_id": 0, "doc": {"id": record["id"]}, "filtered_resps": ["7"], "prompt_hash": "0" * 64}
    (logs / "samples_longbench100_x_2026.jsonl").write_text(json.dumps(sample) + "\n")
    result = CliRunner().invoke(main, ["score", "--data", str(data), "--predictions", str(logs), "--allow-missing",
                                       "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "Traceback" not in result.output and "other prompts" in result.output
    (logs / "samples_longbench100_x_2026.jsonl").write_text(json.dumps({"doc_id": 0}) + "\n")
    result = CliRunner().invoke(main, ["score", "--data", str(data), "--predictions", str(logs), "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "not an lm-eval sample" in result.output


def test_inspect_task_runs_and_score_reads_its_log(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput

    from longbench100.integrations.inspect_tasks import longbench100

    cache = tmp_path / "tiktoken"  # Inspect's mock model counts tokens with o200k: give tiktoken the bundled ranks
    cache.mkdir()
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(gzip.decompress(_bundled_file(O200K_URL).read_bytes()))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    reply = replier(data)
    asked: list[int] = []

    def model(messages, tools, tool_choice, config) -> ModelOutput:
        asked.append(config.max_tokens)
        return ModelOutput.from_content(model="mockllm", content=reply(messages[-1].text))

    [log] = inspect_eval(longbench100(data=str(data)), model="mockllm/model", model_args={"custom_outputs": model},
                         log_dir=str(tmp_path / "ilogs"), display="none")
    assert log.status == "success" and len(log.samples) == len(records(data))
    assert sorted(set(asked)) == [32, 64, 128, 512]
    invoke("score", "--data", str(data), "--predictions", str(tmp_path / "ilogs"), "--metric", "classic",
           "--qa-filter", "off", "--out", str(tmp_path / "inspect.json"))
    theirs = per_sample_scores(tmp_path / "inspect.json")
    assert theirs == {str(sample.id): sample.scores["longbench100_metric"].value for sample in log.samples}
    assert theirs == our_predict_scores(data, reply, tmp_path)


def test_exports_carry_the_control_twins_when_asked(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    invoke("export", "lm-eval", str(data), str(tmp_path / "plain"))
    assert not list((tmp_path / "plain").glob("*_controls.yaml"))
    invoke("export", "lm-eval", str(data), str(tmp_path / "lm"), "--controls")
    group = (tmp_path / "lm" / "longbench100_controls.yaml").read_text()
    assert all(f"longbench100_{task}_{label}_controls" in group for task in TASKS for label in ("2k", "4k"))
    twins = [json.loads(line) for line in (tmp_path / "lm" / "docs" / "kv_retrieval" / "2k_controls.jsonl").read_text().splitlines()]
    assert {json.loads(twin["record"])["control"] for twin in twins} == {"gold_removed", "context_swapped"}

    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput

    from longbench100.integrations.inspect_tasks import longbench100

    cache = tmp_path / "tiktoken"
    cache.mkdir()
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(gzip.decompress(_bundled_file(O200K_URL).read_bytes()))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    reply = replier(data)

    def model(messages, tools, tool_choice, config) -> ModelOutput:
        return ModelOutput.from_content(model="mockllm", content=reply(messages[-1].text))

    [log] = inspect_eval(longbench100(data=str(data), controls=True), model="mockllm/model",
                         model_args={"custom_outputs": model}, log_dir=str(tmp_path / "ilogs"), display="none")
    twins = records(data / "controls")
    assert log.status == "success" and len(log.samples) == len(records(data)) + len(twins)
    invoke("score", "--data", str(data), "--predictions", str(tmp_path / "ilogs"), "--metric", "classic",
           "--qa-filter", "off", "--controls", "--out", str(tmp_path / "inspect.json"))
    block = json.loads((tmp_path / "inspect.json").read_text())["aggregates"]["controls"]
    assert sum(cell[kind]["n"] for cells in block.values() for cell in cells.values()
               for kind in ("gold_removed", "context_swapped")) == len(twins)
