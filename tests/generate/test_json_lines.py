"""``json_line`` writes what ``json.dumps(record, ensure_ascii=False)`` writes, byte for byte."""

from __future__ import annotations

import json
import random

import pytest

from longbench100.generate import json_lines
from longbench100.generate.json_lines import (
    LONG,
    RECURRING,
    EscapedText,
    RecurringForms,
    escaped_body,
    json_line,
    read_back,
)
from longbench100.text.spliced_count import TextIndex, materialize

ALPHABET = [
    "a",
    " ",
    "\n",
    "\r",
    "\t",
    "\\",
    '"',
    "/",
    "\x00",
    "\x01",
    "\x08",
    "\x0b",
    "\x0c",
    "\x1f",
    "\x7f",
    "\x85",
    "é",
    "€",
    "\u2028",
    "\u2029",
    "\ufeff",
    "日本",
    "😀",
    "\U0010ffff",
    "\\u00e9",
    "\\n",
    "'",
]


def random_text(rng: random.Random, length: int, alphabet: list[str]) -> str:
    """A string of ``length`` pieces drawn from ``alphabet``, mostly plain letters."""
    return "".join(rng.choice(alphabet) if rng.random() < 0.3 else "x" for _ in range(length))


def expected(record: object) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def test_long_and_short_strings_of_every_awkward_character_serialise_identically():
    rng = random.Random("json-lines")
    plain = [
        character
        for character in ALPHABET
        if not ("\x00" <= character < " " and character not in "\t\n\r")
    ]
    for round_ in range(300):
        alphabet = (
            plain if round_ % 2 else ALPHABET
        )  # half the long strings take the byte path, half the fallback
        record = {
            "id": f"task-8k-{round_:04d}",
            "prompt": random_text(rng, rng.choice([0, 10, LONG, LONG + 1, 20_000]), alphabet),
            "row": round_,
            "answers": [random_text(rng, 5, ALPHABET)],
            "closed_book_prompt": random_text(rng, LONG + 50, alphabet)
            if rng.random() < 0.5
            else None,
            "gold": {
                "spans": {"context": [0, 3]},
                "text": random_text(rng, LONG + 10, alphabet),
                "depth": 0.1 * round_,
            },
            'é "key"\n': True,
        }
        assert json_line(record) == expected(record)


def test_a_real_prompt_sized_record_and_other_shapes():
    prompt = (
        'Some sentence with a "quote", a back\\slash and a line break.\n' * 12_000
    ) + "€ and a tab\t."
    record = {
        "id": "niah_single_2-128k-0000",
        "prompt": prompt,
        "length": 131072,
        "metric": None,
        "seed": 42,
    }
    assert json_line(record) == expected(record)
    for other in [[prompt, 1], "x" * 10_000, {}, {1: "x" * 10_000}, {"a": {"b": "x\n" * 5_000}}]:
        assert json_line(other) == expected(other)


def test_a_lone_surrogate_fails_as_the_standard_encoder_does():
    record = {"prompt": "x" * LONG + "\ud800"}
    with pytest.raises(UnicodeEncodeError):
        expected(record)
    with pytest.raises(UnicodeEncodeError):
        json_line(record)


@pytest.mark.parametrize("size", [LONG, 70_000])  # looked for in one pass, and one at a time
@pytest.mark.parametrize("code", range(32))
def test_a_long_string_with_one_control_character_of_any_kind(code: int, size: int):
    record = {"prompt": "x" * size + chr(code) + "é" + chr(code)}
    assert json_line(record) == expected(record)
    assert escaped_body(record["prompt"]) == expected(record["prompt"])[1:-2]


@pytest.mark.parametrize(
    "record, error",
    [
        (
            {"a": "\ud800", "b": b""},
            TypeError,
        ),  # the standard encoder serialises everything before it encodes
        ({"\ud800": b""}, TypeError),
        ({"prompt": "x" * LONG + "\ud800", "n": float("nan"), "bad": {1, 2}}, TypeError),
        ({"prompt": "x" * LONG + "\ud800"}, UnicodeEncodeError),
    ],
)
def test_a_record_that_cannot_be_written_fails_as_the_standard_encoder_does(
    record: dict, error: type
):
    with pytest.raises(error):
        expected(record)
    with pytest.raises(error):
        json_line(record)


def test_a_string_subclass_is_written_as_its_characters():
    class Shouting(str):
        def encode(self, *args, **kwargs):  # json ignores it; so must we
            return super().upper().encode(*args, **kwargs)

    record = {"prompt": Shouting("quiet " * 1000)}
    assert json_line(record) == expected(record)


class _Text(str):
    """A str subclass: JSON reads it back as a plain str."""


def test_a_record_read_back_is_what_json_reads_from_its_line():
    rng = random.Random("read-back")
    for round_ in range(200):
        prompt = random_text(rng, rng.choice([0, LONG, LONG + 1, 9_000]), ALPHABET)
        record = {
            "id": f"task-8k-{round_:04d}",
            "prompt": prompt if round_ % 7 else _Text(prompt),
            "answers": (random_text(rng, 5, ALPHABET), "b"),  # a tuple: a list when read
            "gold": {1: [0, 3], "spans": {"context": (0, 3)}, "depth": 0.1 * round_},
            "closed_book_prompt": random_text(rng, LONG + 3, ALPHABET) if round_ % 2 else None,
            "seed": 42,
        }
        expected_record = json.loads(json_line(record))
        got = read_back(record)
        assert got == expected_record
        assert list(got) == list(expected_record)  # the keys in the file's order
        assert all(type(value) is type(expected_record[key]) for key, value in got.items())
        assert type(got["answers"]) is list and type(got["prompt"]) is str


