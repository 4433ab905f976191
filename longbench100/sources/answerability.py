"""Answerability rules a registry entry can declare (``answerable = [...]``), applied when its items are loaded.

A benchmark item is only worth asking when a careful reader of its context can reach its gold
answer. Each rule below looks at one question-answering item together with the texts of its
documents and says whether the item passes; the loader drops the items that fail a declared rule
and counts them per rule (``sources verify``, ``inspect`` and the manifest report the counts).

- ``answer_not_question``: the gold answer is not itself a question (dialogue data where the
  agent's turn asks back: "Are you a veteran?").
- ``question_standalone``: the question can be understood on its own: it does not open with a
  reply to an earlier turn ("That's great to hear! Another concern ..."), does not point back to
  something only earlier dialogue or a missing list names ("these pages", "of the two" without the
  two named), and is not a first-person statement that asks nothing ("I have a FFEL loan.").
- ``question_without_dialogue_pointer``: for sources cut from dialogues, the question does not
  lean on a demonstrative ("this", "these", "do that", "the requirements") whose referent only an
  earlier turn names.
- ``answer_extractive``: for extractive sources, some gold answer occurs in the documents
  (compared after lower-casing and collapsing punctuation and spaces).
- ``answer_grounded``: at least 70% of the gold answer's content words occur in the documents,
  so an abstractive answer is still supported by the text the model reads.
- ``answer_not_yes_no``: the gold is not a yes/no reply ("Yes, ...", "No."), for sources whose
  task asks for a span or a factual answer.
- ``answer_document_specific``: for sources that ask the same questions of many documents (CUAD's
  clause categories): no other document's gold answer to the same question reaches token F1 0.5
  against this one (LongBench's normalisation). Clauses that every contract words alike ("... each a
  'Party' and together the 'Parties'") score that much from another contract's answer, so a model
  could answer them from what such clauses usually say without reading this document. This rule
  looks at all of a source's items at once (``SOURCE_RULES``), after identical items are merged;
  documents are compared by their texts, so one document under two ids is one document.
- ``answer_not_in_question``: the gold answer cannot be read off the question: no gold answer
  occurs in the question, and replying the question as it stands scores below token F1 0.5
  against every gold answer (both after LongBench's normalisation: the substring and F1 metrics
  the QA tasks grade by). "Which is older, Aspirin or Ibuprofen?" with the answer "Aspirin" fails
  it; so does a BioASQ answer that restates its question.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Callable, Iterable, Sequence

GROUNDED_SHARE = 0.7
SHARED_ANSWER_F1 = (
    0.5  # another document's answer to the same question this close makes the answer guessable
)
QUESTION_ANSWER_F1 = 0.5
"""Token F1 of the question itself against a gold answer from which the answer counts as read off it."""
_WORD = re.compile(r"[a-z0-9]+")
_WORD_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")  # what _WORD matches
_NORMALISE = re.compile(r"[^a-z0-9]+")
_YES_NO = re.compile(r"^\s*(?:yes|no)\b(?![-'’])", re.IGNORECASE)
_REPLY_OPENING = re.compile(
    r"^\s*(?:yes|yeah|yep|no|nope|ok|okay|o\.k|thanks|thank you|great|good|got it|i see|that'?s|that is|well done|"
    r"oh|sure|alright|all right|perfect|awesome|it'?s okay|and|so|also|last question|then|now)\b[\s,.!?]",
    re.IGNORECASE,
)
_GREETING = re.compile(
    r"^\s*(?:hello|hi|hey|greetings|good (?:morning|afternoon|evening))\b(?:\s*and good \w+)?[\s,.!]*",
    re.IGNORECASE,
)
_POINTER_BACK = re.compile(
    r"\b(?:of the two|the other one|the former|the latter|mentioned above|described above|you mentioned|you said|"
    r"you mean|again\?|that option|this one|that one)\b",
    re.IGNORECASE,
)
_DIALOGUE_POINTER = re.compile(
    r"\b(?:do that|do it|this|these|those|the (?:eligibility )?requirements(?! (?:for|of|to)\b))\b",
    re.IGNORECASE,
)
_STATEMENT = re.compile(
    r"^\s*(?:i|i'm|i am|i've|i have|my|we|we're|our|if|regarding)\b", re.IGNORECASE
)
_REQUEST = re.compile(
    r"^\s*(?:i|we) (?:want|need|would like|'d like|wish|wanted|am looking|am interested|are looking|'m looking|'m interested)\b"
    r"|^\s*(?:i|we)'d like\b",
    re.IGNORECASE,
)
_STOPWORDS = frozenset(
    "a an the and or but if then of to in on at by for with from as is are was were be been being it its this that "
    "these those there their they them he she his her we our you your i me my not no yes so do does did can could "
    "would should will may might must have has had which who whom what when where why how than also such into about "
    "over under more most other some any all each both only just very".split()
)


def _normalised(text: str) -> str:
    """Lower-case text with every run of non-alphanumerics turned into one space."""
    return f" {_NORMALISE.sub(' ', text.lower()).strip()} "


def answer_not_question(question: str, answers: Sequence[str], documents: Sequence[str]) -> bool:
    """The first gold answer does not end with a question mark."""
    return not answers[0].rstrip().endswith("?")


def question_standalone(question: str, answers: Sequence[str], documents: Sequence[str]) -> bool:
    """The question neither replies to an earlier turn, nor points back to unnamed things, nor asks nothing."""
    question = _GREETING.sub("", question)
    if _REPLY_OPENING.search(question + " "):
        return False
    if _POINTER_BACK.search(question) and not (
        "of the two" in question.lower() and " or " in question
    ):
        return False
    return "?" in question or not _STATEMENT.search(question) or bool(_REQUEST.search(question))


def question_without_dialogue_pointer(
    question: str, answers: Sequence[str], documents: Sequence[str]
) -> bool:
    """For dialogue sources: the question names what it asks about ("this", "these", "do that" point to earlier turns)."""
    return not _DIALOGUE_POINTER.search(question)


def answer_extractive(question: str, answers: Sequence[str], documents: Sequence[str]) -> bool:
    """Some gold answer occurs in the documents (normalised for case, punctuation and spacing)."""
    context = _normalised(" ".join(documents))
    return any(_normalised(answer) in context for answer in answers if answer.strip())


def answer_grounded(question: str, answers: Sequence[str], documents: Sequence[str]) -> bool:
    """At least 70% of the first gold answer's content words (stopwords aside) are in the documents.

    A word occurs in a document where it stands in its lower-cased text between characters that are
    not letters a-z or digits (the words :data:`_WORD` finds there); each answer word is looked up
    with ``str.find`` (and remembered for the next item about the same documents), so no document
    is split into its words (a source's answers hold a few words, its documents thousands).
    """
    words = [word for word in _WORD.findall(answers[0].lower()) if word not in _STOPWORDS]
    if not words:
        return True
    # the words of documents joined by spaces are the words of each
    text, found = _lowered(" ".join(documents))
    for word in set(words).difference(found):
        found[word] = _holds_word(text, word)
    return sum(found[word] for word in words) >= GROUNDED_SHARE * len(words)


@lru_cache(maxsize=256)
def _lowered(text: str) -> tuple[str, dict[str, bool]]:
    """``text`` in lower case, and whether each word looked up so far stands in it, kept for the
    next item about it (a source asks many questions about each document, in many of its words)."""
    return text.lower(), {}


def _holds_word(text: str, word: str) -> bool:
    """Whether ``word`` (letters a-z and digits) stands in ``text`` as a whole word: with no letter
    a-z or digit right before or after it."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or text[start - 1] not in _WORD_CHARACTERS) and (
            end == len(text) or text[end] not in _WORD_CHARACTERS
        ):
            return True
        start = text.find(word, start + 1)
    return False


