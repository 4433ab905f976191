"""Our LongBench ROUGE-L equals the ``rouge`` package's, pair for pair, with the package as the oracle."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from rouge import Rouge

from longbench100.scoring.metrics import rouge_lcs
from longbench100.scoring.metrics.classic import ROUGE_VARIANTS, _longbench_f, rouge_l, rouge_l_many
from longbench100.scoring.metrics.rouge_lcs import (
    NeedsLibrary,
    longbench_rouge_l_f,
    rebuilt_lcs_words,
)

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "leval-predictions"


def library(prediction: str, reference: str) -> float:
    """What LongBench computes: the package's ROUGE-L F, 0 where it raises."""
    try:
        return Rouge(metrics=["rouge-l"], stats=["f"]).get_scores(
            [prediction], [reference], avg=True
        )["rouge-l"]["f"]
    except Exception:  # noqa: BLE001 - LongBench's bare except
        return 0.0


def ours(prediction: str, reference: str) -> float | None:
    """Ours, or ``None`` where the pair is handed to the library (too deep a walk)."""
    try:
        return longbench_rouge_l_f(prediction, reference)
    except NeedsLibrary:
        return None
    except ValueError:
        return 0.0


@pytest.mark.parametrize(
    "prediction,reference",
    [
        ("", "a b c"),
        ("a b c", ""),
        ("", ""),
        (".", "a"),
        ("a", "a"),
        ("a", "b"),
        ("a a a a", "a"),
        ("the cat. the cat.", "the cat sat. on the mat."),
        ("b a", "a b"),
        ("a b", "b a"),
        ("x . . y", "x y"),
        ("  \t\n ", "a"),
        ("a.b.c", "c.b.a"),
        ("日本 語. é", "é 日本"),
        ("1.5 2.5", "1 5 2 5"),
    ],
)
def test_edge_cases_match_the_package(prediction: str, reference: str):
    assert ours(prediction, reference) == library(prediction, reference)
    assert _longbench_f(prediction, reference) == library(prediction, reference)


def test_ties_are_rebuilt_as_the_package_walks():
    """'a b' against 'b a' has two LCS of one word; the package's walk (left on a tie) keeps the
    reference's last word ('b'), and the package's own rebuild agrees."""
    from rouge.rouge_score import _recon_lcs

    assert (
        rebuilt_lcs_words(["a", "b"], ["b", "a"], {"b": 1, "a": 2})
        == {"b"}
        == _recon_lcs(["a", "b"], ["b", "a"])._ngrams
    )
    assert (
        rebuilt_lcs_words(["b", "a"], ["a", "b"], {"a": 1, "b": 2})
        == {"a"}
        == _recon_lcs(["b", "a"], ["a", "b"])._ngrams
    )


def test_random_texts_match_the_package():
    rng = random.Random(7)
    vocabulary = [
        "a",
        "b",
        "c",
        "the",
        "cat",
        "é",
        "日本",
        ".",
        "  ",
        "\t",
        "\n",
        "x.y",
        "..",
        "1.5",
        "A",
        "a.",
    ]
    checked = 0
    for _ in range(3000):

        def text() -> str:
            size = rng.choice([0, 1, 2, 3, 5, 10, 30, 80])
            return "".join(
                rng.choice(vocabulary) + rng.choice([" ", "", "  ", ". "]) for _ in range(size)
            )

        prediction, reference = text(), text()
        mine = ours(prediction, reference)
        if mine is not None:
            checked += 1
            assert mine == library(prediction, reference), (prediction, reference)
    assert checked > 2900


def test_a_walk_too_deep_is_left_to_the_package():
    long_sentence = " ".join(f"w{i % 7}" for i in range(rouge_lcs.SAFE_WALK + 50))
    with pytest.raises(NeedsLibrary):
        longbench_rouge_l_f(long_sentence, long_sentence)
    assert _longbench_f(long_sentence, long_sentence) == library(long_sentence, long_sentence)
    very_long = " ".join(
        f"w{i % 11}" for i in range(1500)
    )  # deeper than the package's recursion allows: 0
    assert (
        _longbench_f(very_long, very_long)
        == 0.0
        == rouge_l(very_long, [very_long], "longbench-library")
    )


def test_the_package_stays_available_as_a_variant():
    assert "longbench-library" in ROUGE_VARIANTS
    pairs = [("the cat sat on the mat. it was red.", ["a cat sat. the mat was red."]), ("", ["x"])]
    assert rouge_l_many(pairs, "longbench") == rouge_l_many(pairs, "longbench-library")


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"real-answer fixtures not found at {FIXTURES}")
def test_every_real_fixture_pair_matches_the_package():
    pairs = []
    for path in sorted(FIXTURES.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            pairs.append((next(v for k, v in record.items() if k.endswith("_pred")), record["gt"]))
    assert len(pairs) > 2000
    assert [_longbench_f(p, r) for p, r in pairs] == [library(p, r) for p, r in pairs]
