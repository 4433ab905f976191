"""HELMET-style judging (``--judge-style helmet``) against a fake OpenAI-compatible server.

Summaries: key points extracted once per reference and kept with the data fingerprint, recall over
them, precision over the summary's sentences, score = fluency x F1; QA: fluency 0/1 x correctness / 3.
"""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.judge_styles import resolve_judge_style
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.folders.layout import sealed_manifest
from longbench100.judge.grader import Judge
from longbench100.judge.key_points import KeyPointStore
from longbench100.judge.prompts import helmet_summary_prompt, output_sentences, qa_prompt
from longbench100.judge.setup import PREFLIGHT_PROMPT
from longbench100.llm.options import JudgeConfig
from longbench100.report.settings import differences, read_settings
from tests.scoring.test_predictions import write_dataset, write_predictions
from tests.support.openai_stub import OpenAIStub, prompt_text

REFERENCE = "The council approved the budget. Taxes will rise next year."
KEY_POINTS = ["The council approved the budget", "Taxes will rise next year"]


def _between(prompt: str, opening: str, closing: str) -> str:
    return prompt.split(opening, 1)[1].split(closing, 1)[0]


def _numbered(prompt: str) -> list[str]:
    return re.findall(r"^\[\d+\] (.*)$", prompt, re.MULTILINE)


def careful_judge(body: dict) -> str:
    """Answer each rubric like a careful judge, each in another reply style."""
    prompt = prompt_text(body)
    if "List its key points" in prompt:
        points = [
            sentence.rstrip(".")
            for sentence in output_sentences(_between(prompt, "<<<REFERENCE\n", "\nREFERENCE>>>"))
        ]
        return (
            "Here are the key points.\n```json\n"
            + json.dumps({"key_points": points}, indent=2)
            + "\n```"
        )
    if "<<<SUMMARY" in prompt:
        summary = _between(prompt, "<<<SUMMARY\n", "\nSUMMARY>>>").lower()
        supported = [
            number for number, point in enumerate(_numbered(prompt), 1) if point.lower() in summary
        ]
        return f"Checked every key point.\n{{'supported': {supported},}}"  # single quotes and a trailing comma
    if "<<<REFERENCE" in prompt:
        reference = _between(prompt, "<<<REFERENCE\n", "\nREFERENCE>>>")
        supported = [
            number for number, sentence in enumerate(_numbered(prompt), 1) if sentence in reference
        ]
        return 'Draft: {"fluency": 0, "supported": []}\nFinal:\n' + json.dumps(
            {"fluency": True, "supported": supported}
        )
    if "step by step" in prompt:
        answer = _between(prompt, "<<<ANSWER\n", "\nANSWER>>>")
        correctness = "3" if "2018" in answer else "0"
        return f'The reference gives a date; the answer gives {answer!r}.\n{{"fluency": 1, "correctness": "{correctness}"}}'
    return "OK"


def graded(server: OpenAIStub) -> list[str]:
    return [prompt_text(body) for body in server.bodies if prompt_text(body) != PREFLIGHT_PROMPT]


def make_judge(server: OpenAIStub, fingerprint: str = "a" * 64) -> Judge:
    return Judge(
        JudgeConfig("judge-h", server.base_url, concurrency=2), data_fingerprint=fingerprint
    )


def test_summaries_score_fluency_times_f1_of_sentence_precision_and_key_point_recall():
    prompt = helmet_summary_prompt(
        "Summarise.", REFERENCE, "The council approved the budget. The mayor resigned."
    )
    with OpenAIStub(careful_judge) as server:
        judge = make_judge(server)
        assert judge.grade([prompt], progress=False) == [
            pytest.approx(0.5)
        ]  # precision 1/2, recall 1/2
        assert len(graded(server)) == 3  # key points, precision, recall
    parts = judge.verdicts[prompt.text].parts
    assert (
        parts["fluency"] == 1
        and parts["precision"] == 0.5
        and parts["recall"] == 0.5
        and parts["f1"] == 0.5
    )
    assert (
        parts["supported"],
        parts["n_sentences"],
        parts["supported_key_points"],
        parts["n_key_points"],
    ) == (1, 2, 1, 2)
    assert parts["key_points"] == KEY_POINTS