def answer_not_yes_no(question: str, answers: Sequence[str], documents: Sequence[str]) -> bool:
    """The first gold answer does not open with "yes" or "no"."""
    return not _YES_NO.search(answers[0])


def answer_not_in_question(question: str, answers: Sequence[str], documents: Sequence[str]) -> bool:
    """No gold answer occurs in the question, and the question scores below ``QUESTION_ANSWER_F1``
    token F1 against every gold answer (both after LongBench's normalisation)."""
    from longbench100.text.answers import normalize_answer, token_f1  # light: regular expressions

    asked = normalize_answer(question)
    return not any(
        f" {normalised} " in f" {asked} "
        or token_f1(asked.split(), normalised.split()) >= QUESTION_ANSWER_F1
        for normalised in map(normalize_answer, answers)
        if normalised
    )


def answer_document_specific(items: Sequence, documents: Sequence[tuple[str, ...]]) -> set[int]:
    """The positions of the QA items whose first gold answer reaches token F1 ``SHARED_ANSWER_F1`` against the
    first gold answer to the same question about another document; ``documents[i]`` holds the texts of item
    ``i``'s documents, so one document listed under two ids is still one document."""
    from longbench100.text.answers import (  # light: regular expressions only
        bag_f1,
        normalize_answer,
    )

    by_question: dict[str, list[tuple[tuple[str, ...], Counter[str], int]]] = {}
    for position, (item, texts) in enumerate(zip(items, documents)):
        if item.kind == "qa" and item.question and item.answers:
            by_question.setdefault(" ".join(item.question.split()), []).append(
                (texts, Counter(normalize_answer(item.answers[0]).split()), position)
            )
    failing: set[int] = set()
    for asked in by_question.values():
        for texts, tokens, position in asked:
            if any(
                other_texts != texts and bag_f1(tokens, other) >= SHARED_ANSWER_F1
                for other_texts, other, _ in asked
            ):
                failing.add(position)
    return failing


Rule = Callable[[str, Sequence[str], Sequence[str]], bool]
ANSWERABILITY_RULES: dict[str, Rule] = {
    "answer_not_question": answer_not_question,
    "question_standalone": question_standalone,
    "question_without_dialogue_pointer": question_without_dialogue_pointer,
    "answer_extractive": answer_extractive,
    "answer_grounded": answer_grounded,
    "answer_not_yes_no": answer_not_yes_no,
    "answer_not_in_question": answer_not_in_question,
}
SOURCE_RULES: dict[str, Callable[[Sequence, Sequence[tuple[str, ...]]], set[int]]] = {
    "answer_document_specific": answer_document_specific,
}
RULE_NAMES: tuple[str, ...] = (*ANSWERABILITY_RULES, *SOURCE_RULES)


def failed_rule(
    rules: Iterable[str], question: str, answers: Sequence[str], documents: Sequence[str]
) -> str | None:
    """The first of the named per-item rules the item fails, or ``None`` when it passes them all (``SOURCE_RULES`` aside)."""
    for name in rules:
        if name in ANSWERABILITY_RULES and not ANSWERABILITY_RULES[name](
            question, answers, documents
        ):
            return name
    return None


def rule_counts_line(counts: Counter | dict) -> str:
    """``answer_not_question 25, question_standalone 53`` (rules in registry order; empty when nothing was dropped)."""
    return ", ".join(f"{name} {counts[name]}" for name in RULE_NAMES if counts.get(name))
