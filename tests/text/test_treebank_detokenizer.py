"""longbench100.text.treebank_detokenizer against its oracle, NLTK's TreebankWordDetokenizer.

The table must be NLTK's own (patterns, replacements, flags, order), each rule's literals must be
present wherever its pattern matches (else skipping it would change the output), the contraction gate
must match wherever a contraction rule does, and the output must equal NLTK's on random token lines
built from every literal the rules name, on NLTK's documented examples and on real source lines.
"""

from __future__ import annotations

import random

import pytest
import regex
from nltk.tokenize.treebank import TreebankWordDetokenizer

from longbench100.text import treebank_detokenizer as ours
from longbench100.text.treebank_detokenizer import detokenize_line
from tests.conftest import SHARED_SOURCES

NLTK = TreebankWordDetokenizer()

# every literal a rule names, with its near misses, case variants, unicode letters and blanks around them
VOCABULARY = [
    "'t",
    "'T",
    "is",
    "IS",
    "was",
    "can",
    "Can",
    "CAN",
    "not",
    "NOT",
    "d",
    "D",
    "'ye",
    "gim",
    "me",
    "gon",
    "na",
    "NA",
    "got",
    "ta",
    "lem",
    "more",
    "'n",
    "wan",
    "'ll",
    "'LL",
    "'re",
    "'RE",
    "'ve",
    "'VE",
    "n't",
    "N'T",
    "'s",
    "'S",
    "'m",
    "'M",
    "'d",
    "'D",
    "'",
    "''",
    "'''",
    "``",
    "`",
    '"',
    "\"'",
    "--",
    "-",
    "...",
    "..",
    ".",
    ",",
    ":",
    ";",
    "!",
    "?",
    "%",
    "#",
    "$",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "&",
    "*",
    "word",
    "It",
    "they",
    "U.S.",
    "3.5",
    "10",
    "café",
    "straße",
    "İstanbul",
    "\u212a",
    "ǅ",
    "e\u0301",
    "日本",
    "\t",
    "\u00a0",
    "\u2009",
    "\x1c",
    "\x85",
    "",
    " ",
    "a\nb",
    "\ue000",
    "\ue001",
    "\ue002",
]


CONTRACTION_VOCABULARY = [word for word in VOCABULARY[:26] if word != "word"] + [
    "Gon",
    "NA",
    "Wan",
    "'T",
    "WAS",
    "iſ",
    "waſ",
    "ıs",
    "İS",
    "x",
    "\t",
    "",
]


