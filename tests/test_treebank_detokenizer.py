"""longbench100.treebank_detokenizer against its oracle, NLTK's TreebankWordDetokenizer.

The table must be NLTK's own (patterns, replacements, flags, order), each rule's literals must be
present wherever its pattern matches (else skipping it would change the output), the contraction gate
must match wherever a contraction rule does, and the output must equal NLTK's on random token lines
built from every literal the rules name, on NLTK's documented examples and on real source lines.
"""

from __future__ import annotations

import random

import pytest
from nltk.tokenize.treebank import TreebankWordDetokenizer

from longbench100 import treebank_detokenizer as ours
from longbench100.treebank_detokenizer import detokenize_line
from tests.conftest import SHARED_SOURCES

NLTK = TreebankWordDetokenizer()

# every literal a rule names, with its near misses, case variants, unicode letters and blanks around them
VOCABULARY = [
    "'t", "'T", "is", "IS", "was", "can", "Can", "CAN", "not", "NOT", "d", "D", "'ye", "gim", "me", "gon", "na", "NA",
    "got", "ta", "lem", "more", "'n", "wan", "'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T", "'s", "'S", "'m",
    "'M", "'d", "'D", "'", "''", "'''", "``", "`", '"', "\"'", "--", "-", "...", "..", ".", ",", ":", ";", "!", "?", "%",
    "#", "$", "(", ")", "[", "]", "{", "}", "<", ">", "&", "*", "word", "It", "they", "U.S.", "3.5", "10", "café",
    "straße", "İstanbul", "\u212a", "ǅ", "e\u0301", "日本", "\t", "\u00a0", "\u2009", "\x1c", "\x85", "", " ", "a\nb",
    "\ue000", "\ue001", "\ue002",
]


def random_lines(count: int, seed: int) -> list[str]:
    """Random token lines over :data:`VOCABULARY`, sometimes glued without a space."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        parts = [rng.choice(VOCABULARY) for _ in range(rng.randint(0, 14))]
        lines.append("".join(part + rng.choice([" ", " ", " ", "", "  "]) for part in parts))
    return lines


def nltk_detokenize(line: str) -> str:
    """NLTK's output for a line split at single spaces, as the cleaning step calls it."""
    return NLTK.detokenize(line.split(" "))


def test_the_rules_are_nltks_own_in_its_order() -> None:
    def table(rules):
        return [(rule.pattern.pattern, rule.replacement, rule.pattern.flags) for rule in rules]

    def nltk_table(rules):
        return [(pattern.pattern, replacement, pattern.flags) for pattern, replacement in rules]

    nltk_contractions = [*NLTK.CONTRACTIONS3, *NLTK.CONTRACTIONS2]
    assert [(p.pattern, p.flags) for p in ours.CONTRACTIONS] == [(p.pattern, p.flags) for p in nltk_contractions]
    assert table(ours.ENDING_QUOTES) == nltk_table(NLTK.ENDING_QUOTES)
    assert table([ours.DOUBLE_DASHES]) == nltk_table([NLTK.DOUBLE_DASHES])
    assert table(ours.PARENS_BRACKETS) == nltk_table(NLTK.PARENS_BRACKETS)
    assert table(ours.PUNCTUATION) == nltk_table(NLTK.PUNCTUATION)
    assert table(ours.STARTING_QUOTES) == nltk_table(NLTK.STARTING_QUOTES)


def test_a_rule_matches_only_where_a_literal_it_needs_is_present() -> None:
    rules = [*ours.ENDING_QUOTES, ours.DOUBLE_DASHES, *ours.PARENS_BRACKETS, *ours.PUNCTUATION, *ours.STARTING_QUOTES]
    matched = 0
    for line in random_lines(6000, seed=1):
        text = f" {line} "
        for rule in rules:
            if rule.pattern.search(text):
                matched += 1
                assert any(need in text for need in rule.needs), (rule.pattern.pattern, text)
        if any(pattern.search(text) for pattern in ours.CONTRACTIONS):
            assert ours.CONTRACTION_GATE.search(text), text
    assert matched > 6000  # the lines exercise the rules


@pytest.mark.parametrize("seed", range(4))
def test_output_equals_nltks_on_random_token_lines(seed: int) -> None:
    lines = random_lines(5000, seed)
    changed = 0
    for line in lines:
        expected = nltk_detokenize(line)
        assert detokenize_line(line) == expected, repr(line)
        changed += expected != line.strip()
    assert changed > 2500


@pytest.mark.parametrize("tokens, expected", [
    ("Good muffins cost $ 3.88 in New York . Please buy me two of them . Thanks .",
     "Good muffins cost $3.88 in New York. Please buy me two of them. Thanks."),
    ("hello , i ca n't feel my feet ! Help ! !", "hello, i can't feel my feet! Help!!"),
    ("He said : Help , help ? ! I can not , `` gon na '' go 't is", 'He said: Help, help?! I cannot, "gonna" go\'tis'),  # NLTK drops the space before 't is
    ("( a [ b ] { c } < d > ) ; 5 % # 1 ... -- ''", '(a [b] {c} <d>); 5% #1...--"'),
])
def test_documented_examples(tokens: str, expected: str) -> None:
    assert detokenize_line(tokens) == nltk_detokenize(tokens) == expected


TREC_QUESTIONS = SHARED_SOURCES / "CogComp" / "trec" / "default" / "train" / "0000.parquet"


@pytest.mark.skipif(not TREC_QUESTIONS.is_file(), reason="the shared source mirror is not here")
def test_output_equals_nltks_on_real_tokenized_lines() -> None:
    import pyarrow.parquet as pq

    questions = pq.read_table(TREC_QUESTIONS, columns=["text"]).column("text").to_pylist()  # Treebank tokens
    assert len(questions) > 5000
    for question in questions:
        assert detokenize_line(question) == nltk_detokenize(question), question
