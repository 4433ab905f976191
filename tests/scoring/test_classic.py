"""Classic metrics and text helpers on constructed inputs with hand-computed expectations."""

import pytest

from longbench100.core.errors import UserError
from longbench100.scoring.grading import choose_metrics
from longbench100.scoring.metrics.classic import (
    ROUGE_VARIANTS,
    qa_f1,
    rouge_l,
    rouge_l_many,
    token_f1,
)
from longbench100.text.answers import normalize_answer, split_sentences, strip_reasoning


def test_normalize_answer_drops_case_punctuation_articles():
    assert normalize_answer("The  Cat's, an APPLE!") == "cats apple"
    assert normalize_answer("`` The Word ''") == "word"


def test_token_f1_hand_computed():
    # 3 shared tokens; precision 3/4, recall 3/3 -> F1 = 2 * 0.75 * 1 / 1.75 = 6/7
    assert token_f1(["cat", "sat", "on", "mat"], ["cat", "on", "mat"]) == pytest.approx(6 / 7)
    # repeated tokens count once per occurrence on both sides: common {a: 1} -> P 1/2, R 1/1 -> 2/3
    assert token_f1(["a", "a"], ["a"]) == pytest.approx(2 / 3)
    assert token_f1(["x"], ["y"]) == 0.0
    assert token_f1([], ["y"]) == 0.0


def test_qa_f1_normalises_and_takes_the_best_reference():
    # "cat sat on mat" vs "cat on mat" after normalisation -> 6/7
    assert qa_f1("The cat sat on the mat.", ["cat on a mat"]) == pytest.approx(6 / 7)
    # best of two references: "paris" vs "paris" = 1.0 beats "city of paris"
    assert qa_f1("Paris", ["the city of Paris", "Paris"]) == 1.0
    # "10 episodes" vs "10": P 1/2, R 1 -> 2/3
    assert qa_f1("10 episodes", ["10"]) == pytest.approx(2 / 3)
    assert qa_f1("", ["10"]) == 0.0
    assert qa_f1("<think>10? 13?</think>13", ["13"]) == 1.0


def test_rouge_l_hand_computed_rouge_score_variant():
    # LCS "the cat was under the bed" = 6; P 6/7, R 6/6 -> F = 2PR/(P+R) = 12/13
    hand = rouge_l(
        "the cat was found under the bed", ["the cat was under the bed"], variant="rouge-score"
    )
    assert hand == pytest.approx(12 / 13)
    # lower-cased, one LCS over the whole text: "b c" of "b c. a" -> P = R = 2/3
    assert rouge_l("The Cat sat", ["the cat sat"], variant="rouge-score") == pytest.approx(1.0)
    assert rouge_l("b c. a", ["a b c"], variant="rouge-score") == pytest.approx(2 / 3)


def test_rouge_l_hand_computed_longbench_variant():
    # the rouge package counts distinct words: LCS {the, cat, was, under, bed} = 5 of 5 reference
    # words and 6 prediction words -> P 5/6, R 1 -> F = 10/11
    hand = rouge_l(
        "the cat was found under the bed", ["the cat was under the bed"], variant="longbench"
    )
    assert hand == pytest.approx(10 / 11)
    # case-sensitive: only "sat" is shared -> 1/3
    assert rouge_l("The Cat sat", ["the cat sat"], variant="longbench") == pytest.approx(1 / 3)
    # sentences split at "."; the union of the reference's LCS with "b c" and with "a" is all three words
    assert rouge_l("b c. a", ["a b c"], variant="longbench") == pytest.approx(1.0)


@pytest.mark.parametrize("variant", ROUGE_VARIANTS)
def test_rouge_l_cases_both_variants_agree_on(variant):
    # order matters: LCS of "c b a" and "a b c" is 1 -> P = R = 1/3 -> F = 1/3
    assert rouge_l("c b a", ["a b c"], variant=variant) == pytest.approx(1 / 3)
    assert rouge_l("", ["a b c"], variant=variant) == 0.0
    assert rouge_l(" . ", ["a b c"], variant=variant) == 0.0


def test_rouge_l_default_variant_is_longbench_and_unknown_names_are_refused():
    assert rouge_l("The Cat sat", ["the cat sat"]) == rouge_l(
        "The Cat sat", ["the cat sat"], variant="longbench"
    )
    with pytest.raises(
        UserError,
        match="--rouge-variant rouge2: choose from longbench, longbench-library, rouge-score",
    ):
        rouge_l_many([("a", ["a"])], "rouge2")


