r"""NLTK's Penn Treebank detokenizer, same rules and same regex engine, without its start-up and
guard costs.

The ``detokenize`` cleaning step must give exactly what NLTK's ``TreebankWordDetokenizer`` gives: its
output is part of ours. Calling NLTK costs a cold run twice over: importing it takes about 1.6 s in
every process that cleans (the package import loads SciPy), and it runs each of its 31 patterns
through a timeout guard on every line. This module keeps NLTK 3.10.4's rules, in its order and
compiled with the engine NLTK compiles them with (``regex``, default flags), and adds one thing: a
rule runs only when the text holds a literal that the rule cannot match without (a pattern that
does not match leaves the text as it was, so skipping it is exact). The contraction rules share one
such gate, a pattern that any of them matching implies.

Almost every line is *spaced*: its only blank is the space (a printable line always is). There
each ``\s`` of a pattern can only be a space, and the rules never bring in another blank (they
delete spaces or move matched text), so the line stays spaced to the end. On such a line:

- a rule needs its literal with the space beside it (" ," where any text needs a bare ",");
- a rule that only drops the space between two strings (before or after one character,
  "\s([:,])", or between a closing bracket and a stop, "([\]\)\}\>])\s([:;,.])"), and a rule
  whose pattern is plain text ("''"), is done with ``str.replace``, which finds the same places;
- a contraction rule runs only where the line, in lower case, holds its two words with the space
  between them ("can not"), provided the line holds none of the four letters that ``(?i)`` pairs
  with an ASCII letter ("ſ" with "s", the Kelvin sign with "k", dotted and dotless I with "i");
- a literal is looked for only where the line held its *marks* at the start (a space next to
  punctuation, such as " ." or "( ", and the characters ' and `): the marks are found in two scans,
  and the rules never bring in a mark, so most literals of most lines are never looked for. The
  literals kept for a set of marks are worked out once per set (:func:`_spaced_plan`).

``tests/text/test_treebank_detokenizer.py`` holds this table to NLTK's own (patterns, replacements,
flags, order) and the output to NLTK's on thousands of random token lines built from every literal
the rules name; ``bench/bench_detokenizer.py`` compares them on every line of a source mirror. An
adversarial review fuzzed about a million lines (odd blanks, Unicode case folds such as the Kelvin
sign, long s and dotted I, combining marks) and checked the contraction gate exhaustively over
64 million strings: no difference, except that NLTK gives up on lines it times out on.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import regex


class _Rule(NamedTuple):
    """One substitution of the detokenizer and the literals it needs (it is skipped when none is in the text):
    ``needs`` in any text, ``spaced_needs`` in a text whose only blank is the space. Where ``spaced_swaps`` is not
    empty, the rule does exactly those literal replacements, in turn, to a spaced text (and its
    ``spaced_needs`` are their literals)."""

    pattern: regex.Pattern
    replacement: str
    needs: tuple[str, ...]
    spaced_needs: tuple[str, ...]
    spaced_swaps: tuple[tuple[str, str], ...]


def _rule(
    pattern: str,
    replacement: str,
    needs: tuple[str, ...],
    spaced_needs: tuple[str, ...] | None = None,
) -> _Rule:
    """A rule compiled as NLTK compiles it (``regex`` engine, default flags); ``spaced_needs`` default to ``needs``."""
    return _Rule(
        regex.compile(pattern),
        replacement,
        needs,
        needs if spaced_needs is None else spaced_needs,
        (),
    )


def _literal_rule(literal: str, replacement: str) -> _Rule:
    """A rule whose pattern is plain text (no character of it special to the engine): replacing it left to right is
    what ``str.replace`` does."""
    return _Rule(
        regex.compile(literal), replacement, (literal,), (literal,), ((literal, replacement),)
    )


def _space_dropping_rule(
    pattern: str, replacement: str, characters: str, *, space_after: bool = False
) -> _Rule:
    """A rule that drops the blank before (or after) one of ``characters``."""
    if space_after:
        return _joining_rule(pattern, replacement, tuple(characters), ("",))
    return _joining_rule(pattern, replacement, ("",), tuple(characters))


def _joining_rule(
    pattern: str, replacement: str, befores: tuple[str, ...], afters: tuple[str, ...]
) -> _Rule:
    """A rule that drops the blank between one of ``befores`` and one of ``afters`` (an empty one
    stands for no text: the blank after or before the other); it needs one of ``befores``, or of
    ``afters`` where those are all empty. In a spaced text, every such space with its neighbours
    forms a match, no two of them share a place (no ``after`` holds the start of a ``before`` or a
    space), and dropping one space neither makes nor unmakes another, so the literal swaps done in
    turn delete exactly the spaces the pattern deletes."""
    spaced = tuple(f"{before} {after}" for before in befores for after in afters)
    return _Rule(
        regex.compile(pattern),
        replacement,
        tuple(before for before in befores if before) or afters,
        spaced,
        tuple((pair, pair.replace(" ", "")) for pair in spaced),
    )


# A mark is a space next to one of these characters (" ." or "( "), or a ' or ` anywhere. On a
# spaced text the rules bring in no mark: they delete spaces (a space next to a character once the
# spaces between them are gone was next to it before), replace '' and `` by a plain quote, or move a
# plain quote past a ' (a plain quote is no mark). So a spaced line holds at no step a mark it did
# not hold at the start, and a literal with a mark the line did not hold at the start is never in
# it: its rules need not look for it (:func:`_spaced_plan`).
_MARKED = "'`-.,;:?!%#$()[]{}<>"
_SPACE_BEFORE_MARKED = re.compile(" [" + re.escape(_MARKED) + "]")
_SPACE_AFTER_MARKED = re.compile("[" + re.escape(_MARKED) + "] ")


def marks(text: str) -> frozenset[str]:
    """The marks ``text`` holds: each space next to a character of :data:`_MARKED`, with that
    character, and the characters ' and ` it holds."""
    held = _SPACE_BEFORE_MARKED.findall(text) + _SPACE_AFTER_MARKED.findall(text)
    if "'" in text:
        held.append("'")
    if "`" in text:
        held.append("`")
    return frozenset(held)