def test_precision_and_recall_differ_and_f1_combines_them():
    full = helmet_summary_prompt(
        None, REFERENCE, "The council approved the budget."
    )  # precision 1, recall 1/2
    with OpenAIStub(careful_judge) as server:
        assert make_judge(server).grade([full], progress=False) == [pytest.approx(2 / 3)]


def test_key_points_are_extracted_once_per_reference_and_kept_with_the_data_fingerprint():
    summaries = [
        "The council approved the budget.",
        "Taxes will rise next year.",
        "Nothing happened.",
    ]
    prompts = [helmet_summary_prompt(None, REFERENCE, summary) for summary in summaries]
    with OpenAIStub(careful_judge) as server:
        judge = make_judge(server)
        judge.grade(prompts, progress=False)
        assert sum("List its key points" in text for text in graded(server)) == 1
        sent = len(graded(server))
        again = make_judge(server)
        assert not again.needs_calls(prompts)
        assert again.grade(prompts, progress=False) == judge.grade(prompts, progress=False)
        assert len(graded(server)) == sent and again.stats.calls == 0
    config = judge.config
    kept = KeyPointStore(
        config.model,
        base_url=config.base_url,
        max_tokens=config.max_tokens,
        data_fingerprint="a" * 64,
    )
    other = KeyPointStore(
        config.model,
        base_url=config.base_url,
        max_tokens=config.max_tokens,
        data_fingerprint="b" * 64,
    )
    assert kept.get(REFERENCE) == KEY_POINTS and other.get(REFERENCE) is None


def test_an_off_rubric_extraction_leaves_the_summary_ungraded_with_its_reply():
    def sloppy(body: dict) -> str:
        if "List its key points" in prompt_text(body):
            return "Sure! The main points are that the council approved a budget and taxes rise."
        return careful_judge(body)

    prompt = helmet_summary_prompt(None, REFERENCE, "The council approved the budget.")
    with OpenAIStub(sloppy) as server:
        judge = make_judge(server)
        assert judge.grade([prompt], progress=False) == [None]
    verdict = judge.verdicts[prompt.text]
    assert verdict.reason == "invalid reply (key points)" and verdict.reply.startswith(
        "Sure! The main points"
    )
    assert judge.stats.invalid_replies == 1 and judge.key_points.get(REFERENCE) is None


def test_the_plan_counts_key_point_extractions_and_recall_calls_before_any_are_made():
    prompts = [
        helmet_summary_prompt(None, REFERENCE, summary)
        for summary in ("The council approved the budget.", "Taxes rose.")
    ]
    prompts.append(
        helmet_summary_prompt(
            None, "Storms hit the coast. Thousands lost power.", "Storms hit the coast."
        )
    )
    with OpenAIStub(careful_judge) as server:
        judge = make_judge(server)
        plan = judge.plan(prompts)
        assert (plan.key_point_calls, plan.calls, plan.cache_hits) == (
            2,
            2 + 3 + 3,
            0,
        ) and plan.prompt_tokens > 0
        assert len(graded(server)) == 0 and judge.needs_calls(prompts)
        judge.grade(prompts, progress=False)
        assert len(graded(server)) == plan.calls
        after = judge.plan(prompts)
        assert (after.calls, after.key_point_calls, after.cache_hits) == (0, 0, 6)
        assert not judge.needs_calls(prompts)


def test_helmet_qa_scores_fluency_times_correctness_over_three():
    right = qa_prompt("When?", ["April 25, 2018"], "It was April 25, 2018.", "qa_judge_helmet")
    wrong = qa_prompt("When?", ["April 25, 2018"], "In 1999.", "qa_judge_helmet")
    with OpenAIStub(careful_judge) as server:
        judge = make_judge(server)
        assert judge.grade([right, wrong], progress=False) == [1.0, 0.0]
    assert judge.verdicts[right.text].parts == {"fluency": 1, "correctness": 3}


def test_summary_sentences_come_from_the_generators_segmenter():
    assert output_sentences("Dr. Smith met the U.S. team. It won!\n- A list item") == [
        "Dr. Smith met the U.S. team.",
        "It won!",
        "- A list item",
    ]
    assert (
        helmet_summary_prompt(None, REFERENCE, "<think>hmm</think>  ") is None
    )  # nothing to grade: scores 0