def test_the_json_form_of_a_joined_text_is_the_join_of_its_stretches_forms():
    """What lets twins be written from escaped stretches of the data's prompts: a cut anywhere,
    each side escaped on its own (as bytes or by the standard encoder), joins to the whole's form,
    and json_line writes an EscapedText as the string it spells."""
    rng = random.Random("stretches")
    for round_ in range(300):
        text = random_text(rng, rng.choice([0, 50, LONG + 1, 9_000]), ALPHABET)
        cuts = sorted(rng.randint(0, len(text)) for _ in range(rng.randint(0, 5)))
        bounds = [0, *cuts, len(text)]
        stretches = [text[start:end] for start, end in zip(bounds, bounds[1:])]
        forms = tuple(escaped_body(stretch) for stretch in stretches)
        assert (
            b"".join(forms)
            == escaped_body(text)
            == json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")
        )
        record = {"id": f"x-{round_}", "prompt": text, "prompt_tokens": 3}
        assert json_line({**record, "prompt": EscapedText(forms)}) == expected(record)


def test_a_prompt_written_from_the_forms_of_its_recurring_parts_is_the_prompt_s_line(
    monkeypatch,
):
    """Prompts spelled by parts (documents placed whole or in part, text between them) are written
    from forms kept across prompts exactly as the standard encoder writes them, whatever was kept
    (a documents' form from an earlier prompt, none after the memory is cleared when full)."""
    monkeypatch.setattr(json_lines, "_KEPT_BYTES", 40_000)  # cleared now and then
    rng = random.Random("recurring")
    documents = [
        TextIndex(random_text(rng, rng.choice([10, RECURRING, 3_000, 9_000]), ALPHABET), None)
        for _ in range(12)
    ]
    forms = RecurringForms()
    kept_whole = 0
    for round_ in range(300):
        parts: list = []
        for _ in range(rng.randint(0, 6)):
            if rng.random() < 0.5:
                parts.append(random_text(rng, rng.choice([0, 3, 20, 300]), ALPHABET))
            index = rng.choice(documents)
            whole = rng.random() < 0.7
            start = 0 if whole else rng.randint(0, len(index.text))
            end = len(index.text) if whole else rng.randint(start, len(index.text))
            parts.append((index, start, end))
            kept_whole += whole and len(index.text) >= RECURRING
        prompt = materialize(parts)
        record = {"id": f"x-{round_}", "prompt": prompt, "prompt_tokens": 3}
        written = forms.escaped(prompt, parts)
        assert isinstance(written, EscapedText)
        assert json_line({**record, "prompt": written}) == expected(record)
    assert kept_whole > 300
    assert forms.escaped("a\n", None) == "a\n"  # no parts: the text, escaped as any other


def test_the_kept_forms_count_their_texts_and_entries_against_the_limit(monkeypatch):
    """Short texts (headings that change every row) cost more than their forms' bytes: what is
    kept, counted with its text and each entry's own cost, stays within the limit."""
    monkeypatch.setattr(json_lines, "_KEPT_BYTES", 20_000)
    forms = RecurringForms()
    for number in range(2_000):
        heading = f"Passage {number}:\n"
        assert forms.form(heading) == escaped_body(heading)
        held = sum(
            len(text) + len(form) + json_lines._ENTRY_BYTES for text, form in forms._forms.items()
        )
        assert held <= 20_000
    assert 0 < len(forms._forms) < 2_000  # kept, then let go when full


def test_a_stretch_of_a_prompt_is_written_from_the_parts_of_its_form():
    """What the twins take from a data prompt's form (parts with their ends): any stretch, from
    the parts it spans whole and its edges escaped, is the stretch's own form."""
    rng = random.Random("stretch")
    documents = [TextIndex(random_text(rng, RECURRING + 50, ALPHABET), None) for _ in range(3)]
    forms = RecurringForms()
    whole = 0
    for _ in range(200):
        parts: list = []
        for _ in range(rng.randint(1, 5)):
            parts.append(random_text(rng, rng.choice([0, 7, 40]), ALPHABET))
            index = rng.choice(documents)
            parts.append((index, 0, len(index.text)))
        prompt = materialize(parts)
        form = forms.escaped(prompt, parts)
        assert isinstance(form, EscapedText) and form.ends[-1] == len(prompt)
        for _ in range(10):
            start = rng.randint(0, len(prompt))
            end = rng.randint(start, len(prompt))
            pieces = form.stretch(prompt, start, end)
            assert b"".join(pieces) == escaped_body(prompt[start:end])
            whole += any(piece in form.parts and len(piece) > RECURRING for piece in pieces)
    assert whole > 200  # most stretches took a document's form as it was
    assert EscapedText((b"x",)).stretch("a\nb", 1, 3) == (b"\\nb",)  # no ends: escaped


def test_short_values_written_in_runs_between_long_strings_serialise_identically():
    """The values between two long strings are serialised together: any order of long and short
    values (long ones side by side, first or last, none or all) gives the standard line."""
    rng = random.Random("runs")
    shorts = [None, True, 0.1, -3, "x", 'é "q"\n', [1, "a"], {"k": [None, 2.5]}, {}, []]
    for round_ in range(400):
        record = {}
        for number in range(rng.randint(0, 8)):
            key = str(number) + rng.choice(["", "é", '"', "\n"])
            long = rng.random() < 0.4
            record[key] = (
                random_text(rng, LONG + rng.randint(1, 50), ALPHABET)
                if long
                else rng.choice(shorts)
            )
        assert json_line(record) == expected(record), round_
