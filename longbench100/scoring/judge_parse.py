"""Turn a judge's free-text reply into a 0-1 score, or ``None`` when the reply holds no valid verdict.

The rubrics ask for a final JSON object; replies are read leniently: the last JSON object with the
expected keys anywhere in the text (prose or code fences around it are fine), else ``Fluency: 2``
style lines and, for summaries, one ``[3] supported`` line per sentence, else a ``Supported: [1, 3]``
line. Values out of range make the reply invalid rather than being clipped, and an ambiguous
fallback (a hedged or mixed verdict, verdicts or lists that contradict each other) gives ``None``.
"""

import json
import re

_DECODER = json.JSONDecoder()
_SCALE = r"(?:\W{0,4}?[(\[]\s*\d\s*(?:-|–|to|/)\s*\d\s*[)\]])?"
_NUMBERED_LINE = re.compile(r"^[^\w\n]*(?:sentence\s*#?\s*(\d+)\b|\[\s*(\d+)\s*\]|(\d+)\s*[.):\u2013-])", re.IGNORECASE)
_VERDICT_WORD = re.compile(r"\b(?:(not[\s_-]+)|(un))?supported\b", re.IGNORECASE)
_SUPPORTED_LIST = re.compile(
    r"\b(?:(not[\s_-]+)|(un))?supported\b(?:\s+sentences?)?[^\w\[]{0,6}\[([\d,\s]*)\]", re.IGNORECASE
)
# a bare "supported" right after a negation ("is not fully supported", "can't be supported") is a "no"
_NEGATED = re.compile(
    r"\b(?:not|never|hardly|cannot|\w+n't)"
    r"(?:[\s_-]+(?:be|been|being|fully|directly|entirely|explicitly|really|clearly|actually|at\s+all))*[\s_-]+$",
    re.IGNORECASE,
)
# "partially supported" is no yes/no verdict
_HEDGED = re.compile(r"\b(?:partially|partly|mostly|largely|somewhat|half)[\s_-]+$", re.IGNORECASE)
_AMBIGUOUS = object()


def _json_objects(text: str) -> list[dict]:
    """Every JSON object that can be decoded starting at some ``{`` of ``text``, in order."""
    objects = []
    for match in re.finditer(r"\{", text):
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects


def _last_object_with(text: str, keys: tuple[str, ...]) -> dict | None:
    """The last JSON object in ``text`` that has all ``keys`` (compared case-insensitively)."""
    for value in reversed(_json_objects(text)):
        lowered = {str(key).lower(): item for key, item in value.items()}
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


def _labelled_integer(text: str, label: str) -> int | None:
    """The integer after the last ``label:`` in ``text`` (``Fluency: 2``, ``**Correctness** (0-3): 3``)."""
    found = re.findall(rf"\b{label}\b{_SCALE}\W{{0,6}}(\d+)\b", text, re.IGNORECASE)
    return int(found[-1]) if found else None


def qa_parts(reply: str) -> dict | None:
    """The QA rubric's sub-scores ``{"fluency": 0-2, "correctness": 0-3}`` from a reply, or ``None`` if invalid."""
    found = _last_object_with(reply, ("fluency", "correctness"))
    if found is not None:
        fluency, correctness = _integer(found["fluency"]), _integer(found["correctness"])
    else:
        fluency, correctness = _labelled_integer(reply, "fluency"), _labelled_integer(reply, "correctness")
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


def _polarity(match: re.Match, before: str) -> object:
    """True for a "supported" verdict, False for "not supported"/"unsupported", ``_AMBIGUOUS`` for a hedge."""
    if match.group(1) or match.group(2):
        return False
    if _HEDGED.search(before):
        return _AMBIGUOUS
    return not _NEGATED.search(before)


def _line_verdict(line: str) -> object:
    """The one verdict a per-sentence line gives (True/False), ``None`` without one, ``_AMBIGUOUS`` when mixed."""
    verdicts = {_polarity(match, line[: match.start()]) for match in _VERDICT_WORD.finditer(line)}
    if not verdicts:
        return None
    return verdicts.pop() if len(verdicts) == 1 else _AMBIGUOUS


def _sentence_verdicts(lines: list[str]) -> dict[int, bool] | object:
    """Sentence number -> supported, from ``[3] supported`` / ``Sentence 2: not supported`` lines (one line each).

    ``_AMBIGUOUS`` when a line mixes or hedges its verdict, or two lines give one sentence different verdicts.
    """
    verdicts: dict[int, bool] = {}
    for line in lines:
        numbered = _NUMBERED_LINE.match(line)
        if numbered is None:
            continue
        number = int(next(group for group in numbered.groups() if group is not None))
        verdict = _line_verdict(line[numbered.end():])
        if verdict is None:
            continue
        if verdict is _AMBIGUOUS or verdicts.get(number, verdict) != verdict:
            return _AMBIGUOUS
        verdicts[number] = verdict
    return verdicts


def _listed(lines: list[str], n_sentences: int) -> tuple[set[int] | None, set[int] | None] | object:
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
            if polarity is _AMBIGUOUS or any(number is None or not 1 <= number <= n_sentences for number in numbers):
                return _AMBIGUOUS
            found[polarity].add(frozenset(numbers))
    if len(found[True]) > 1 or len(found[False]) > 1:
        return _AMBIGUOUS
    supported, unsupported = (set(next(iter(found[key]))) if found[key] else None for key in (True, False))
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


def summary_parts(reply: str, n_sentences: int) -> dict | None:
    """The summary rubric's sub-scores ``{"fluency": 0/1, "supported": k, "n_sentences": n}``, or ``None`` if invalid."""
    found = _last_object_with(reply, ("fluency", "supported"))
    if found is not None:
        fluency, supported = _integer(found["fluency"]), _supported_from_json(found["supported"], n_sentences)
    else:
        fluency, supported = _labelled_integer(reply, "fluency"), _supported_from_lines(reply, n_sentences)
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
