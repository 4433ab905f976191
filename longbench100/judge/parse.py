"""Turn a judge's free-text reply into a 0-1 score, or ``None`` when the reply holds no valid verdict.

The rubrics ask for a final JSON object; replies are read leniently: the last JSON object with the
expected keys anywhere in the text (prose or code fences around it are fine; JSON5 liberties such
as single quotes, trailing commas, comments and bare keys are read with the ``json5`` library, and
Python's ``True``/``False``/``None`` as JSON's), else ``Fluency: 2`` style lines and, for summaries,
one ``[3] supported`` line per sentence, else a ``Supported: [1, 3]`` line. Values out of range
make the reply invalid rather than being clipped, and an ambiguous fallback (a hedged or mixed
verdict, verdicts or lists that contradict each other) gives ``None``. Numbers may come as strings
(``"2"``), and a 0/1 field may come as a boolean.
"""

import json
import math
import re
from collections.abc import Callable
from enum import Enum
from typing import Final, Literal

import json5

_SCALE = r"(?:\W{0,4}?[(\[]\s*\d\s*(?:-|–|to|/)\s*\d\s*[)\]])?"
_NUMBERED_LINE = re.compile(
    r"^[^\w\n]*(?:(?:sentence|key[\s_-]*point|point)\s*#?\s*(\d+)\b|\[\s*(\d+)\s*\]|(\d+)\s*[.):\u2013-])",
    re.IGNORECASE,
)
_VERDICT_WORD = re.compile(r"\b(?:(not[\s_-]+)|(un))?supported\b", re.IGNORECASE)
_SUPPORTED_LIST = re.compile(
    r"\b(?:(not[\s_-]+)|(un))?supported\b(?:\s+sentences?)?[^\w\[]{0,6}\[([\d,\s]*)\]",
    re.IGNORECASE,
)
# a bare "supported" right after a negation ("is not fully supported", "can't be supported") is a "no"
_NEGATED = re.compile(
    r"\b(?:not|never|hardly|cannot|\w+n't)"
    r"(?:[\s_-]+(?:be|been|being|fully|directly|entirely|explicitly|really|clearly|actually|at\s+all))*[\s_-]+$",
    re.IGNORECASE,
)
# "partially supported" is no yes/no verdict
_HEDGED = re.compile(r"\b(?:partially|partly|mostly|largely|somewhat|half)[\s_-]+$", re.IGNORECASE)


class _Verdict(Enum):
    """The one verdict that is neither yes nor no: a hedged or self-contradicting reading."""

    AMBIGUOUS = "ambiguous"


_AMBIGUOUS: Final = _Verdict.AMBIGUOUS
_Ambiguous = Literal[_Verdict.AMBIGUOUS]


_OPENERS = {"{": "}", "[": "]"}
_PYTHON_LITERALS = re.compile(r"\b(True|False|None)\b")


def _balanced_end(text: str, start: int) -> int | None:
    """The index just past the bracket that closes the one at ``start`` (quotes respected), or ``None``."""
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in _OPENERS:
            stack.append(_OPENERS[char])
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return index + 1
    return None


def _decode(piece: str) -> object:
    """``piece`` as strict JSON, else as JSON5, else with Python literals read as JSON's; ``None`` when none reads it."""
    try:
        return json.loads(piece)
    except ValueError:
        pass
    for candidate in (
        piece,
        _PYTHON_LITERALS.sub(
            lambda match: {"True": "true", "False": "false"}.get(match[1], "null"), piece
        ),
    ):
        try:
            return json5.loads(candidate)
        except ValueError:
            continue
    return None


def json_values(text: str) -> list[object]:
    """Every JSON object or array that starts at some ``{`` or ``[`` of ``text`` and decodes, in order of its start.

    Nested values are listed too (after the value holding them); code fences and prose around them
    do not matter.
    """
    values: list[object] = []
    for match in re.finditer(r"[{\[]", text):
        end = _balanced_end(text, match.start())
        if end is None:
            continue
        value = _decode(text[match.start() : end])
        if isinstance(value, (dict, list)):
            values.append(value)
    return values


def _key(name: object) -> str:
    """A JSON key compared loosely: lower case, spaces and hyphens as underscores (``"Key points"`` is ``key_points``)."""
    return re.sub(r"[\s-]+", "_", str(name).strip().lower())


