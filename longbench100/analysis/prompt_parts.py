"""Cut a stored prompt into instruction, context blocks and question, and build window prompts.

The split is exact: ``head + joint + context + tail == prompt`` is checked for every record. A record
whose gold holds ``spans`` (:mod:`longbench100.fitting.spans`; every newer builder records them) is
split where they say, whatever its template. Otherwise the task's packaged layout decides: the
context starts at the first block heading (``Passage N:``, ``Paragraph N:`` or a key-value
``Record:``) and ends where the task template's closing part starts (its first line is fixed per
task, below).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from longbench100.core.errors import UserError
from longbench100.text.units import Span

IDK_ANSWER = "not enough information"
IDK_INSTRUCTION = f'If the text shown above does not contain enough information to answer, reply exactly "{IDK_ANSWER}" instead.'
# The first words of the part each packaged template writes after the passages (the wording depends on
# whether the request is query-focused and on how many gold passages there are).
TAIL_OPENINGS = {
    # kv_retrieval's second opening: its data from before it asked the paper's one lookup
    "kv_retrieval": ("Task: find the record whose key is", "Task: start from the key"),
    "kv_retrieval_chain": ("Task: start from the key",),
    "counting_stars": ("Question: which list gives",),
    "passage_retrieval": ("Summary:\n",),
    "passage_count": ("How many distinct paragraphs",),
    "single_doc_qa": ("Using only Passage ",),
    "multi_doc_qa": ("Combine what Passages ", "Using only Passage "),
    "single_doc_sum": ("Write a concise summary of Passage ", "Using only Passage "),
    "multi_doc_sum": (
        "Write one concise summary that combines",
        "Write a concise summary of the news in",
        "Using only Passage",
    ),
}
# Where a template's context ends with the options a reply chooses among, the line that opens
# them: they belong with the question (a control twin keeps them as they are;
# :func:`options_in_question`).
OPTION_OPENINGS = {
    "organizing": "\n\nSummaries, shuffled:\n",
    "document_organizing": "\n\nSummaries, shuffled:\n",
}
HEADING_CHARS = 40  # a line this short right before the recorded context is its first heading
_BLOCK_START = re.compile(r"\n\n(?=(?:Passage|Paragraph) \d+:\n|Record: the key \")")
_NUMBER = re.compile(r"(?:Passage|Paragraph) (\d+):\n")
_RECORD_KEY = re.compile(r'Record: the key "([^"]+)"')


@dataclass(frozen=True)
class Block:
    """One block of the context: its span in the context, passage number or record key.

    Contexts split by recorded spans are tiled into gold and other blocks (``gold`` tells which).
    """

    span: Span
    number: int | None
    key: str | None
    gold: bool = False


@dataclass(frozen=True)
class PromptParts:
    """``head + joint + context + tail`` is the stored prompt (``joint``: the whitespace before the context)."""

    head: str
    context: str
    tail: str
    blocks: tuple[Block, ...]
    joint: str = "\n\n"


def split_prompt(task: str, prompt: str, where: str, gold: dict | None = None) -> PromptParts:
    """Split a stored prompt of ``task`` (by ``gold["spans"]`` when the record's gold has them); ``where``
    (file:line) names the record in errors."""
    if gold and "spans" in gold:
        return split_at_spans(prompt, gold["spans"], where)
    openings = TAIL_OPENINGS.get(task)
    if openings is None:
        raise UserError(f"{where}: task {task!r} has no known prompt layout")
    tail_start = max(prompt.rfind("\n\n" + opening) for opening in openings)
    opening = " or ".join(repr(opening.strip()) for opening in openings)
    first = _BLOCK_START.search(prompt)
    if tail_start < 0 or first is None or first.start() >= tail_start:
        raise UserError(
            f"{where}: prompt does not have the packaged {task} layout (numbered passages, then "
            f"{opening}); this needs data built with the packaged templates, no chat template"
        )
    head, context, tail = (
        prompt[: first.start()],
        prompt[first.start() + 2 : tail_start],
        prompt[tail_start:],
    )
    cuts = (
        [0] + [match.start() + 2 for match in _BLOCK_START.finditer(context)] + [len(context) + 2]
    )
    blocks = []
    for start, end in zip(cuts, cuts[1:]):
        text = context[start : end - 2]
        number, key = _NUMBER.match(text), _RECORD_KEY.match(text)
        blocks.append(
            Block(
                (start, end - 2),
                int(number.group(1)) if number else None,
                key.group(1) if key else None,
            )
        )
    parts = PromptParts(head, context, tail, tuple(blocks))
    if head + "\n\n" + context + tail != prompt:
        raise UserError(
            f"{where}: could not split the prompt exactly into instruction, passages and question"
        )
    return parts


def options_in_question(task: str, parts: PromptParts) -> PromptParts:
    """``parts`` with the options its context ends with (:data:`OPTION_OPENINGS`: organizing's
    shuffled summaries) moved into the question, and its blocks cut where they begin; ``parts``
    itself for a task whose context holds no options."""
    opening = OPTION_OPENINGS.get(task)
    cut = parts.context.rfind(opening) if opening else -1
    if cut < 0:
        return parts
    blocks = tuple(
        replace(block, span=(block.span[0], min(block.span[1], cut)))
        for block in parts.blocks
        if block.span[0] < cut
    )
    return PromptParts(
        parts.head, parts.context[:cut], parts.context[cut:] + parts.tail, blocks, parts.joint
    )


def split_at_spans(prompt: str, spans: object, where: str) -> PromptParts:
    """Split a prompt at its recorded ``{"context": [start, end], "gold": [[start, end], ...]}`` offsets.

    The context starts at its recorded start, or at the start of the short heading line right before
    it (``Passage 1:``) when there is one, so a window of the context never carries the first heading
    alone. Its blocks tile it: the gold spans and the stretches between them.
    """
    start, end, gold = _checked_spans(prompt, spans, where)
    line_start = prompt.rfind("\n", 0, max(0, start - 1)) + 1
    if (
        start > 0
        and prompt[start - 1] == "\n"
        and prompt[line_start - 2 : line_start] == "\n\n"
        and start - line_start <= HEADING_CHARS
    ):
        start = line_start
    context = prompt[start:end]
    head = prompt[:start].rstrip()
    joint = prompt[len(head) : start]
    cuts = sorted({0, len(context), *(offset - start for span in gold for offset in span)})
    gold_set = {(a - start, b - start) for a, b in gold}
    blocks = tuple(Block((a, b), None, None, (a, b) in gold_set) for a, b in zip(cuts, cuts[1:]))
    return PromptParts(head, context, prompt[end:], blocks, joint)


def _checked_spans(prompt: str, spans: Any, where: str) -> tuple[int, int, list[Span]]:
    """The context bounds and gold spans of a ``spans`` record, checked to lie in order inside the prompt."""
    try:
        start, end = (int(value) for value in spans["context"])
        gold = sorted((int(a), int(b)) for a, b in spans["gold"])
    except (TypeError, KeyError, ValueError):
        raise UserError(
            f"{where}: gold.spans is not {{'context': [start, end], 'gold': [[start, end], ...]}}"
        ) from None
    if not 0 <= start <= end <= len(prompt):
        raise UserError(
            f"{where}: gold.spans context [{start}, {end}] is outside the prompt ({len(prompt)} characters)"
        )
    previous = start
    for a, b in gold:
        if not previous <= a < b <= end:
            raise UserError(
                f"{where}: gold.spans gold span [{a}, {b}] is empty, overlaps another or lies outside the context [{start}, {end}]"
            )
        previous = b
    return start, end, gold


def window_prompt(parts: PromptParts, units: list[Span], start: int, size: int) -> str:
    """The probe prompt: the instruction, units ``[start, start + size)`` of the context, the question
    and the IDK instruction (put before the closing answer cue)."""
    window = parts.context[units[start][0] : units[start + size - 1][1]] if size else ""
    cue = parts.tail.rfind("\n\n")
    tail = (
        parts.tail[:cue] + "\n\n" + IDK_INSTRUCTION + parts.tail[cue:]
        if cue > 0
        else "\n\n" + IDK_INSTRUCTION + parts.tail
    )
    return parts.head + (parts.joint + window if window else "") + tail


def gold_block_spans(task: str, gold: dict, blocks: tuple[Block, ...]) -> list[Span]:
    """The context spans holding the gold material of a record, from its ``gold`` provenance.

    Numbered gold passages for the passage tasks and counting_stars; the records looked up for
    kv_retrieval and kv_retrieval_chain; every paragraph for passage_count (counting needs them
    all); the gold blocks of a context split by its recorded spans.
    """
    if any(block.gold for block in blocks):
        return [block.span for block in blocks if block.gold]
    if task == "passage_count":
        return [block.span for block in blocks if block.number is not None]
    if task in ("kv_retrieval", "kv_retrieval_chain"):
        chain = gold.get("chain", [])
        keys = set(chain[: gold.get("lookups", len(chain) - 1)])
        return [block.span for block in blocks if block.key in keys]
    numbers = set(gold.get("passages", []))
    return [block.span for block in blocks if block.number in numbers]
