"""The prompt view's searches for options and records, with and without their opening words."""

import re
from typing import Any

import pytest

from longbench100.baselines.prompt_view import (
    _OPTION,
    _OPTION_MARK,
    _RECORD,
    _RECORD_MARK,
    _found,
    _without_records,
    read_prompt,
)

TEXTS = [
    "Option 1: red\nOption 2: blue\n",
    "Pick one.\nOption 12: a long option\nnot an Option 3: here",
    'Record: the key "k1" has the value "v1".\nprose\nRecord: the key "k2" has the value "v2".',
    'prose with Record: the key "k" has the value "v". inside a line',
    "no marks at all\n\nPassage 1:\ntext",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_found_is_findall(text):
    assert _found(_OPTION, _OPTION_MARK, text) == _OPTION.findall(text)
    assert _found(_RECORD, _RECORD_MARK, text) == _RECORD.findall(text)
    assert _without_records(text) == _RECORD.sub("", text)


class _Refusing:
    """A pattern that must not be searched."""

    def findall(self, text: str) -> list:
        raise AssertionError(f"searched {text!r}")


def test_found_does_not_search_a_text_without_the_mark():
    refusing: Any = _Refusing()
    assert _found(refusing, _OPTION_MARK, "Passage 1:\nno choices here") == []
    with pytest.raises(AssertionError):
        _found(refusing, _OPTION_MARK, "Option 1: yes")


def test_read_prompt_reads_options_and_records_beside_passages():
    prompt = (
        "Read the passages.\n\nPassage 1:\nFirst text.\n"
        'Record: the key "a" has the value "b".\n\nPassage 2:\nSecond text.'
        "\n\nQuestion: which?\nOption 1: first\nOption 2: second"
    )
    view = read_prompt(prompt)
    assert [passage.text for passage in view.passages] == ["First text.", "Second text."]
    assert view.records == (("a", "b"),)
    assert view.options == (("1", "first"), ("2", "second"))
    assert re.search("Record", view.passages[0].text) is None