def _last_object_with(text: str, keys: tuple[str, ...]) -> dict | None:
    """The last JSON object in ``text`` that has all ``keys`` (compared loosely, see :func:`_key`)."""
    for value in reversed(json_values(text)):
        if not isinstance(value, dict):
            continue
        lowered = {_key(key): item for key, item in value.items()}
        if all(key in lowered for key in keys):
            return lowered
    return None


def _integer(value: object) -> int | None:
    """An integer from an int, an integral float or a numeric string; ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not re.fullmatch(r"\d+(?:\.0*)?", value):
            return None
        value = float(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


def _flag(value: object) -> int | None:
    """A 0/1 field: a boolean or ``"true"``/``"false"`` as 1/0, else :func:`_integer`."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return int(value.strip().lower() == "true")
    return _integer(value)


def _labelled_integer(text: str, label: str) -> int | None:
    """The integer after the last ``label:`` in ``text`` (``Fluency: 2``, ``**Correctness** (0-3): 3``)."""
    found = re.findall(rf"\b{label}\b{_SCALE}\W{{0,6}}(\d+)\b", text, re.IGNORECASE)
    return int(found[-1]) if found else None


def _fluency_and_correctness(
    reply: str, read_fluency: Callable[[object], int | None]
) -> tuple[int | None, int | None]:
    """Fluency and correctness from the last JSON object holding both (fluency read by ``read_fluency``),
    else from ``Fluency: N`` / ``Correctness: N`` labels; ``None`` where absent. Ranges are the caller's."""
    found = _last_object_with(reply, ("fluency", "correctness"))
    if found is not None:
        return read_fluency(found["fluency"]), _integer(found["correctness"])
    return _labelled_integer(reply, "fluency"), _labelled_integer(reply, "correctness")


def qa_parts(reply: str) -> dict | None:
    """The QA rubric's sub-scores ``{"fluency": 0-2, "correctness": 0-3}`` from a reply, or ``None`` if invalid."""
    fluency, correctness = _fluency_and_correctness(reply, _integer)
    if fluency is None or correctness is None or not 0 <= fluency <= 2 or not 0 <= correctness <= 3:
        return None
    return {"fluency": fluency, "correctness": correctness}


def qa_score(parts: dict) -> float:
    """The score of valid QA rubric sub-scores: fluency (0-2) x correctness (0-3) / 6."""
    return parts["fluency"] * parts["correctness"] / 6


def parse_qa_verdict(reply: str) -> float | None:
    """Score a QA rubric reply (:func:`qa_score`), or ``None`` if invalid."""
    parts = qa_parts(reply)
    return None if parts is None else qa_score(parts)


def _supported_from_json(value: object, n_sentences: int) -> int | None:
    """The number of supported sentences from a JSON ``supported`` value: a list of numbers or a count."""
    if isinstance(value, list):
        numbers = [_integer(item) for item in value]
        if any(number is None or not 1 <= number <= n_sentences for number in numbers):
            return None
        return len(set(numbers))
    count = _integer(value)
    return count if count is not None and 0 <= count <= n_sentences else None


def _polarity(match: re.Match, before: str) -> bool | _Ambiguous:
    """True for a "supported" verdict, False for "not supported"/"unsupported", ``_AMBIGUOUS`` for a hedge."""
    if match.group(1) or match.group(2):
        return False
    if _HEDGED.search(before):
        return _AMBIGUOUS
    return not _NEGATED.search(before)


def _line_verdict(line: str) -> bool | _Ambiguous | None:
    """The one verdict a per-sentence line gives (True/False), ``None`` without one, ``_AMBIGUOUS`` when mixed."""
    verdicts = {_polarity(match, line[: match.start()]) for match in _VERDICT_WORD.finditer(line)}
    if not verdicts:
        return None
    return verdicts.pop() if len(verdicts) == 1 else _AMBIGUOUS


def _sentence_verdicts(lines: list[str]) -> dict[int, bool] | _Ambiguous:
    """Sentence number -> supported, from ``[3] supported`` / ``Sentence 2: not supported`` lines (one line each).

    ``_AMBIGUOUS`` when a line mixes or hedges its verdict, or two lines give one sentence different verdicts.
    """
    verdicts: dict[int, bool] = {}
    for line in lines:
        numbered = _NUMBERED_LINE.match(line)
        if numbered is None:
            continue
        number = int(next(group for group in numbered.groups() if group is not None))
        verdict = _line_verdict(line[numbered.end() :])
        if verdict is None:
            continue
        if verdict is _AMBIGUOUS or verdicts.get(number, verdict) != verdict:
            return _AMBIGUOUS
        verdicts[number] = verdict
    return verdicts


