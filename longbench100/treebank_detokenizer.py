"""NLTK's Penn Treebank detokenizer, same rules and same regex engine, without its start-up and guard costs.

The ``detokenize`` cleaning step must give exactly what NLTK's ``TreebankWordDetokenizer`` gives: its
output is part of ours. Calling NLTK costs a cold run twice over: importing it takes about 1.6 s in
every process that cleans (the package import loads SciPy), and it runs each of its 31 patterns
through a timeout guard on every line. This module keeps NLTK 3.10.4's rules, in its order and
compiled with the engine NLTK compiles them with (``regex``, default flags), and adds one thing: a
rule runs only when the text holds a literal that the rule cannot match without (a pattern that
does not match leaves the text as it was, so skipping it is exact). The contraction rules share one
such gate, a pattern that any of them matching implies.

``tests/test_treebank_detokenizer.py`` holds this table to NLTK's own (patterns, replacements,
flags, order) and the output to NLTK's on thousands of random token lines built from every literal
the rules name; ``bench/bench_detokenizer.py`` compares them on every line of a source mirror. An
adversarial review fuzzed about a million lines (odd blanks, Unicode case folds such as the Kelvin
sign, long s and dotted I, combining marks) and checked the contraction gate exhaustively over
64 million strings: no difference, except that NLTK gives up on lines it times out on.
"""

from __future__ import annotations

from typing import NamedTuple

import regex


class _Rule(NamedTuple):
    """One substitution of the detokenizer and the literals it needs (it is skipped when none is in the text)."""

    pattern: regex.Pattern
    replacement: str
    needs: tuple[str, ...]


def _rule(pattern: str, replacement: str, *needs: str) -> _Rule:
    """A rule compiled as NLTK compiles it (``regex`` engine, default flags)."""
    return _Rule(regex.compile(pattern), replacement, needs)


# split contractions ("can not", "gon na", "'t is"): NLTK's CONTRACTIONS3 then CONTRACTIONS2, each
# replaced by r"\1\2"; the gate matches wherever any of them does (each needs a blank and then its
# second part, ending at a word boundary)
CONTRACTION_GATE = regex.compile(r"(?i)\s(?:'t\s(?:is|was)|not|'ye|me|na|ta|'n)\b")
CONTRACTIONS = tuple(regex.compile(pattern) for pattern in (
    r"(?i) ('t)\s(is)\b", r"(?i) ('t)\s(was)\b",
    r"(?i)\b(can)\s(not)\b", r"(?i)\b(d)\s('ye)\b", r"(?i)\b(gim)\s(me)\b", r"(?i)\b(gon)\s(na)\b",
    r"(?i)\b(got)\s(ta)\b", r"(?i)\b(lem)\s(me)\b", r"(?i)\b(more)\s('n)\b", r"(?i)\b(wan)\s(na)(?=\s)",
))
CONTRACTION_REPLACEMENT = r"\1\2"

ENDING_QUOTES = (
    _rule(r"([^' ])\s('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r"\1\2 ", "'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T"),
    _rule(r"([^' ])\s('[sS]|'[mM]|'[dD]|') ", r"\1\2 ", "'"),
    _rule(r"([^'\s])\s(\'\')", r"\1\2", "''"),
    _rule(r"([,.;:!?'])\s+(\"|\'\')", r"\1\2", '"', "''"),
    _rule(r"(\'\')\s([.,:)\]>};%])", r"\1\2", "''"),
    _rule(r"''", '"', "''"),
    _rule(r'([,.;:!?])"(\')', r"\1\2" '"', "\"'"),
)
DOUBLE_DASHES = _rule(r" -- ", r"--", " -- ")
PARENS_BRACKETS = (
    _rule(r"([\[\(\{\<])\s", r"\g<1>", *"[({<"),
    _rule(r"\s([\]\)\}\>])", r"\g<1>", *"])}>"),
    _rule(r"([\]\)\}\>])\s([:;,.])", r"\1\2", *"])}>"),
)
PUNCTUATION = (
    _rule(r"([^'])\s'\s", r"\1' ", "'"),
    _rule(r"\s([?!])", r"\g<1>", *"?!"),
    _rule(r'([^\.])\s(\.)(?!\.)([\]\)}>"\']*)', r"\1\2\3", "."),
    _rule(r"([#$])\s", r"\g<1>", *"#$"),
    _rule(r"\s([;%])", r"\g<1>", *";%"),
    _rule(r"\s\.\.\.\s", r"...", "..."),
    _rule(r"\s([:,])", r"\1", *":,"),
)
STARTING_QUOTES = (
    _rule(r"([ (\[{<])\s``", r"\1``", "``"),
    _rule(r"(``)\s", r"\1", "``"),
    _rule(r"``", r'"', "``"),
)
_AFTER_STRIP = (DOUBLE_DASHES, *PARENS_BRACKETS, *PUNCTUATION, *STARTING_QUOTES)


def detokenize_line(line: str) -> str:
    """What NLTK's ``TreebankWordDetokenizer().detokenize(line.split(" "))`` returns (``convert_parentheses`` off).

    NLTK raises ``TimeoutError`` when one of its substitutions runs past 5 s of wall time (a line of
    tens of millions of characters, or a very busy machine); this has no such limit and returns.
    """
    text = f" {line} "
    if CONTRACTION_GATE.search(text):
        for pattern in CONTRACTIONS:
            text = pattern.sub(CONTRACTION_REPLACEMENT, text)
    text = _apply(text, ENDING_QUOTES).strip()
    return _apply(text, _AFTER_STRIP).strip()


def _apply(text: str, rules: tuple[_Rule, ...]) -> str:
    """``text`` after each rule in turn, skipping a rule when none of the literals it needs is in the text."""
    for pattern, replacement, needs in rules:
        for need in needs:  # a plain loop: any() over a generator costs a sixth of the whole here
            if need in text:
                text = pattern.sub(replacement, text)
                break
    return text
