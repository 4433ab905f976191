"""predict over several servers of one model: least busy first, a dead server dropped, nothing lost."""

from __future__ import annotations

import threading
from pathlib import Path

from click.testing import CliRunner

from longbench100.cli import main
from longbench100.predict.options import PredictOptions
from longbench100.predict.run import run_predictions
from tests.support.openai_stub import DROP, OpenAIStub, prompt_text
from tests.support.predict_helpers import read_predictions, write_data

LAYOUT = {("kv_retrieval", "2k"): 20, ("passage_count", "2k"): 20}


def answer(body: dict) -> str:
    return f"answer to {prompt_text(body)[:20]}"


def predictions_by_id(folder: Path) -> dict[str, str]:
    return {record["id"]: record["prediction"] for record in read_predictions(folder)}


def test_requests_are_spread_over_every_server_and_answers_are_the_same(tmp_path: Path):
    data = write_data(tmp_path / "data", LAYOUT)
    with OpenAIStub(answer) as one:
        assert (
            CliRunner()
            .invoke(
                main,
                [
                    "predict",
                    "--data",
                    str(data),
                    "--model",
                    one.model,
                    "--base-url",
                    one.base_url,
                    "--out",
                    str(tmp_path / "single"),
                ],
            )
            .exit_code
            == 0
        )
    urls = tmp_path / "servers.txt"
    with OpenAIStub(answer) as a, OpenAIStub(answer) as b, OpenAIStub(answer) as c:
        urls.write_text(f"# replicas\n{c.base_url}\n")
        result = CliRunner().invoke(
            main,
            [
                "predict",
                "--data",
                str(data),
                "--model",
                a.model,
                "--base-url",
                a.base_url,
                "--base-url",
                b.base_url,
                "--base-urls-file",
                str(urls),
                "--concurrency",
                "2",
                "--out",
                str(tmp_path / "three"),
            ],
        )
        counts = [len(server.requests) for server in (a, b, c)]
    assert result.exit_code == 0, result.output
    assert (
        all(count > 0 for count in counts) and sum(counts) == 40
    )  # one request per sample (no closed-book tasks here)
    assert predictions_by_id(tmp_path / "three") == predictions_by_id(tmp_path / "single")


def test_a_server_that_dies_mid_run_is_dropped_and_its_requests_go_elsewhere(tmp_path: Path):
    data = write_data(tmp_path / "data", LAYOUT)
    enough = threading.Event()
    dying_requests: list[int] = []

    def dying(body: dict):
        dying_requests.append(1)
        if (
            len(dying_requests) >= 5
        ):  # from now on it hangs up on open connections and takes no new ones
            enough.set()
            return DROP
        return answer(body)

    with OpenAIStub(answer) as healthy, OpenAIStub(dying) as doomed:
        options = PredictOptions(
            data_dir=data,
            out_dir=tmp_path / "pred",
            model=healthy.model,
            base_url=healthy.base_url,
            more_base_urls=(doomed.base_url,),
            concurrency=2,
            progress=False,
        )
        outcome: dict = {}
        runner = threading.Thread(
            target=lambda: outcome.setdefault("summary", run_predictions(options))
        )
        runner.start()
        enough.wait(timeout=60)
        doomed.stop()  # later connections are refused
        runner.join(timeout=300)
    summary = outcome["summary"]
    assert not summary.failed and summary.done == 40
    assert len(healthy.requests) >= 40 - 4  # the dead server's work went to the healthy one
    answers = predictions_by_id(tmp_path / "pred")
    assert len(answers) == 40 and all(text.startswith("answer to") for text in answers.values())


def test_the_same_server_twice_and_no_server_are_refused(tmp_path: Path):
    data = write_data(tmp_path / "data", LAYOUT)
    result = CliRunner().invoke(
        main,
        [
            "predict",
            "--data",
            str(data),
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "p"),
        ],
    )
    assert result.exit_code == 2 and "a server is given twice" in result.output
    no_server = ["predict", "--data", str(data), "--model", "m", "--out", str(tmp_path / "p")]
    result = CliRunner().invoke(main, no_server, env={"OPENAI_BASE_URL": None})
    assert result.exit_code == 2 and "give the server" in result.output
    assert "OPENAI_BASE_URL" in result.output