def random_lines(count: int, seed: int, vocabulary: list[str] = VOCABULARY) -> list[str]:
    """Random token lines over ``vocabulary``, sometimes glued without a space."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        parts = [rng.choice(vocabulary) for _ in range(rng.randint(0, 14))]
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
    assert [(p.pattern, p.flags) for p in ours.CONTRACTIONS] == [
        (p.pattern, p.flags) for p in nltk_contractions
    ]
    assert table(ours.ENDING_QUOTES) == nltk_table(NLTK.ENDING_QUOTES)
    assert table([ours.DOUBLE_DASHES]) == nltk_table([NLTK.DOUBLE_DASHES])
    assert table(ours.PARENS_BRACKETS) == nltk_table(NLTK.PARENS_BRACKETS)
    assert table(ours.PUNCTUATION) == nltk_table(NLTK.PUNCTUATION)
    assert table(ours.STARTING_QUOTES) == nltk_table(NLTK.STARTING_QUOTES)


def test_a_rule_matches_only_where_a_literal_it_needs_is_present() -> None:
    rules = [
        *ours.ENDING_QUOTES,
        ours.DOUBLE_DASHES,
        *ours.PARENS_BRACKETS,
        *ours.PUNCTUATION,
        *ours.STARTING_QUOTES,
    ]
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


@pytest.mark.parametrize("seed", range(3))
def test_in_a_spaced_text_a_rule_matches_only_where_a_spaced_literal_is_present(seed: int) -> None:
    """Walk each line through the rules as the detokenizer does (every rule run), and wherever the text's only
    blank is the space, check that a matching rule finds one of its spaced literals (a contraction rule on ASCII text:
    its words in lower case), that its literal swaps (where it has them) give what its pattern gives, and that it
    leaves the text spaced."""
    blank = regex.compile(r"\s")  # the rules' engine's blank

    def spaced(text: str) -> bool:
        return not any(blank.match(character) for character in text.replace(" ", ""))

    rng = random.Random(seed)
    matched = swaps = contractions = 0
    lines = random_lines(6000, seed=10 + seed) + random_lines(
        3000, seed=30 + seed, vocabulary=CONTRACTION_VOCABULARY
    )
    for line in lines + [
        line.replace(rng.choice(["\t", "\u00a0"]), " ")
        for line in random_lines(6000, seed=20 + seed)
    ]:
        text = f" {line} "
        for pattern, words in zip(ours.CONTRACTIONS, ours.CONTRACTION_WORDS):
            unpaired = not any(paired in text for paired in ours.PAIRED_WITH_ASCII_LETTERS)
            if spaced(text) and unpaired and pattern.search(text):
                contractions += 1
                assert words in text.lower(), (pattern.pattern, text)
            text = pattern.sub(ours.CONTRACTION_REPLACEMENT, text)
        for group in (ours.ENDING_QUOTES, ours._AFTER_STRIP):
            for rule in group:
                was_spaced = spaced(text)
                assert was_spaced or ours._OTHER_BLANK.search(text), repr(
                    text
                )  # the detokenizer's test never calls a text spaced that is not
                if was_spaced and rule.pattern.search(text):
                    matched += 1
                    assert any(need in text for need in rule.spaced_needs), (
                        rule.pattern.pattern,
                        text,
                    )
                substituted = rule.pattern.sub(rule.replacement, text)
                if was_spaced and rule.spaced_swaps:
                    swapped = text
                    for literal, replacement in rule.spaced_swaps:
                        swapped = swapped.replace(literal, replacement)
                    swaps += swapped != text
                    assert swapped == substituted, (rule.pattern.pattern, text)
                text = substituted
                assert spaced(text) or not was_spaced, (rule.pattern.pattern, text)
            text = text.strip()
    assert (
        matched > 10000 and swaps > 5000 and contractions > 60
    )  # the spaced lines exercise the rules


@pytest.mark.parametrize("seed", range(3))
def test_a_spaced_text_never_gains_a_mark_while_the_rules_run(seed: int) -> None:
    """Walk spaced lines through every rule (each run, as NLTK runs them): the marks of the text at
    each step are among those it held at the start, so a literal with a mark it did not hold can be
    left unlooked-for."""
    lines = random_lines(6000, seed=40 + seed) + random_lines(
        2000, seed=50 + seed, vocabulary=CONTRACTION_VOCABULARY
    )
    changed = 0
    for line in lines:
        text = f" {line} "
        if ours._OTHER_BLANK.search(text):
            continue
        held = ours.marks(text)
        steps = [
            *((pattern, ours.CONTRACTION_REPLACEMENT) for pattern in ours.CONTRACTIONS),
            *((rule.pattern, rule.replacement) for rule in ours.ENDING_QUOTES),
            None,  # the strip between the groups
            *((rule.pattern, rule.replacement) for rule in ours._AFTER_STRIP),
        ]
        for step in steps:
            before = text
            text = text.strip() if step is None else step[0].sub(step[1], text)
            assert ours.marks(text) <= held, (before, text)
            changed += text != before
    assert changed > 5000


def test_marks_are_the_spaces_beside_marked_characters_and_the_quotes() -> None:
    assert ours.marks(" a ( b ) c 's `` d ") == {"( ", " (", " )", ") ", " '", "'", "` ", " `", "`"}
    assert ours.marks("a(b)c.d") == frozenset()
    assert ours.marks(' x " y ') == frozenset()  # a plain quote is no mark: the rules bring it in


def test_the_characters_paired_with_ascii_letters_are_all_there_are() -> None:
    """Every character but an ASCII letter that the rules' engine pairs with one, case-blind."""
    everything = "".join(
        chr(code) for code in range(0x80, 0x110000) if not 0xD800 <= code <= 0xDFFF
    )
    paired = {
        character
        for letter in "abcdefghijklmnopqrstuvwxyz"
        for case in (letter, letter.upper())
        for character in regex.findall(f"(?i){case}", everything)
    }
    assert paired == set(ours.PAIRED_WITH_ASCII_LETTERS)


def test_the_plan_of_a_text_keeps_every_literal_whose_marks_it_holds() -> None:
    held = ours.marks(" It 's ( here ) . ")
    plan = ours._spaced_plan(held)
    kept = {need for rule in plan.ending_quotes + plan.after_strip for need in rule.spaced_needs}
    swapped = {
        swap[0] for rule in plan.ending_quotes + plan.after_strip for swap in rule.spaced_swaps
    }
    assert {" '", " ."} <= kept and {"( ", " )", ") ."} <= swapped
    assert " ?" not in swapped and " ``" not in kept  # marks the text does not hold
    assert ' "' in kept  # a literal without marks is always looked for