# split contractions ("can not", "gon na", "'t is"): NLTK's CONTRACTIONS3 then CONTRACTIONS2, each
# replaced by r"\1\2"; the gate matches wherever any of them does (each needs a blank and then its
# second part, ending at a word boundary)
CONTRACTION_GATE = regex.compile(r"(?i)\s(?:'t\s(?:is|was)|not|'ye|me|na|ta|'n)\b")
CONTRACTIONS = tuple(
    regex.compile(pattern)
    for pattern in (
        r"(?i) ('t)\s(is)\b",
        r"(?i) ('t)\s(was)\b",
        r"(?i)\b(can)\s(not)\b",
        r"(?i)\b(d)\s('ye)\b",
        r"(?i)\b(gim)\s(me)\b",
        r"(?i)\b(gon)\s(na)\b",
        r"(?i)\b(got)\s(ta)\b",
        r"(?i)\b(lem)\s(me)\b",
        r"(?i)\b(more)\s('n)\b",
        r"(?i)\b(wan)\s(na)(?=\s)",
    )
)
CONTRACTION_REPLACEMENT = r"\1\2"
# the characters other than ASCII letters that the engine's case-blind matching pairs with an ASCII
# letter (dotted and dotless I, long s, Kelvin sign); the test finds them among every code point
PAIRED_WITH_ASCII_LETTERS = "\u0130\u0131\u017f\u212a"
_PAIRED = re.compile(f"[{PAIRED_WITH_ASCII_LETTERS}]")
# each contraction rule's two words with the one blank between them, in lower case: on a spaced text
# without a character of PAIRED_WITH_ASCII_LETTERS the rule cannot match unless the text in lower
# case holds this (its ``(?i)`` letters then match their ASCII cases only)
CONTRACTION_WORDS = (
    " 't is",
    " 't was",
    "can not",
    "d 'ye",
    "gim me",
    "gon na",
    "got ta",
    "lem me",
    "more 'n",
    "wan na",
)
_CLITICS = ("'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T")
# a blank other than the space: Python's ``re`` reads ``\s`` as str.isspace, which holds every blank
# of the rules' engine and four separators more (U+001C-U+001F), so a text this finds nothing in is
# spaced for the rules. None of these is printable, so a printable text (most are) is spaced too
_OTHER_BLANK = re.compile(r"[^\S ]")

