"""Read a prompt the way a no-model attacker would: its passages, options, records and summaries.

The view is built from the prompt text alone (the headings our templates write), never from the
record's gold, so a baseline sees exactly what a model sees. Whatever a prompt does not show (no
passages, no options) is simply empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(
    r"^(?:Passage|Paragraph|Section|Document) (\d+):\n|^Document \[(\d+)\](?: \(Title: [^\n]*?\))?: |^\[ID: ([^\]\n]+)\](?: \(Title: [^\n]*?\))? ",
    re.MULTILINE,
)
_TRAILER = re.compile(
    r"\n\n(?=Task:|Question:|Summary:|Summaries, shuffled:|Target |How many|Using only|Combine what|Write |Rank |Which |Put the )"
)
_OPTION_MARK = "Option "
_OPTION = re.compile(rf"^{_OPTION_MARK}(\d+): (.*)$", re.MULTILINE)
_RECORD_MARK = 'Record: the key "'
_RECORD = re.compile(rf'^{_RECORD_MARK}([^"]+)" has the value "([^"]+)"\.$', re.MULTILINE)
_SUMMARY = re.compile(r"^\[([A-Z]{1,2})\] ", re.MULTILINE)
_NAMED = re.compile(r"Passages? (\d+(?:(?:, | and )\d+)*)")
_LISTED = re.compile(r"Below are (\d+) numbered")
# a worked example's answer, with more prompt after it
_EXAMPLE_ANSWER = re.compile(r"\n\nAnswer:[^\n]*\n")


@dataclass(frozen=True)
class Passage:
    """One numbered unit of the context: its label as the prompt writes it (a number or an id) and its text."""

    label: str
    text: str


OMITTED_MARK = " ... [the rest of the text is omitted]"  # where a long document was cut (tasks/long_document.py)


@dataclass(frozen=True)
class PromptView:
    """What a prompt shows, split into the parts the baselines use."""

    prompt: str
    passages: tuple[Passage, ...]
    options: tuple[tuple[str, str], ...]  # (number, text) in prompt order
    records: tuple[tuple[str, str], ...]  # kv_retrieval: (key, value) in prompt order
    summaries: tuple[
        tuple[str, str], ...
    ]  # the organizing tasks: (letter, text) in the shuffled order shown
    named: tuple[str, ...]  # passage numbers the instruction points to ("Using only Passage 4")
    listed: (
        int | None
    )  # the number of passages the opening announces ("Below are 10 numbered paragraphs")

    @property
    def context(self) -> str:
        """The text of every passage, joined."""
        return "\n\n".join(passage.text for passage in self.passages)

    @property
    def after_examples(self) -> str:
        """The prompt after its last worked example (whose answer is an ``Answer:`` line the prompt
        goes on after) and before its closing question: the list a words task asks about; the whole
        prompt when it shows no worked example."""
        ends = [match.end() for match in _EXAMPLE_ANSWER.finditer(self.prompt)]
        start = ends[-1] if ends else 0
        end = self.prompt.rfind("\n\nQuestion:")
        return self.prompt[start:end] if end > start else self.prompt[start:]

    def named_passages(self) -> list[Passage]:
        """The passages the instruction names, else every passage."""
        chosen = [passage for passage in self.passages if passage.label in self.named]
        return chosen or list(self.passages)

    @property
    def body(self) -> str:
        """The one text of a prompt without numbered passages: between ``<text>`` and ``</text>`` (recalling), else
        after the opening instruction and before the closing question or request (one long document, as in
        long_doc_qa), without the mark of a cut document; "" when neither layout is found."""
        prompt = self.prompt
        start, end = prompt.find("<text>"), prompt.rfind("</text>")
        if 0 <= start < end:
            return prompt[start + len("<text>") : end]
        start, end = (
            prompt.find("\n\n") + 2,
            max(prompt.rfind("\n\nQuestion:"), prompt.rfind("\n\nNow ")),
        )
        return prompt[start:end].removesuffix(OMITTED_MARK).strip() if 2 <= start < end else ""


def read_prompt(prompt: str) -> PromptView:
    """Split ``prompt`` into a :class:`PromptView`."""
    headings = list(_HEADING.finditer(prompt))
    passages = []
    for index, heading in enumerate(headings):
        end = (
            headings[index + 1].start()
            if index + 1 < len(headings)
            else _end_of_last(prompt, heading.end())
        )
        label = next(group for group in heading.groups() if group is not None)
        passages.append(Passage(label, _without_records(prompt[heading.end() : end]).strip()))
    tail = prompt[headings[-1].end() :] if headings else prompt
    summaries = _summaries(tail)
    named = _NAMED.search(prompt[: headings[0].start()] if headings else "")
    listed = _LISTED.search(prompt)
    return PromptView(
        prompt=prompt,
        passages=tuple(passages),
        options=tuple(
            (number, text.strip()) for number, text in _found(_OPTION, _OPTION_MARK, tail)
        ),
        records=tuple(_found(_RECORD, _RECORD_MARK, prompt)),
        summaries=summaries,
        named=tuple(re.findall(r"\d+", named.group(1))) if named else (),
        listed=int(listed.group(1)) if listed else None,
    )


def _end_of_last(prompt: str, start: int) -> int:
    """Where the last passage ends: at the instruction that follows it, else at the prompt's end."""
    trailer = _TRAILER.search(prompt, start)
    return trailer.start() if trailer else len(prompt)


def _without_records(text: str) -> str:
    """Passage text with kv_retrieval's record lines taken out (records are read separately)."""
    return _RECORD.sub("", text) if _RECORD_MARK in text else text


def _found(pattern: re.Pattern[str], mark: str, text: str) -> list[tuple[str, str]]:
    """``pattern.findall(text)``, not searched for where ``text`` does not hold ``mark``, the words
    every match starts with (a long prompt without options or records is scanned once, by a
    plain substring search)."""
    return pattern.findall(text) if mark in text else []


def _summaries(tail: str) -> tuple[tuple[str, str], ...]:
    """The organizing tasks' lettered summaries after "Summaries, shuffled:", each up to the next letter."""
    start = tail.find("Summaries, shuffled:")
    if start < 0:
        return ()
    block = tail[start:]
    block = block[: block.find("\n\nPut the ")] if "\n\nPut the " in block else block
    marks = list(_SUMMARY.finditer(block))
    return tuple(
        (
            mark.group(1),
            block[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(block)].strip(),
        )
        for i, mark in enumerate(marks)
    )
