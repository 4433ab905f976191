"""Metrics on real model answers published with L-Eval (../shared/fixtures/leval-predictions).

The folder is optional: every test here is skipped, with the reason, when it is absent.
"""

import json
from pathlib import Path

import pytest
from rouge import Rouge

from longbench100.judge.prompts import qa_prompt, summary_prompt
from longbench100.scoring.metrics.classic import qa_f1, rouge_l, rouge_l_many
from longbench100.text.answers import split_sentences

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "leval-predictions"
pytestmark = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason=f"real-answer fixtures not found at {FIXTURES}"
)

MODELS = ("turbo-16k-0613", "llama2-13b-chat-4k", "vicuna-13b-16k")
QA_TASKS = ("natural_question", "financial_qa", "scientific_qa", "multidoc_qa", "legal_contract_qa")
SUMMARY_TASKS = (
    "tv_show_summ",
    "patent_summ",
    "news_summ",
    "gov_report_summ",
    "meeting_summ",
    "review_summ",
)


def rows(model: str, task: str) -> list[tuple[str, str, str]]:
    """``(query, reference, prediction)`` for every line of one fixture file."""
    out = []
    for line in (FIXTURES / model / f"{task}.pred.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        prediction = next(value for key, value in record.items() if key.endswith("_pred"))
        out.append((record["query"], record["gt"], prediction))
    return out


def test_qa_f1_on_real_answers_hand_checked():
    turbo = rows("turbo-16k-0613", "natural_question")
    assert turbo[0][1:] == ("April 25 , 2018", "April 25, 2018")
    assert qa_f1(turbo[0][2], [turbo[0][1]]) == 1.0  # punctuation and spacing differ only
    assert turbo[1][1:] == ("10", "10 episodes")
    assert qa_f1(turbo[1][2], [turbo[1][1]]) == pytest.approx(2 / 3)  # P 1/2, R 1
    assert qa_f1(turbo[3][2], [turbo[3][1]]) == 1.0  # '"The Word"' vs "`` The Word ''"
    llama = rows("llama2-13b-chat-4k", "natural_question")
    # "season 2 of handmaids tale started on april 25 2018": 10 tokens, 3 shared with "april 25 2018"
    # -> P 3/10, R 1 -> F1 = 0.6 / 1.3
    assert qa_f1(llama[0][2], [llama[0][1]]) == pytest.approx(0.6 / 1.3)
    assert llama[1][2].strip().endswith("13 episodes.")  # chatty preamble, wrong number
    assert qa_f1(llama[1][2], [llama[1][1]]) == 0.0


@pytest.mark.parametrize("model", MODELS)
def test_qa_f1_bounds_on_every_real_answer(model):
    for task in QA_TASKS:
        for _, reference, prediction in rows(model, task):
            assert 0.0 <= qa_f1(prediction, [reference]) <= 1.0
            assert qa_f1(reference, [reference]) in (
                0.0,
                1.0,
            )  # 0 only when normalisation leaves nothing


@pytest.mark.parametrize("model", MODELS)
def test_rouge_l_scores_whole_real_summaries(model):
    for task in ("tv_show_summ", "patent_summ", "news_summ"):
        for _, reference, prediction in rows(model, task):
            whole = rouge_l(prediction, [reference])
            assert 0.0 <= whole <= 1.0
            assert rouge_l(reference, [reference]) == pytest.approx(1.0)


def longbench_rouge_score(prediction: str, ground_truth: str) -> float:
    """LongBench's official ``rouge_score`` (metrics.py): the ``rouge`` package, any failure scores 0."""
    try:
        return Rouge().get_scores([prediction], [ground_truth], avg=True)["rouge-l"]["f"]
    except Exception:  # noqa: BLE001 - LongBench uses a bare except
        return 0.0


@pytest.mark.parametrize("model", MODELS)
def test_rouge_l_equals_longbench_official_on_real_summaries(model):
    pairs = [
        (prediction, [reference])
        for task in SUMMARY_TASKS
        for _, reference, prediction in rows(model, task)
    ]
    ours = rouge_l_many(pairs)
    official = [longbench_rouge_score(prediction, reference) for prediction, (reference,) in pairs]
    assert len(pairs) > 300
    assert max(abs(a - b) for a, b in zip(ours, official)) < 1e-6
    # the rouge-score variant stays available and really differs on these summaries
    other = rouge_l_many(pairs[:50], "rouge-score")
    assert sum(abs(a - b) for a, b in zip(other, official)) / len(other) > 0.01


def test_chatty_preamble_does_not_reduce_a_summary_to_its_first_line():
    # llama2-chat opens with "Sure! Here is a summary of the scene in N words:" on its own line;
    # the reference implementation scored only that line. We score the whole summary.
    first = rows("llama2-13b-chat-4k", "tv_show_summ")[0]
    assert first[2].lstrip().startswith("Sure! Here is a summary")
    first_line_only = rouge_l(first[2].strip().split("\n")[0], [first[1]])
    assert rouge_l(first[2], [first[1]]) > 2 * first_line_only


@pytest.mark.parametrize("model", MODELS)
def test_judge_prompts_carry_every_sentence_of_real_answers(model):
    for task in SUMMARY_TASKS:
        for query, reference, prediction in rows(model, task):
            sentences = split_sentences(prediction)
            prompt = summary_prompt(query, reference, prediction)
            if not sentences:
                assert prompt is None
                continue
            assert prompt.n_sentences == len(sentences)
            assert f"[{len(sentences)}] {sentences[-1]}" in prompt.text
    for query, reference, prediction in rows(model, "financial_qa"):
        prompt = qa_prompt(query, [reference], prediction)
        assert prompt is None or prediction.strip()[-40:] in prompt.text
