"""Answer parsers for the accuracy tasks and the recall metrics (string-match-all, substring match), tolerant of the chatty answers real models give.

Each parser returns the value the answer commits to (a UUID or an integer), or ``None`` when it
names none. Explicit cues win over bare numbers: ``\\boxed{7}``, "the answer is 7", "option 7",
"Passage 7", "7 unique paragraphs"; where an answer states its choice more than once (reasoning,
then a conclusion), the last explicit answer cue counts. Reasoning blocks (``<think>...</think>``)
are ignored.
"""

import re
from collections.abc import Callable

from longbench100.text.answers import normalize_answer, strip_reasoning

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_INTEGER = re.compile(r"(?<![\d.])\d+(?![\d])")
# a list of counts: "[85, 90, 68, 33]", or in prose "85, 90, 68, and 33" / "85 stars, then 90 stars, ..."
# (three numbers at least, so "option 1 and 2" stays a pair of mentions)
_COUNT_IN_PROSE = r"\d+(?:\s+stars?)?"
_NUMBER_LIST = re.compile(
    r"\[\s*\d+(?:\s*,\s*\d+)+\s*\]"
    rf"|(?<![\d.])(?:{_COUNT_IN_PROSE})(?:(?:\s*[,;]\s*|\s+)(?:and\s+)?(?:then\s+)?(?:{_COUNT_IN_PROSE})){{2,}}"
    r"(?!\d)(?!\.\d)",
    re.IGNORECASE,
)
_BOXED = re.compile(
    r"\\boxed\{\s*(?:\\text\{)?\s*(?:option|passage|paragraph)?\s*(\d+)", re.IGNORECASE
)
# "the answer is 2", "**Answer:** 2", "the answer would be option 2": an explicit statement of the answer
_FINAL_CUE = re.compile(
    r"\banswer\b[\s*_]*(?:is\b|:|=|would\s+be\b|should\s+be\b|will\s+be\b)[^\d\n]{0,25}?(\d+)",
    re.IGNORECASE,
)
# any "answer/option/choice ... N", a mention that may be part of the reasoning
_ANSWER_CUE = re.compile(r"\b(?:answer|option|choice)\b[^\d\n]{0,25}?(\d+)", re.IGNORECASE)
_PASSAGE_CUE = re.compile(r"\b(?:passage|paragraph)s?\s*(?:#|no\.?|number)?\s*(\d+)", re.IGNORECASE)
_UNIQUE = r"(?:unique|distinct|different|non-?repeat\w*|non-?duplicate\w*)"
# "11 unique", "only 11 are unique", "the number of distinct paragraphs is 9", "unique paragraphs: 9"
_UNIQUE_CUE = re.compile(
    r"(?<!paragraph )(?<!paragraphs )(?<!passage )(?<!passages )(?<!and )(?<!, )(?<!#)"
    rf"\b(\d+)\s+(?:of\s+(?:which|them|these)\s+)?(?:are\s+)?{_UNIQUE}"
    rf"|\b{_UNIQUE}\s+(?:paragraphs?|passages?|ones?)?\s*(?:is|are|:|=|count(?:\s+is)?)\s*(\d+)",
    re.IGNORECASE,
)
_COUNT_CUE = re.compile(r"\b(?:total(?:\s+of)?|count\s+is|there\s+are)\s*:?\s*(\d+)", re.IGNORECASE)
_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


def parse_uuid(answer: str) -> str | None:
    """Return the last UUID in the answer, lower-cased (kv_retrieval)."""
    found = _UUID.findall(strip_reasoning(answer))
    return found[-1].lower() if found else None


def parse_option(answer: str, options: list[str] | None = None) -> int | None:
    """Return the option number the answer picks (counting_stars).

    ``\\boxed{N}`` and an explicit "the answer is N" / "Answer: N" (the last one) come first. With the
    options known (``gold.options``), an answer that repeats one option's list of counts
    ("[36, 29, 89, 53]", or in prose "36, 29, 89, and 53") or the text of a count-free option ("not enough information") picks that
    option, unless an "option/choice N" cue follows it; lists that match no option are ignored, and
    an answer that quotes several options' lists picks none by content. Otherwise the last
    "answer/option/choice N" cue, else the first integer.
    """
    text = strip_reasoning(answer)
    boxed = _BOXED.search(text)
    if boxed:
        return int(boxed.group(1))
    if not options:
        return _cued_or_bare(text, ((_FINAL_CUE, -1), (_ANSWER_CUE, -1)), 0)
    final = _FINAL_CUE.findall(_NUMBER_LIST.sub(" ", text))
    if final:
        return int(final[-1])
    chosen = _option_by_content(text, options)
    if chosen is not None:
        number, end = chosen
        later = _ANSWER_CUE.findall(_NUMBER_LIST.sub(" ", text[end:]))
        return int(later[-1]) if later else number
    return _cued_or_bare(_NUMBER_LIST.sub(" ", text), ((_ANSWER_CUE, -1),), 0)


