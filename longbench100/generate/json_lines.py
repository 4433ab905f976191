"""A record as one JSON line, byte for byte what ``json.dumps(record, ensure_ascii=False)`` gives, faster.

A generated record holds one very long string (the prompt, up to megabytes at 128k and beyond), and
the standard library's encoder escapes a string one character at a time: about 4 ms for a 600,000-
character prompt, more than building the row. Long strings are escaped here as UTF-8 bytes instead:
the escapes JSON needs with ``ensure_ascii=False`` are the backslash, the quote and the control
characters, all single bytes that never occur inside a multi-byte UTF-8 sequence, so ``bytes.replace``
finds exactly them. A long string holding a control character other than tab, newline and carriage
return (escaped as ``\\u00XX``) goes through the standard encoder, like every other value.

Since JSON escapes a string one character at a time, the escaped form of a text joined from
stretches is the join of the stretches' forms: a value made that way (:class:`EscapedText`, the
control twins spelled from stretches of the data's prompts) is written as it is.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass

from longbench100.text.spliced_count import Part

LONG = 4096  # characters from which a string is escaped as bytes
_RARE_CONTROLS = tuple(bytes([code]) for code in range(32) if code not in (9, 10, 13))
_ALL_BUT_RARE_CONTROLS = bytes(code for code in range(256) if bytes([code]) not in _RARE_CONTROLS)
_SEARCHED_APART = 1 << 16  # bytes from which each rare control character is searched for apart
_ESCAPES = (
    (b"\\", b"\\\\"),
    (b'"', b'\\"'),
    (b"\n", b"\\n"),
    (b"\r", b"\\r"),
    (b"\t", b"\\t"),
)  # backslash first


@dataclass(frozen=True)
class EscapedText:
    """A string value already in its JSON form, in UTF-8, without its quotes, as ``parts`` to be
    joined: :func:`json_line` writes them as they are. JSON escapes a string one character at a
    time, so the form of a text joined from stretches is the join of the stretches' forms
    (:func:`escaped_body`)."""

    parts: tuple[bytes, ...]
    ends: tuple[int, ...] = ()
    """Where each part's characters end in the text, when known (:class:`RecurringForms`)."""

    def stretch(self, text: str, start: int, end: int) -> tuple[bytes, ...]:
        """The JSON form of ``text[start:end]``, where this is ``text``'s form with its
        :attr:`ends`: the parts it spans whole as they are, the rest escaped."""
        if not self.ends:
            return (escaped_body(text[start:end]),)
        forms: list[bytes] = []
        number = bisect.bisect_right(self.ends, start)
        at = start
        while at < end:
            part_end = self.ends[number]
            part_start = self.ends[number - 1] if number else 0
            if at == part_start and part_end <= end:
                forms.append(self.parts[number])
            else:
                forms.append(escaped_body(text[at : min(part_end, end)]))
            at = min(part_end, end)
            number += 1
        return tuple(forms)


RECURRING = 512
"""Characters from which a document a prompt places whole has its JSON form kept for the run's
other prompts (:class:`RecurringForms`)."""
_HEADING = 256  # characters up to which the text between two placed documents has its form kept
_KEPT_BYTES = 1 << 27  # most bytes a RecurringForms keeps (texts, forms and each entry's own
# cost, :data:`_ENTRY_BYTES`); it starts afresh when full
_ENTRY_BYTES = 150  # what a kept entry costs besides its text and form: two objects, a dict slot


class RecurringForms:
    """The JSON forms of the texts a run's prompts hold again and again, each escaped once: the
    documents they place whole (a long run places most of its pool's documents in several rows)
    and the short headings between them. A prompt's form is joined from the forms of the parts
    its exact count found it made of (:meth:`Tokenizer.located`): :func:`escaped_body` of a
    joined text is the join of its stretches' forms, so the bytes are the prompt's."""

    def __init__(self) -> None:
        self._forms: dict[str, bytes] = {}
        self._kept = 0

    def escaped(self, text: str, parts: Sequence[Part] | None) -> EscapedText | str:
        """``text`` in its JSON form, from ``parts``, which spell it (spans of documents and the
        literal text between them); ``text`` itself, to be escaped whole, without them."""
        if parts is None:
            return text
        forms: list[bytes] = []
        ends: list[int] = []
        between: list[str] = []
        at = 0
        for part in parts:
            if isinstance(part, str):
                between.append(part)
                continue
            index, start, end = part
            if start or end != len(index.text) or end < RECURRING:
                between.append(index.text[start:end])
                continue
            if between:
                at = self._add("".join(between), False, forms, ends, at)
                between = []
            at = self._add(index.text, True, forms, ends, at)
        if between or not forms:
            self._add("".join(between), False, forms, ends, at)
        return EscapedText(tuple(forms), tuple(ends))

    def form(self, text: str) -> bytes:
        """``escaped_body(text)`` of a text that recurs, kept for the next calls."""
        return self._form(text, True)

    def _add(self, text: str, recurs: bool, forms: list[bytes], ends: list[int], at: int) -> int:
        """Append ``text``'s form to ``forms`` and where it ends to ``ends`` (it starts at
        ``at``); return its end."""
        forms.append(self._form(text, recurs))
        ends.append(at + len(text))
        return ends[-1]

    def _form(self, text: str, recurs: bool = False) -> bytes:
        """``escaped_body(text)``, kept for the next prompts where it ``recurs`` or is as short
        as a heading."""
        recurs = recurs or len(text) <= _HEADING
        form = self._forms.get(text) if recurs else None
        if form is None:
            form = escaped_body(text)
            if recurs:
                size = len(text) + len(form) + _ENTRY_BYTES
                if self._kept + size > _KEPT_BYTES:
                    self._forms.clear()
                    self._kept = 0
                self._forms[text] = form
                self._kept += size
        return form