def _listed(
    lines: list[str], n_sentences: int
) -> tuple[set[int] | None, set[int] | None] | _Ambiguous:
    """The sets from ``Supported: [1, 3]`` and ``Not supported: [2]`` lines (``None`` when absent).

    ``_AMBIGUOUS`` when a list holds a number outside 1..n, is hedged, or two lists of one kind differ.
    """
    found: dict[bool, set[frozenset[int]]] = {True: set(), False: set()}
    for line in lines:
        if _NUMBERED_LINE.match(line):
            continue
        for match in _SUPPORTED_LIST.finditer(line):
            polarity = _polarity(match, line[: match.start()])
            numbers = [_integer(item) for item in match.group(3).replace(",", " ").split()]
            in_range = [
                number for number in numbers if number is not None and 1 <= number <= n_sentences
            ]
            if polarity is _AMBIGUOUS or len(in_range) != len(numbers):
                return _AMBIGUOUS
            found[polarity].add(frozenset(in_range))
    if len(found[True]) > 1 or len(found[False]) > 1:
        return _AMBIGUOUS
    supported, unsupported = (
        set(next(iter(found[key]))) if found[key] else None for key in (True, False)
    )
    return supported, unsupported


def _supported_from_lines(reply: str, n_sentences: int) -> int | None:
    """The number of supported sentences from one verdict line per sentence, else a ``supported: [1, 3]`` line.

    Every verdict must be on one line and agree with the others; anything ambiguous (a hedged or
    mixed verdict, lists that contradict each other or the per-sentence lines, sentences without any
    verdict) gives ``None``, never a guess.
    """
    lines = reply.splitlines()
    verdicts, listed = _sentence_verdicts(lines), _listed(lines, n_sentences)
    if verdicts is _AMBIGUOUS or listed is _AMBIGUOUS:
        return None
    supported, unsupported = listed
    if supported is not None and unsupported is not None and supported & unsupported:
        return None
    for number, verdict in verdicts.items():
        if (supported is not None and (number in supported) != verdict) or (
            unsupported is not None and (number in unsupported) == verdict
        ):
            return None
    if set(verdicts) == set(range(1, n_sentences + 1)):
        return sum(verdicts.values())
    return None if supported is None else len(supported)


def _supported(reply: str, found: dict | None, n_items: int) -> int | None:
    """How many of ``n_items`` numbered items the reply calls supported: from the JSON object ``found``, else its lines."""
    if found is not None:
        return _supported_from_json(found["supported"], n_items)
    return _supported_from_lines(reply, n_items)


def summary_parts(reply: str, n_sentences: int) -> dict | None:
    """The summary rubric's sub-scores ``{"fluency": 0/1, "supported": k, "n_sentences": n}``, or ``None`` if invalid."""
    found = _last_object_with(reply, ("fluency", "supported"))
    fluency = _flag(found["fluency"]) if found is not None else _labelled_integer(reply, "fluency")
    supported = _supported(reply, found, n_sentences)
    if fluency is None or supported is None or fluency not in (0, 1) or n_sentences < 1:
        return None
    return {"fluency": fluency, "supported": supported, "n_sentences": n_sentences}


def summary_score(parts: dict) -> float:
    """The score of valid summary rubric sub-scores: fluency (0/1) x supported sentences / sentences."""
    return parts["fluency"] * parts["supported"] / parts["n_sentences"]


def parse_summary_verdict(reply: str, n_sentences: int) -> float | None:
    """Score a summary rubric reply (:func:`summary_score`), or ``None`` if invalid."""
    parts = summary_parts(reply, n_sentences)
    return None if parts is None else summary_score(parts)


def helmet_qa_parts(reply: str) -> dict | None:
    """The HELMET QA rubric's sub-scores ``{"fluency": 0/1, "correctness": 0-3}`` from a reply, or ``None`` if invalid."""
    fluency, correctness = _fluency_and_correctness(reply, _flag)
    if fluency not in (0, 1) or correctness is None or not 0 <= correctness <= 3:
        return None
    return {"fluency": fluency, "correctness": correctness}