ENDING_QUOTES = (
    _rule(
        r"([^' ])\s('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ",
        r"\1\2 ",
        _CLITICS,
        tuple(f" {clitic} " for clitic in _CLITICS),
    ),
    _rule(r"([^' ])\s('[sS]|'[mM]|'[dD]|') ", r"\1\2 ", ("'",), (" '",)),
    _rule(r"([^'\s])\s(\'\')", r"\1\2", ("''",), (" ''",)),
    _rule(r"([,.;:!?'])\s+(\"|\'\')", r"\1\2", ('"', "''"), (' "', " ''")),
    _joining_rule(r"(\'\')\s([.,:)\]>};%])", r"\1\2", ("''",), tuple(".,:)]>};%")),
    _literal_rule("''", '"'),
    _rule(r'([,.;:!?])"(\')', r"\1\2" '"', ("\"'",)),
)
DOUBLE_DASHES = _literal_rule(" -- ", "--")
PARENS_BRACKETS = (
    _space_dropping_rule(r"([\[\(\{\<])\s", r"\g<1>", "[({<", space_after=True),
    _space_dropping_rule(r"\s([\]\)\}\>])", r"\g<1>", "])}>"),
    _joining_rule(r"([\]\)\}\>])\s([:;,.])", r"\1\2", tuple("])}>"), tuple(":;,.")),
)
PUNCTUATION = (
    _rule(r"([^'])\s'\s", r"\1' ", ("'",), (" ' ",)),
    _space_dropping_rule(r"\s([?!])", r"\g<1>", "?!"),
    _rule(r'([^\.])\s(\.)(?!\.)([\]\)}>"\']*)', r"\1\2\3", (".",), (" .",)),
    _space_dropping_rule(r"([#$])\s", r"\g<1>", "#$", space_after=True),
    _space_dropping_rule(r"\s([;%])", r"\g<1>", ";%"),
    _rule(r"\s\.\.\.\s", r"...", ("...",), (" ... ",)),
    _space_dropping_rule(r"\s([:,])", r"\1", ":,"),
)
STARTING_QUOTES = (
    _rule(r"([ (\[{<])\s``", r"\1``", ("``",), (" ``",)),
    _joining_rule(r"(``)\s", r"\1", ("``",), ("",)),
    _literal_rule("``", '"'),
)
_AFTER_STRIP = (DOUBLE_DASHES, *PARENS_BRACKETS, *PUNCTUATION, *STARTING_QUOTES)


def detokenize_line(line: str) -> str:
    """What NLTK's ``TreebankWordDetokenizer().detokenize(line.split(" "))`` returns (``convert_parentheses`` off).

    NLTK raises ``TimeoutError`` when one of its substitutions runs past 5 s of wall time (a line of
    tens of millions of characters, or a very busy machine); this has no such limit and returns.
    """
    text = f" {line} "
    if not text.isprintable() and _OTHER_BLANK.search(text) is not None:
        text = _join_split_contractions(text)
        text = _apply(text, ENDING_QUOTES).strip()
        return _apply(text, _AFTER_STRIP).strip()
    # spaced: the rules only take blanks away, so the text stays spaced
    contractions, ending_quotes, after_strip = _spaced_plan(marks(text))
    text = _join_spaced_split_contractions(text, contractions)
    text = _apply_spaced(text, ending_quotes).strip()
    return _apply_spaced(text, after_strip).strip()