def json_line(record: object) -> bytes:
    """``(json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")``, exactly; string values of a
    top-level object longer than :data:`LONG` are escaped as bytes. Like the standard encoder, every value
    is serialised before anything is encoded, so a record that cannot be serialised fails as it would
    there, not on an unencodable character first."""
    return b"".join(json_line_parts(record))


def json_line_parts(record: object) -> list[bytes]:
    """:func:`json_line` of ``record`` as the parts it joins, to be written one after another (a
    long string's bytes are not copied once more to join them). The members between two long
    strings are serialised together, as the object they make without its braces: the standard
    encoder writes an object's members as it writes each key and value alone."""
    if not isinstance(record, dict) or not all(isinstance(key, str) for key in record):
        return [(json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")]
    pending: list[str | tuple[str, str | EscapedText]] = []  # runs of members, or long strings
    run: dict[str, object] = {}
    for key, value in record.items():
        if isinstance(value, EscapedText) or (isinstance(value, str) and len(value) > LONG):
            if run:
                pending.append(_ENCODER.encode(run)[1:-1])
                run = {}
            pending.append((_ENCODER.encode(key), value))
        else:
            run[key] = value
    if run:
        pending.append(_ENCODER.encode(run)[1:-1])
    parts = [b"{"]
    for number, item in enumerate(pending):
        separator = b", " if number else b""
        if isinstance(item, str):
            parts.append(separator + item.encode("utf-8"))
            continue
        key, value = item
        parts.append(separator + key.encode("utf-8") + b': "')
        parts.extend(value.parts if isinstance(value, EscapedText) else (escaped_body(value),))
        parts.append(b'"')
    parts.append(b"}\n")
    return parts


_ENCODER = json.JSONEncoder(ensure_ascii=False)
"""The encoder ``json.dumps(value, ensure_ascii=False)`` makes for each call, made once."""


def escaped_body(text: str) -> bytes:
    """``text`` as JSON writes it with ``ensure_ascii=False``, in UTF-8, without its quotes:
    escaped as bytes, or by the standard encoder when it holds a rare control character."""
    data = str.encode(
        text, "utf-8"
    )  # str's own method: a subclass's override does not apply, as in json
    if _holds_a_rare_control(data):
        return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")
    for raw, escaped in _ESCAPES:
        data = data.replace(raw, escaped)
    return data


def _holds_a_rare_control(data: bytes) -> bool:
    """Whether ``data`` holds a control character JSON writes as ``\\u00XX``: looked for one
    at a time in a long text (each search runs at memory speed), in one pass that keeps only them
    in a short one (where 27 searches would cost more in calls than in bytes)."""
    if len(data) > _SEARCHED_APART:
        return any(control in data for control in _RARE_CONTROLS)
    return bool(data.translate(None, _ALL_BUT_RARE_CONTROLS))


def read_back(record: dict) -> dict:
    """``json.loads(json_line(record))`` without escaping and parsing the long strings again: every
    other value goes through the standard encoder and decoder (tuples become lists, keys strings,
    as in the file), and a long string (a ``str`` longer than :data:`LONG`, which JSON gives back
    as it was) is kept as it is, in its place."""
    long = {key: value for key, value in record.items() if type(value) is str and len(value) > LONG}
    if not long or not all(isinstance(key, str) for key in record):
        return json.loads(json_line(record))
    rest = json.loads(json.dumps({**record, **dict.fromkeys(long, "")}, ensure_ascii=False))
    rest.update(long)  # keys already in place: the order is the record's
    return rest
