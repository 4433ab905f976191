"""Turn a judge's free-text reply into a 0-1 score, or ``None`` when the reply holds no valid verdict.

The rubrics ask for a final JSON object; replies are read leniently: the last JSON object with the
expected keys anywhere in the text (prose or code fences around it are fine), else ``Fluency: 2``
style lines, else per-sentence ``[3] supported`` lines for summaries. Values out of range make the
reply invalid rather than being clipped.
"""

import json
import re

_DECODER = json.JSONDecoder()
_SCALE = r"(?:\W{0,4}?[(\[]\s*\d\s*(?:-|–|to|/)\s*\d\s*[)\]])?"
_SENTENCE_VERDICT = re.compile(
    r"^\W*(?:sentence\s*)?\[?(\d+)\]?\W.*?\b(not\s+supported|unsupported|supported)\b",
    re.IGNORECASE | re.MULTILINE,
)
_SUPPORTED_LIST = re.compile(r"\bsupported\b\W{0,6}\[([\d,\s]*)\]", re.IGNORECASE)


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


def parse_qa_verdict(reply: str) -> float | None:
    """Score a QA rubric reply: fluency (0-2) x correctness (0-3) / 6, or ``None`` if invalid."""
    found = _last_object_with(reply, ("fluency", "correctness"))
    if found is not None:
        fluency, correctness = _integer(found["fluency"]), _integer(found["correctness"])
    else:
        fluency, correctness = _labelled_integer(reply, "fluency"), _labelled_integer(reply, "correctness")
    if fluency is None or correctness is None or not 0 <= fluency <= 2 or not 0 <= correctness <= 3:
        return None
    return fluency * correctness / 6


def _supported_from_json(value: object, n_sentences: int) -> int | None:
    """The number of supported sentences from a JSON ``supported`` value: a list of numbers or a count."""
    if isinstance(value, list):
        numbers = [_integer(item) for item in value]
        if any(number is None or not 1 <= number <= n_sentences for number in numbers):
            return None
        return len(set(numbers))
    count = _integer(value)
    return count if count is not None and 0 <= count <= n_sentences else None


def _supported_from_lines(reply: str, n_sentences: int) -> int | None:
    """The number of supported sentences from ``supported: [1, 3]`` or one verdict line per sentence."""
    listed = _SUPPORTED_LIST.findall(reply)
    if listed:
        return _supported_from_json([item for item in listed[-1].replace(",", " ").split()], n_sentences)
    verdicts = {int(number): verdict.lower() == "supported" for number, verdict in _SENTENCE_VERDICT.findall(reply)}
    if set(verdicts) != set(range(1, n_sentences + 1)):
        return None
    return sum(verdicts.values())


def parse_summary_verdict(reply: str, n_sentences: int) -> float | None:
    """Score a summary rubric reply: fluency (0/1) x supported sentences / ``n_sentences``, or ``None`` if invalid."""
    found = _last_object_with(reply, ("fluency", "supported"))
    if found is not None:
        fluency, supported = _integer(found["fluency"]), _supported_from_json(found["supported"], n_sentences)
    else:
        fluency, supported = _labelled_integer(reply, "fluency"), _supported_from_lines(reply, n_sentences)
    if fluency is None or supported is None or fluency not in (0, 1) or n_sentences < 1:
        return None
    return fluency * supported / n_sentences