class _SpacedPlan(NamedTuple):
    """What a spaced text with a given set of marks is looked at for: the contraction rules with
    their words, and the rules of each group, each with only those of its literals and swaps whose
    marks the text holds (a rule left with none is left out)."""

    contractions: tuple[tuple[regex.Pattern, str], ...]
    ending_quotes: tuple[_Rule, ...]
    after_strip: tuple[_Rule, ...]


# :func:`marks` of each literal the rules look for or swap, worked out once (a cold run works out
# the plans of a thousand sets of marks or more)
_LITERAL_MARKS = {
    literal: marks(literal)
    for literal in (
        *CONTRACTION_WORDS,
        *(need for rule in (*ENDING_QUOTES, *_AFTER_STRIP) for need in rule.spaced_needs),
        *(swap for rule in (*ENDING_QUOTES, *_AFTER_STRIP) for swap, _ in rule.spaced_swaps),
    )
}


@lru_cache(maxsize=4096)
def _spaced_plan(held: frozenset[str]) -> _SpacedPlan:
    """The plan for a spaced text holding the marks ``held`` (texts share a few thousand sets)."""

    def kept(rules: tuple[_Rule, ...]) -> tuple[_Rule, ...]:
        plan = []
        for pattern, replacement, needs, spaced_needs, spaced_swaps in rules:
            if spaced_swaps:  # its literals are those of its swaps
                swaps = tuple([swap for swap in spaced_swaps if _LITERAL_MARKS[swap[0]] <= held])
                if swaps:
                    literals = tuple([literal for literal, _ in swaps])
                    plan.append(_Rule(pattern, replacement, needs, literals, swaps))
                continue
            literals = tuple([need for need in spaced_needs if _LITERAL_MARKS[need] <= held])
            if literals:
                plan.append(_Rule(pattern, replacement, needs, literals, ()))
        return tuple(plan)

    contractions = tuple(
        (pattern, words)
        for pattern, words in zip(CONTRACTIONS, CONTRACTION_WORDS)
        if _LITERAL_MARKS[words] <= held
    )
    return _SpacedPlan(contractions, kept(ENDING_QUOTES), kept(_AFTER_STRIP))


def _join_split_contractions(text: str) -> str:
    """``text`` after the contraction rules, in their order, where the gate matches."""
    if CONTRACTION_GATE.search(text):
        for pattern in CONTRACTIONS:
            text = pattern.sub(CONTRACTION_REPLACEMENT, text)
    return text


def _join_spaced_split_contractions(
    text: str, contractions: tuple[tuple[regex.Pattern, str], ...]
) -> str:
    """:func:`_join_split_contractions` for a spaced text, given the contraction rules its plan
    keeps: unless the text holds a character of :data:`PAIRED_WITH_ASCII_LETTERS`, each runs only
    where the text holds its words."""
    if not text.isascii() and _PAIRED.search(text):
        return _join_split_contractions(text)
    lower = text.lower()
    for pattern, words in contractions:
        if words in lower:
            joined = pattern.sub(CONTRACTION_REPLACEMENT, text)
            if joined != text:
                text, lower = joined, joined.lower()
    return text


def _apply(text: str, rules: tuple[_Rule, ...]) -> str:
    """``text`` after each rule in turn, skipping a rule when none of the literals it needs is in
    the text."""
    for rule in rules:
        # a plain loop: any() over a generator costs a sixth of the whole here
        for need in rule.needs:
            if need in text:
                text = rule.pattern.sub(rule.replacement, text)
                break
    return text


def _apply_spaced(text: str, rules: tuple[_Rule, ...]) -> str:
    """:func:`_apply` for a spaced text: a rule with swaps does them instead of its pattern, any
    other looks for its spaced literals."""
    for pattern, replacement, _, spaced_needs, spaced_swaps in rules:
        if spaced_swaps:
            for literal, swapped in spaced_swaps:
                text = text.replace(literal, swapped)
            continue
        for need in spaced_needs:
            if need in text:
                text = pattern.sub(replacement, text)
                break
    return text
