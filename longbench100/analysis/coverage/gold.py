"""Information coverage by construction: which characters of a generated context are gold material.

The context is the part of the prompt between the instruction and the question (split exactly by
:func:`longbench100.analysis.prompt_parts.split_prompt`). A record whose gold holds ``spans`` says itself
which characters are gold (every newer builder and the RULER/HELMET recall builders record them;
:mod:`longbench100.fitting.spans`). For the others, what counts as gold, per task:

- passage tasks (passage_retrieval, single/multi_doc_qa, single/multi_doc_sum): the gold passages
  named in ``gold.passages``, each with its ``Passage N:`` heading;
- kv_retrieval, kv_retrieval_chain: the key-value records looked up (the first ``gold.lookups``
  keys of ``gold.chain``);
- counting_stars: the four star sentences themselves (not the passages they sit in);
- passage_count: the whole context (counting distinct paragraphs needs every one).
"""

from __future__ import annotations

from longbench100.analysis.prompt_parts import PromptParts, gold_block_spans
from longbench100.core.errors import UserError
from longbench100.text.units import Span

STAR_SENTENCE = "The little penguin counted {count} stars."


def star_sentence_spans(context: str, counts: list[int], where: str) -> list[Span]:
    """The spans of the star sentences, found in order of appearance (one per count)."""
    spans, position = [], 0
    for count in counts:
        sentence = STAR_SENTENCE.format(count=count)
        start = context.find(sentence, position)
        if start < 0:
            raise UserError(
                f"{where}: star sentence {sentence!r} is not in the context in the recorded order"
            )
        spans.append((start, start + len(sentence)))
        position = start + len(sentence)
    return spans


def gold_spans(task: str, gold: dict, parts: PromptParts, where: str) -> list[Span]:
    """The character spans of ``parts.context`` that hold the gold material of one record (sorted)."""
    if "spans" in gold:
        return [block.span for block in parts.blocks if block.gold]
    if task == "passage_count":
        return [(0, len(parts.context))]
    if task == "counting_stars":
        return star_sentence_spans(parts.context, list(gold.get("counts") or []), where)
    spans = gold_block_spans(task, gold, parts.blocks)
    if not spans:
        raise UserError(
            f"{where}: no gold passage or record of the record's gold provenance is in its context"
        )
    return sorted(spans)


def overlaps(span: Span, spans: list[Span]) -> bool:
    """Whether ``span`` shares at least one character with any of ``spans``."""
    start, end = span
    return any(start < b and a < end for a, b in spans)