# ---- the command -------------------------------------------------------------------------------


@pytest.fixture
def data(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return write_dataset(tmp_path / "data", tasks=("single_doc_qa", "single_doc_sum"), rows=2)


def set_suite_style(data: Path, style: object) -> None:
    manifest = json.loads((data / "manifest.json").read_text())
    suite = {
        "name": "helmet",
        "tasks": ["single_doc_qa", "single_doc_sum"],
        "base_lengths": ["2k", "4k"],
        "metrics": {"single_doc_qa": "qa_judge", "single_doc_sum": "summary_judge"},
        "judge_style": style,
    }
    (data / "manifest.json").write_text(
        json.dumps(sealed_manifest({**manifest, "suite": suite})), encoding="utf-8"
    )


def score(data: Path, server: OpenAIStub, *extra: str) -> tuple[int, str, dict | None]:
    out = data.parent / "results.json"
    out.unlink(missing_ok=True)
    predictions = write_predictions(data.parent / "model", data)
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
            "10",
            "--judge-model",
            "judge-h",
            "--judge-base-url",
            server.base_url,
            *extra,
        ],
    )
    return result.exit_code, result.output, json.loads(out.read_text()) if out.exists() else None


def test_score_judge_style_helmet_grades_with_helmet_rubrics_and_records_the_style(data):
    with OpenAIStub(careful_judge) as server:
        code, output, results = score(data, server, "--judge-style", "helmet")
    assert code == 0, output
    assert results["metrics"] == {
        "single_doc_qa": "qa_judge_helmet",
        "single_doc_sum": "summary_judge_helmet",
    }
    assert results["settings"]["judge_style"] == "helmet"
    summaries = [sample for sample in results["samples"] if sample["task"] == "single_doc_sum"]
    assert {sample["score"] for sample in summaries} == {1.0}
    assert {sample["parts"]["n_key_points"] for sample in summaries} == {2}
    assert (
        sum("List its key points" in text for text in graded(server)) == 1
    )  # one reference in the whole folder


def test_the_data_suite_sets_the_default_style_and_the_option_overrides_it(data):
    set_suite_style(data, "helmet")
    with OpenAIStub(careful_judge) as server:
        _, output, helmet = score(data, server)
        assert helmet["settings"]["judge_style"] == "helmet", output
        _, output, plain = score(data, server, "--judge-style", "100-longbench", "--allow-ungraded")
    assert (
        plain["settings"]["judge_style"] == "100-longbench"
        and plain["metrics"]["single_doc_qa"] == "qa_judge"
    )
    found = differences(
        (Path("a.json"), read_settings(helmet)), (Path("b.json"), read_settings(plain))
    )
    assert "judge_style" in {difference.key for difference in found}


@pytest.mark.parametrize(
    ("style", "named"), [("fancy", "suite.judge_style 'fancy'"), (3, "suite.judge_style must be")]
)
def test_a_bad_recorded_style_is_one_error_line(data, style, named):
    set_suite_style(data, style)
    with OpenAIStub(careful_judge) as server:
        code, output, _ = score(data, server)
    assert (
        code == 2
        and output.startswith("error: manifest.json: ")
        and named in output
        and "Traceback" not in output
    )


def test_resolve_judge_style_refuses_an_unknown_option():
    with pytest.raises(UserError, match="--judge-style 'loud'"):
        resolve_judge_style("loud", None)
    assert resolve_judge_style(None, None) == "100-longbench"


def test_dry_run_counts_key_point_extractions_and_sends_nothing(data):
    with OpenAIStub(careful_judge) as server:
        code, output, results = score(data, server, "--judge-style", "helmet", "--dry-run")
        assert code == 0 and results is None and server.bodies == []
    assert "1 of the calls extract key points" in output
    # distinct prompts: QA 2 questions x (answer, closed-book answer) = 4; summaries (one reference, one summary,
    # 2 instructions): 1 extraction + 2 precision + 1 recall
    assert "dry run: 8 judge calls needed (8 distinct prompts, 0 cached)" in output
