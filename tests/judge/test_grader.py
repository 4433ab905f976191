"""The LLM-judge path end to end against a fake OpenAI-compatible server on 127.0.0.1."""

import json
import re
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.data_records import parse_record
from longbench100.judge.cache import JudgeCache
from longbench100.judge.grader import Judge
from longbench100.judge.prompts import qa_prompt
from longbench100.judge.setup import PREFLIGHT_PROMPT
from longbench100.llm.options import JudgeConfig
from longbench100.scoring.grading import GradeJob, grade_jobs
from tests.scoring.test_predictions import make_record, write_dataset, write_predictions
from tests.support.openai_stub import OpenAIStub, prompt_text

TASKS = ("kv_retrieval", "single_doc_qa", "single_doc_sum")
LABELS = ("2k", "4k", "6k", "8k")


def good_judge(body: dict) -> str:
    """Grade like a careful judge: right QA answers 2 x 3, unknown answers 2 x 0, summaries fully supported."""
    prompt = prompt_text(body)
    if "impartial grader" in prompt:
        answer = prompt.split("<<<ANSWER\n", 1)[1].split("\nANSWER>>>", 1)[0]
        correctness = 3 if "2018" in answer else 0
        return (
            f'The answer is judged.\n```json\n{{"fluency": 2, "correctness": {correctness}}}\n```'
        )
    numbers = re.findall(r"^\[(\d+)\] ", prompt, re.MULTILINE)
    return "Each sentence is backed.\n" + json.dumps(
        {"fluency": 1, "supported": [int(n) for n in numbers]}
    )


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """A small data folder, a model's predictions (one closed-book answer right at row 1), an empty cache."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = write_dataset(tmp_path / "data", tasks=TASKS, labels=LABELS, rows=2)
    predictions = write_predictions(
        tmp_path / "model-a",
        data,
        closed_book=lambda record: "2018" if record["row"] == 1 else "I do not know.",
    )
    return tmp_path, data, predictions


def run_score(
    tmp_path: Path, data: Path, predictions: Path, server: OpenAIStub, *extra: str
) -> tuple[str, dict | None]:
    """Run ``longbench100 score`` with the stub as judge; return its output and results.json (if written)."""
    out = tmp_path / "results.json"
    out.unlink(missing_ok=True)
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--n-boot",
            "20",
            "--judge-model",
            "judge-x",
            "--judge-base-url",
            server.base_url,
            "--judge-concurrency",
            "2",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return result.output, json.loads(out.read_text()) if out.exists() else None


def graded_bodies(server: OpenAIStub) -> list[dict]:
    """The grading requests the stub received (the judge preflight's test request left out)."""
    return [body for body in server.bodies if prompt_text(body) != PREFLIGHT_PROMPT]


def scores_by_id(results: dict) -> dict[str, dict]:
    return {sample["id"]: sample for sample in results["samples"]}


def test_judge_grades_good_answers_and_applies_the_filter(setup):
    tmp_path, data, predictions = setup
    with OpenAIStub(good_judge) as server:
        output, results = run_score(tmp_path, data, predictions, server)
        bodies = graded_bodies(server)
    assert results["metrics"] == {
        "kv_retrieval": "accuracy",
        "single_doc_qa": "qa_judge",
        "single_doc_sum": "summary_judge",
    }
    samples = scores_by_id(results)
    assert samples["single_doc_qa-8k-0000"]["score"] == 1.0
    assert samples["single_doc_qa-8k-0000"]["closed_book_score"] == 0.0
    assert (
        samples["single_doc_qa-8k-0001"]["closed_book_score"] == 1.0
        and samples["single_doc_qa-8k-0001"]["filtered"]
    )
    assert samples["single_doc_sum-2k-0000"]["score"] == 1.0
    assert results["qa_filter"]["tasks"]["single_doc_qa"]["8k"] == {
        "n": 2,
        "dropped": 1,
        "no_closed_book": 0,
        "closed_book_ungraded": 0,
    }
    # identical prompts (the same answer to the same question at several lengths) are sent once
    distinct = {prompt_text(body) for body in bodies}
    assert len(distinct) == len(bodies) == results["judge"]["calls"]
    assert all(body["temperature"] == 0 and body["model"] == "judge-x" for body in bodies)
    assert server.peak_concurrency <= 2
    assert results["aggregates"]["tasks"]["single_doc_qa"]["n_filtered"] == 4
    assert "single_doc_qa dropped 2k 1/2, 4k 1/2, 6k 1/2, 8k 1/2" in output


def test_rerun_hits_the_cache_and_sends_nothing(setup):
    tmp_path, data, predictions = setup
    with OpenAIStub(good_judge) as server:
        _, first = run_score(tmp_path, data, predictions, server)
        sent = len(graded_bodies(server))
        output, second = run_score(tmp_path, data, predictions, server)
        dry, _ = run_score(tmp_path, data, predictions, server, "--dry-run")
        assert len(graded_bodies(server)) == sent
    assert second["judge"]["calls"] == 0 and second["judge"]["cache_hits"] == sent
    assert [s["score"] for s in second["samples"]] == [s["score"] for s in first["samples"]]
    assert "dry run: 0 judge calls needed" in dry
    cache_files = list((tmp_path / "cache" / "judge").glob("judge-x-*/*/*.json"))
    assert len(cache_files) == sent


def test_dry_run_counts_calls_and_tokens_without_sending(setup):
    tmp_path, data, predictions = setup
    with OpenAIStub(good_judge) as server:
        output, results = run_score(tmp_path, data, predictions, server, "--dry-run")
        assert server.requests == [] and results is None  # no preflight either
        match = re.search(
            r"dry run: (\d+) judge calls needed .* carrying (\d+) prompt tokens", output
        )
        assert match and int(match.group(2)) > 100 * int(match.group(1)) > 0
        run_score(tmp_path, data, predictions, server)
        assert len(graded_bodies(server)) == int(match.group(1))


def test_malformed_judge_output_leaves_samples_ungraded_not_zero(setup):
    tmp_path, data, predictions = setup

    def sloppy(body: dict) -> str:
        prompt = prompt_text(body)
        if "impartial grader" in prompt and "<<<ANSWER\nApril 25, 2018\nANSWER>>>" in prompt:
            return "This answer looks great, top marks!"  # no verdict at all
        return good_judge(body)

    with OpenAIStub(sloppy) as server:
        output, results = run_score(tmp_path, data, predictions, server, "--allow-ungraded")
    samples = scores_by_id(results)
    assert samples["single_doc_qa-4k-0000"]["score"] is None
    assert samples["single_doc_qa-4k-0000"]["filtered"] is False
    assert results["ungraded"] == 4  # row 0 at four lengths; row 1 is filtered, so not counted
    assert results["judge"]["invalid_replies"] == 8
    assert results["aggregates"]["tasks"]["single_doc_qa"]["n_ungraded"] == 4
    assert "could not be graded by the judge" in output


def test_429_then_success_is_retried(setup):
    tmp_path, data, predictions = setup
    seen: set[str] = set()
    lock = threading.Lock()

    def busy_first(body: dict):
        prompt = prompt_text(body)
        with lock:
            first = prompt not in seen
            seen.add(prompt)
        if first:
            return (
                429,
                {"error": {"message": "rate limited", "type": "rate_limit"}},
                {"Retry-After": "0"},
            )
        return good_judge(body)

    with OpenAIStub(busy_first) as server:
        _, results = run_score(tmp_path, data, predictions, server)
        assert len(server.requests) == 2 * len(seen)
    assert results["ungraded"] == 0 and results["judge"]["failed_calls"] == 0
    assert scores_by_id(results)["single_doc_qa-2k-0000"]["score"] == 1.0


def test_a_judge_that_keeps_failing_grades_none_and_caches_nothing(tmp_path):
    def broken(body: dict):
        return 503, {"error": {"message": "overloaded"}}, {"Retry-After": "0"}

    prompt = qa_prompt("When?", ["2018"], "In 2018.")
    with OpenAIStub(broken) as server:
        judge = Judge(
            JudgeConfig("judge-y", server.base_url, max_retries=2), JudgeCache("judge-y", tmp_path)
        )
        assert judge.grade([prompt, prompt], progress=False) == [None, None]
        assert len(server.requests) == 3  # one distinct prompt, tried 1 + 2 times
    assert judge.stats.failed == {"HTTP 503": 1}
    assert judge.cache.get(prompt.text) is None


def test_empty_answers_score_zero_without_a_judge_call(tmp_path):
    with OpenAIStub(good_judge) as server:
        judge = Judge(JudgeConfig("judge-z", server.base_url), JudgeCache("judge-z", tmp_path))
        record = parse_record(make_record("single_doc_sum", "8k", 0), "x:1")
        assert grade_jobs([GradeJob(record, "summary_judge", "  \n")], judge, progress=False) == [
            0.0
        ]
        assert server.requests == []


def chatty_judge(body: dict) -> str:
    """A judge that reasons for 40 words before its verdict: cut off below 40 + a few tokens."""
    return " ".join(["thinking"] * 40) + "\n" + good_judge(body)


def test_truncated_replies_are_ungraded_not_cached_and_max_tokens_is_part_of_the_key(setup):
    tmp_path, data, predictions = setup
    with OpenAIStub(chatty_judge) as server:
        output, cut = run_score(
            tmp_path, data, predictions, server, "--judge-max-tokens", "16", "--allow-ungraded"
        )
        sent = len(graded_bodies(server))
        assert all(body["max_tokens"] == 16 for body in graded_bodies(server))
        assert cut["judge"]["truncated_replies"] > 0 and cut["ungraded"] > 0
        assert "cut off at --judge-max-tokens" in output
        assert not list(
            (tmp_path / "cache" / "judge").rglob("*.json")
        )  # nothing cut off was cached
        # a larger budget asks again (nothing stale is reused) and grades everything
        _, full = run_score(tmp_path, data, predictions, server, "--judge-max-tokens", "1024")
        assert len(graded_bodies(server)) == 2 * sent and full["judge"]["cache_hits"] == 0
        assert full["ungraded"] == 0 and full["judge"]["truncated_replies"] == 0
        # the same budget again is all cache hits; another budget is a separate cache
        _, again = run_score(tmp_path, data, predictions, server, "--judge-max-tokens", "1024")
        assert len(graded_bodies(server)) == 2 * sent and again["judge"]["cache_hits"] == sent
        run_score(tmp_path, data, predictions, server, "--judge-max-tokens", "2048")
        assert len(graded_bodies(server)) == 3 * sent


def test_another_base_url_is_another_cache(setup):
    tmp_path, data, predictions = setup
    with OpenAIStub(good_judge) as first, OpenAIStub(good_judge) as second:
        run_score(tmp_path, data, predictions, first)
        _, results = run_score(tmp_path, data, predictions, second)
        assert len(graded_bodies(second)) == len(graded_bodies(first)) > 0
        assert (
            results["judge"]["cache_hits"] == 0 and results["judge"]["base_url"] == second.base_url
        )
        run_score(tmp_path, data, predictions, first)
        assert len(graded_bodies(first)) == len(
            graded_bodies(second)
        )  # first's replies are still cached


def test_unparsable_replies_are_not_cached(tmp_path):
    prompt = qa_prompt("When?", ["2018"], "In 2018.")
    replies = iter(["Looks right to me!", '{"fluency": 2, "correctness": 3}'])
    with OpenAIStub(lambda body: next(replies)) as server:
        judge = Judge(JudgeConfig("judge-u", server.base_url), JudgeCache("judge-u", tmp_path))
        assert judge.grade([prompt], progress=False) == [None]
        assert judge.cache.get(prompt.text) is None and judge.stats.invalid_replies == 1
        assert judge.grade([prompt], progress=False) == [
            1.0
        ]  # asked again, not served the bad reply
        assert len(server.requests) == 2 and judge.cache.get(prompt.text) is not None
        assert judge.grade([prompt], progress=False) == [1.0] and len(server.requests) == 2


def test_cache_folder_depends_on_model_base_url_and_max_tokens(tmp_path):
    folders = {
        JudgeCache("m", tmp_path, base_url="http://a/v1", max_tokens=1024).folder,
        JudgeCache("m", tmp_path, base_url="http://b/v1", max_tokens=1024).folder,
        JudgeCache("m", tmp_path, base_url="http://a/v1", max_tokens=2048).folder,
        JudgeCache("n", tmp_path, base_url="http://a/v1", max_tokens=1024).folder,
    }
    assert len(folders) == 4
    assert (
        JudgeCache("m", tmp_path, base_url="http://a/v1/", max_tokens=1024).folder
        == JudgeCache("m", tmp_path, base_url="http://a/v1", max_tokens=1024).folder
    )


def test_ungraded_closed_book_answers_are_reported_in_the_terminal(setup):
    tmp_path, data, predictions = setup

    def no_verdict_for_closed_book(body: dict) -> str:
        if "<<<ANSWER\nI do not know.\nANSWER>>>" in prompt_text(body):
            return "Hard to say."
        return good_judge(body)

    with OpenAIStub(no_verdict_for_closed_book) as server:
        output, results = run_score(tmp_path, data, predictions, server)
    assert results["qa_filter"]["tasks"]["single_doc_qa"]["2k"]["closed_book_ungraded"] == 1
    assert "4 whose closed-book answer the judge could not grade" in output