def test_longbench_rouge_l_is_the_same_from_any_call_depth():
    # the rouge package rebuilds each LCS recursively: a 300-word sentence needs about 300 frames,
    # which called from 800 frames deep would pass Python's limit of 1000 without a fresh thread
    sentence = " ".join(f"w{index}" for index in range(300))

    def nested(depth: int) -> float:
        return rouge_l(sentence, [sentence]) if depth == 0 else nested(depth - 1)

    assert nested(800) == pytest.approx(1.0)
    # a 1500-word sentence is past the limit from any depth: 0, as in LongBench
    too_long = " ".join(f"w{index}" for index in range(1500))
    assert rouge_l(too_long, [too_long]) == 0.0
    assert rouge_l(too_long, [too_long], variant="rouge-score") == pytest.approx(1.0)


@pytest.mark.parametrize("variant", ROUGE_VARIANTS)
def test_rouge_l_scores_the_whole_summary_not_its_first_line(variant):
    # the whole text matches; cutting to the first line would give P 1, R 1/2 -> 2/3
    assert rouge_l(
        "alpha beta\ngamma delta", ["alpha beta gamma delta"], variant=variant
    ) == pytest.approx(1.0)


@pytest.mark.parametrize("variant", ROUGE_VARIANTS)
def test_rouge_l_takes_the_best_reference(variant):
    assert rouge_l("a b c d", ["x y", "a b c d"], variant=variant) == pytest.approx(1.0)


def test_strip_reasoning():
    assert strip_reasoning("<think>\nlong\n</think>\n\nPassage 3") == "Passage 3"
    assert strip_reasoning("reasoning with no opening tag</think> 4") == "4"
    assert strip_reasoning("plain") == "plain"


def test_split_sentences_keeps_abbreviations_and_lines():
    text = 'Sure! Here is a summary:\n\nDr. Owen Harper is sad. He said "no." Then J. K. Rowling left.\n- A bullet'
    assert split_sentences(text) == [
        "Sure!",
        "Here is a summary:",
        "Dr. Owen Harper is sad.",
        'He said "no."',
        "Then J. K. Rowling left.",
        "- A bullet",
    ]
    assert split_sentences("  \n ") == []


def test_choose_metrics_auto_classic_judge():
    tasks = ["kv_retrieval", "single_doc_qa", "multi_doc_sum"]
    assert choose_metrics(tasks, "auto", False) == {
        "kv_retrieval": "accuracy",
        "single_doc_qa": "qa_f1",
        "multi_doc_sum": "rouge_l",
    }
    assert choose_metrics(tasks, "auto", True) == {
        "kv_retrieval": "accuracy",
        "single_doc_qa": "qa_judge",
        "multi_doc_sum": "summary_judge",
    }
    assert choose_metrics(tasks, "classic", True)["single_doc_qa"] == "qa_f1"
    with pytest.raises(UserError, match="--judge-model"):
        choose_metrics(tasks, "judge", False)


@pytest.mark.parametrize("variant", ROUGE_VARIANTS)
def test_rouge_l_many_matches_rouge_l_in_and_out_of_process(variant):
    pairs = [
        ("the cat was found under the bed", ["the cat was under the bed"]),
        ("c b a", ["a b c"]),
        ("", ["x"]),
        ("a b c d", ["x y", "a b c d"]),
        ("The Cat sat", ["the cat sat"]),
    ]
    expected = [rouge_l(*pair, variant=variant) for pair in pairs]
    assert rouge_l_many(pairs, variant, workers=1) == expected
    assert rouge_l_many(pairs, variant, workers=2, min_parallel=1) == expected


def test_rouge_l_many_scores_a_repeated_pair_once(monkeypatch):
    from longbench100.scoring.metrics import classic

    pairs = [
        ("the cat sat", ["the cat sat down"]),
        ("a dog ran", ["the cat sat down"]),
        ("the cat sat", ["the cat sat down"]),
        ("the cat sat", ["the cat sat down", "x"]),
        ("the cat sat", ["the cat sat down"]),
    ]
    expected = [rouge_l(*pair) for pair in pairs]
    scored: list[tuple[str, list[str]]] = []

    def counting(prediction, answers, variant="longbench"):
        scored.append((prediction, answers))
        return rouge_l(prediction, answers, variant)

    monkeypatch.setattr(classic, "rouge_l", counting)
    assert rouge_l_many(pairs, workers=1) == expected
    assert scored == [pairs[0], pairs[1], pairs[3]]