def helmet_qa_score(parts: dict) -> float:
    """The score of valid HELMET QA sub-scores: fluency (0/1) x correctness (0-3) / 3."""
    return parts["fluency"] * parts["correctness"] / 3


def _key_point_list(value: object) -> list[str] | None:
    """A non-empty list of non-blank strings, stripped; ``None`` for anything else."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(item, str) and item.strip() for item in value):
        return None
    return [item.strip() for item in value]


def key_points_parts(reply: str) -> dict | None:
    """The key points of a reference summary from an extraction reply: ``{"key_points": [...]}``, or ``None`` if invalid.

    Read from the last JSON object with a ``key_points`` list, else the last JSON list of strings.
    """
    found = _last_object_with(reply, ("key_points",))
    if found is not None:
        points = _key_point_list(found["key_points"])
    else:
        points = next(
            (
                listed
                for value in reversed(json_values(reply))
                if (listed := _key_point_list(value))
            ),
            None,
        )
    return None if points is None else {"key_points": points}


def recall_parts(reply: str, n_key_points: int) -> dict | None:
    """The key-point recall rubric's sub-scores ``{"supported_key_points": k, "n_key_points": n}``, or ``None`` if invalid."""
    supported = _supported(reply, _last_object_with(reply, ("supported",)), n_key_points)
    if supported is None or n_key_points < 1:
        return None
    return {"supported_key_points": supported, "n_key_points": n_key_points}


def recall_score(parts: dict) -> float:
    """The 0-1 score of valid recall sub-scores: the share of key points the summary conveys."""
    return parts["supported_key_points"] / parts["n_key_points"]


SECTION_CRITERIA = ("consistency", "relevance", "faithfulness")
"""ETHIC's criteria for one section summary, each rated 1-5."""


def section_parts(reply: str) -> dict | None:
    """``{"consistency", "relevance", "faithfulness"}`` (1-5 each) from a reply: the last JSON object with all
    three, else ``Consistency: 4`` style labels; ``None`` when one is missing or out of range."""
    found = _last_object_with(reply, SECTION_CRITERIA)
    values = (
        [_integer(found[name]) for name in SECTION_CRITERIA]
        if found is not None
        else [_labelled_integer(reply, name) for name in SECTION_CRITERIA]
    )
    if any(value is None or not 1 <= value <= 5 for value in values):
        return None
    return dict(zip(SECTION_CRITERIA, values))


def section_score(parts: dict) -> float:
    """The 0-1 score of valid section sub-scores: their mean, from 1-5 onto 0-1."""
    return (sum(parts[name] for name in SECTION_CRITERIA) / len(SECTION_CRITERIA) - 1) / 4


SCALE_DIGITS = "12345"


def weighted_section_parts(reply: str, tokens: list[dict]) -> dict | None:
    """Each criterion's expected rating under the judge's own token probabilities (G-Eval's weighting), from the
    reply's ``logprobs.content``: the rating digit of each criterion in the reply's last verdict must be a token of
    its own, and the 1-5 digits among its alternatives are renormalised. ``None`` when that cannot be read for
    all three (the plain ratings are used then)."""
    pieces = [
        piece
        for token in tokens
        if isinstance(token, dict) and isinstance(piece := token.get("token"), str)
    ]
    if len(pieces) != len(tokens) or "".join(pieces) != reply:  # every token a dict with its text
        return None
    starts, offset = [], 0
    for piece in pieces:
        starts.append(offset)
        offset += len(piece)
    weighted = {}
    for name in SECTION_CRITERIA:
        found = list(re.finditer(rf'"?{name}"?\s*:\s*"?([1-5])\b', reply, re.IGNORECASE))
        if not found:
            return None
        position = found[-1].start(1)
        index = max(i for i, start in enumerate(starts) if start <= position)
        if pieces[index].strip() != reply[position]:
            return None
        alternatives = [
            (entry.get("token", "").strip(), entry.get("logprob"))
            for entry in tokens[index].get("top_logprobs") or []
        ]
        probabilities = {
            digit: math.exp(logprob)
            for digit, logprob in alternatives
            if digit in SCALE_DIGITS and digit and isinstance(logprob, (int, float))
        }
        total = sum(probabilities.values())
        if total <= 0:
            return None
        weighted[name] = round(
            sum(int(digit) * probability for digit, probability in probabilities.items()) / total, 4
        )
    return weighted