@pytest.mark.parametrize("seed", range(4))
def test_output_equals_nltks_on_random_token_lines(seed: int) -> None:
    lines = random_lines(5000, seed)
    changed = 0
    for line in lines:
        expected = nltk_detokenize(line)
        assert detokenize_line(line) == expected, repr(line)
        changed += expected != line.strip()
    assert changed > 2500


def test_output_equals_nltks_on_lines_of_contraction_words() -> None:
    for line in random_lines(4000, seed=7, vocabulary=CONTRACTION_VOCABULARY):
        assert detokenize_line(line) == nltk_detokenize(line), repr(line)


@pytest.mark.parametrize(
    "tokens, expected",
    [
        (
            "Good muffins cost $ 3.88 in New York . Please buy me two of them . Thanks .",
            "Good muffins cost $3.88 in New York. Please buy me two of them. Thanks.",
        ),
        ("hello , i ca n't feel my feet ! Help ! !", "hello, i can't feel my feet! Help!!"),
        (
            "He said : Help , help ? ! I can not , `` gon na '' go 't is",
            'He said: Help, help?! I cannot, "gonna" go\'tis',
        ),  # NLTK drops the space before 't is
        ("( a [ b ] { c } < d > ) ; 5 % # 1 ... -- ''", '(a [b] {c} <d>); 5% #1...--"'),
    ],
)
def test_documented_examples(tokens: str, expected: str) -> None:
    assert detokenize_line(tokens) == nltk_detokenize(tokens) == expected


TREC_QUESTIONS = SHARED_SOURCES / "CogComp" / "trec" / "default" / "train" / "0000.parquet"


@pytest.mark.skipif(not TREC_QUESTIONS.is_file(), reason="the shared source mirror is not here")
def test_output_equals_nltks_on_real_tokenized_lines() -> None:
    import pyarrow.parquet as pq

    questions = (
        pq.read_table(TREC_QUESTIONS, columns=["text"]).column("text").to_pylist()
    )  # Treebank tokens
    assert len(questions) > 5000
    for question in questions:
        assert detokenize_line(question) == nltk_detokenize(question), question


SWAP_VOCABULARY = [
    *("''", "'", "'''", "``", "`", '"', "--", "-", "...", "..", "."),
    *(",", ":", ";", "!", "?", "%", "#", "$", "(", ")", "[", "]", "{", "}", "<", ">"),
    *("word", "'s", "n't", "x.", ")."),
]


@pytest.mark.parametrize("seed", range(3))
def test_each_rule_with_swaps_does_on_a_spaced_text_what_its_pattern_does(seed: int) -> None:
    """On spaced lines built from the characters the rules with swaps name, each such rule's swaps
    done in turn give what its pattern gives, and every such rule changes many of the lines."""
    rng = random.Random(60 + seed)
    rules = [rule for rule in (*ours.ENDING_QUOTES, *ours._AFTER_STRIP) if rule.spaced_swaps]
    changed = dict.fromkeys(rules, 0)
    for _ in range(4000):
        parts = [rng.choice(SWAP_VOCABULARY) for _ in range(rng.randint(1, 12))]
        text = " " + "".join(part + rng.choice([" ", " ", "", "  "]) for part in parts) + " "
        for rule in rules:
            swapped = text
            for literal, replacement in rule.spaced_swaps:
                swapped = swapped.replace(literal, replacement)
            assert swapped == rule.pattern.sub(rule.replacement, text), (rule.pattern, text)
            changed[rule] += swapped != text
    assert min(changed.values()) > 100, {rule.pattern.pattern: n for rule, n in changed.items()}


def test_a_rule_with_swaps_looks_for_the_literals_it_swaps() -> None:
    """The plan keeps a rule with swaps by its swaps' literals alone."""
    rules = [rule for rule in (*ours.ENDING_QUOTES, *ours._AFTER_STRIP) if rule.spaced_swaps]
    assert len(rules) == 12
    for rule in rules:
        assert rule.spaced_needs == tuple(literal for literal, _ in rule.spaced_swaps)
    plan = ours._spaced_plan(ours.marks(" a ( b ) . c "))
    kept = {swap for rule in plan.after_strip for swap, _ in rule.spaced_swaps}
    assert {"( ", " )", ") ."} <= kept and " ," not in kept


def test_a_printable_text_is_spaced() -> None:
    """No blank of either engine but the space is printable, so a printable text needs no search
    for another blank."""
    everything = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF)
    blanks = {*ours._OTHER_BLANK.findall(everything), *regex.findall(r"\s", everything)} - {" "}
    assert len(blanks) > 20
    assert [blank for blank in blanks if blank.isprintable()] == []