def _option_by_content(text: str, options: list[str]) -> tuple[int, int] | None:
    """The option whose count list (or whole text, for an option without counts) the answer repeats, and the
    end of its last mention in ``text``; ``None`` when no option, or several different options, are repeated."""
    lists = [
        (tuple(map(int, _INTEGER.findall(found.group()))), found.end())
        for found in _NUMBER_LIST.finditer(text)
    ]
    normalized = normalize_answer(text)
    mentioned: dict[int, int] = {}
    for number, option in enumerate(options, start=1):
        counts = tuple(map(int, _INTEGER.findall(option)))
        if counts:
            ends = [end for found, end in lists if found == counts]
            if ends:
                mentioned[number] = ends[-1]
        elif normalize_answer(option) and normalize_answer(option) in normalized:
            mentioned[number] = len(text)
    return next(iter(mentioned.items())) if len(mentioned) == 1 else None


def parse_passage_number(answer: str) -> int | None:
    """Return the passage number the answer names (passage_retrieval): the last explicit answer cue, else the
    first passage cue, else the first integer."""
    text = strip_reasoning(answer)
    return _cued_or_bare(
        text, ((_BOXED, 0), (_FINAL_CUE, -1), (_ANSWER_CUE, -1), (_PASSAGE_CUE, 0)), 0
    )


def parse_count(answer: str) -> int | None:
    """Return the count the answer states (passage_count): a cue, else the last integer.

    The "N unique/distinct" cue comes first (an answer often names the total and the duplicates
    too), then the explicit answer cues, then "total of N" / "there are N"; the last match of a cue
    counts. Number words up to twenty count as numbers ("there are twelve unique paragraphs").
    """
    text = _NUMBER_WORD.sub(
        lambda match: _NUMBER_WORDS[match.group(1).lower()], strip_reasoning(answer)
    )
    cues = ((_BOXED, -1), (_UNIQUE_CUE, -1), (_FINAL_CUE, -1), (_ANSWER_CUE, -1), (_COUNT_CUE, -1))
    return _cued_or_bare(text, cues, -1)


def _cued_or_bare(text: str, cues: tuple[tuple[re.Pattern, int], ...], index: int) -> int | None:
    """Return the number captured by the first cue (in priority order) that matches anywhere in ``text``,
    taking that cue's match at the paired index (0 first, -1 last); without any cue, the bare integer at
    ``index``, or ``None`` when there is none."""
    for cue, which in cues:
        matches = list(cue.finditer(text))
        if matches:
            return int(next(group for group in matches[which].groups() if group is not None))
    found = _INTEGER.findall(text)
    return int(found[index]) if found else None


_PARSERS: dict[str, Callable[[str], int | None]] = {
    "passage_retrieval": parse_passage_number,
    "passage_count": parse_count,
}


def accuracy(task: str, answer: str, answers: list[str], options: list[str] | None = None) -> float:
    """Score an accuracy-task answer: 1.0 when it matches any gold answer, else 0.0.

    ``options`` are counting_stars' answer options (``gold.options``), when the data has them.
    """
    if task in ("kv_retrieval", "kv_retrieval_chain"):
        return 1.0 if parse_uuid(answer) in {gold.strip().lower() for gold in answers} else 0.0
    value = parse_option(answer, options) if task == "counting_stars" else _PARSERS[task](answer)
    return 1.0 if value is not None and value in {int(gold.strip()) for gold in answers} else 0.0


def string_match_all(prediction: str, golds: list[str]) -> float:
    """RULER's string-match-all: the fraction of ``golds`` found in the answer (case-insensitive), 1.0 only
    when every one is there. Reasoning blocks are ignored."""
    if not golds:
        return 0.0
    text = strip_reasoning(prediction).lower()
    return sum(1.0 for gold in golds if gold.strip().lower() in text) / len(golds)


def string_match_part(prediction: str, golds: list[str]) -> float:
    """RULER's string-match-part (its QA metric): 1.0 when any one of ``golds`` is in the answer (case-insensitive).
    Reasoning blocks are ignored."""
    text = strip_reasoning(prediction).lower()
    return 1.0 if any(gold.strip() and gold.strip().lower() in text for gold in golds) else 0.0


def substring_match(prediction: str, golds: list[str]) -> float:
    """HELMET's substring exact match: 1.0 when a normalised gold answer occurs in the normalised answer."""
    text = normalize_answer(strip_reasoning(prediction))
    return (
        1.0
        if any(normalize_answer(gold) and normalize_answer(gold) in text for gold in golds)
        else 0.0
    )
