"""Answer parsers for the four accuracy tasks, tolerant of the chatty answers real models give.

Each parser returns the value the answer commits to (a UUID or an integer), or ``None`` when it
names none. Explicit cues win over bare numbers: ``\\boxed{7}``, "the answer is 7", "option 7",
"Passage 7", "7 unique paragraphs". Reasoning blocks (``<think>...</think>``) are ignored.
"""

import re
from collections.abc import Callable

from .text import normalize_answer, strip_reasoning

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_INTEGER = re.compile(r"(?<![\d.])\d+(?![\d])")
_NUMBER_LIST = re.compile(r"\[\s*\d+(?:\s*,\s*\d+)+\s*\]")
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*(?:option|passage|paragraph)?\s*(\d+)", re.IGNORECASE)
_ANSWER_CUE = re.compile(r"\b(?:answer|option|choice)\b[^\d\n]{0,25}?(\d+)", re.IGNORECASE)
_PASSAGE_CUE = re.compile(r"\b(?:passage|paragraph)s?\s*(?:#|no\.?|number)?\s*(\d+)", re.IGNORECASE)
_COUNT_CUE = re.compile(
    r"(\d+)\s+(?:unique|distinct|different|non-?repeat\w*|non-?duplicate\w*)"
    r"|\b(?:total(?:\s+of)?|count\s+is|there\s+are)\s*:?\s*(\d+)",
    re.IGNORECASE,
)
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

    With the options known (``gold.options``), an answer that repeats an option's list of counts
    ("[36, 29, 89, 53]") or the text of a count-free option ("not enough information") picks that
    option; lists that match no option are ignored. Otherwise a cue, else the first integer.
    """
    text = strip_reasoning(answer)
    boxed = _BOXED.search(text)
    if boxed:
        return int(boxed.group(1))
    if options:
        chosen = _option_by_content(text, options)
        if chosen is not None:
            return chosen
        text = _NUMBER_LIST.sub(" ", text)
    return _cued_or_bare(text, (_ANSWER_CUE,), 0)


def _option_by_content(text: str, options: list[str]) -> int | None:
    """The number of the option whose count list (or whole text, for an option without counts) the answer repeats."""
    lists = [tuple(map(int, _INTEGER.findall(found))) for found in _NUMBER_LIST.findall(text)]
    normalized = normalize_answer(text)
    for number, option in enumerate(options, start=1):
        counts = tuple(map(int, _INTEGER.findall(option)))
        if (counts and counts in lists) or (not counts and normalize_answer(option) in normalized):
            return number
    return None


def parse_passage_number(answer: str) -> int | None:
    """Return the passage number the answer names (passage_retrieval): a cue, else the first integer."""
    text = strip_reasoning(answer)
    return _cued_or_bare(text, (_BOXED, _ANSWER_CUE, _PASSAGE_CUE), 0)


def parse_count(answer: str) -> int | None:
    """Return the count the answer states (passage_count): a cue, else the last integer.

    Number words up to twenty count as numbers ("there are twelve unique paragraphs").
    """
    text = _NUMBER_WORD.sub(lambda match: _NUMBER_WORDS[match.group(1).lower()], strip_reasoning(answer))
    return _cued_or_bare(text, (_BOXED, _ANSWER_CUE, _COUNT_CUE), -1)


def _cued_or_bare(text: str, cues: tuple[re.Pattern, ...], index: int) -> int | None:
    """Return the number captured by the first cue (in priority order) that matches anywhere in ``text``;
    without any cue, the bare integer at ``index`` (0 first, -1 last), or ``None`` when there is none."""
    for cue in cues:
        match = cue.search(text)
        if match:
            return int(next(group for group in match.groups() if group is not None))
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
    if task == "kv_retrieval":
        return 1.0 if parse_uuid(answer) in {gold.strip().lower() for gold in answers} else 0.0
    value = parse_option(answer, options) if task == "counting_stars" else _PARSERS[task](answer)
    return 1.0 if value is not None and value in {int(gold.strip()) for gold in answers} else 0.0
