"""Fit one prompt into its token budget: measure the fixed part, pad with whole documents, close the gap
with a cut-off filler, then count the rendered prompt exactly and repair until it is within budget."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

from longbench100.fitting.packing import (
    Packer,
    choose_filler,
    document_cut,
    first_fit,
    repeats_placed_passage,
)
from longbench100.fitting.pieces import Piece, distractor_piece
from longbench100.sources.near_duplicates import identical_text
from longbench100.sources.records import Document
from longbench100.text.tokenization import Tokenizer

PLACEHOLDER = "x"
MAX_REPAIRS = 12
USUAL_FILL = 0.99
"""Prompts fill at least this share of their budget unless their padding runs out;
then it is said."""


@dataclass(frozen=True)
class BuildContext:
    """Everything a builder needs that is the same for all samples of one task and length."""

    tokenizer: Tokenizer
    task: str
    label: str
    budget: int  # tokens the prompt may use (the length minus any reserved output tokens)
    seed: int
    whole_documents: bool = False
    chat: bool = False
    negatives: str = "bm25"  # the retrieval tasks' negatives: "bm25" (hard) or "random"

    def count_prompt(self, prompt: str, known: Sequence[tuple[str, int]] = ()) -> int:
        """Tokens of ``prompt`` as the model receives it (chat template applied with ``--chat-template``).

        ``known``: ``(document, length)`` pairs whose openings the prompt holds in order, counted from the
        documents' running totals instead of again (see ``Tokenizer.count_known``).
        """
        if self.chat:
            return self.tokenizer.count_rendered(self.tokenizer.apply_chat_template(prompt))
        if known:
            return self.tokenizer.count_known(prompt, known)
        return self.tokenizer.count(prompt)

    @property
    def good_enough(self) -> int:
        """A filler cut that wastes at most this many tokens is not worth improving."""
        return max(4, self.budget // 1000)


@dataclass
class Fitted:
    """A prompt that fits its budget, with its pieces in prompt order."""

    prompt: str
    tokens: int
    pieces: list[Piece]
    per_passage: int
    exhausted_pool: dict[str, int] | None = None
    """Where every document the padding could draw is in the prompt and it still fills under
    :data:`USUAL_FILL`: the tokens of distinct text each source of that pool holds (else
    ``None``)."""

    @property
    def padding_ran_out(self) -> bool:
        """Whether the padding ran out before the prompt reached :data:`USUAL_FILL`."""
        return self.exhausted_pool is not None


Render = Callable[[list[Piece]], str]


def placeholder_copy(piece: Piece) -> Piece:
    """The same piece with one-token placeholder text, for measuring the fixed part of a prompt cheaply."""
    return Piece(piece.role, PLACEHOLDER, 1, piece.doc, piece.fields)


def minimum_tokens(
    ctx: BuildContext, render: Render, gold: Sequence[Piece], records: Sequence[Piece] = ()
) -> int:
    """Estimated tokens of the prompt with only the ground truth and records in it (no padding)."""
    stand_ins = [placeholder_copy(piece) for piece in gold] + list(records)
    return ctx.count_prompt(render(stand_ins)) - len(gold) + sum(piece.tokens for piece in gold)


def fit_prompt(
    ctx: BuildContext,
    rng: random.Random,
    render: Render,
    gold: Sequence[Piece],
    pool: Sequence[Document],
    *,
    records: Sequence[Piece] = (),
    packer: Packer = first_fit,
    extra_tokens: int = 0,
    text_key: Callable[[Document], str] | None = None,
) -> Fitted | None:
    """Build the prompt for one sample, or ``None`` when the ground truth alone exceeds the budget.

    ``render`` turns pieces in prompt order into the prompt text; ``extra_tokens`` reserves room for
    text that ``render`` adds inside passages (counting_stars' sentences). Padding never repeats a
    gold text: documents with the same ``text_key`` (default: the text itself; near-duplicate
    groups where given) count as one text. ``packer`` chooses the whole padding documents and
    their copies (default :func:`first_fit`: each once).
    """
    stand_ins = [placeholder_copy(piece) for piece in gold] + list(records)
    # The marginal cost of a second padding passage: measured past the first one, so that text which
    # render() adds to the first passage only (counting_stars' sentences) is not charged per passage.
    one_more = ctx.count_prompt(render(stand_ins + [Piece("distractor", PLACEHOLDER, 1)]))
    two_more = ctx.count_prompt(render(stand_ins + [Piece("distractor", PLACEHOLDER, 1)] * 2))
    per_passage = max(0, two_more - one_more - 1)
    fixed = minimum_tokens(ctx, render, gold, records) + extra_tokens
    room = ctx.budget - fixed
    if room < 0:
        return None
    gold_ids = {piece.doc.id for piece in gold if piece.doc}
    key = text_key or identical_text
    gold_keys = {key(piece.doc) for piece in gold if piece.doc}
    used: set[str] = set(gold_ids)

    def excluded(document: Document) -> bool:
        return document.id in used or key(document) in gold_keys

    chosen = packer(pool, rng, room, per_passage, excluded)
    padding: list[Piece] = []
    for document, count in chosen:
        used.add(document.id)
        padding.extend(distractor_piece(document) for _ in range(count))
    gap = room - sum(piece.tokens + per_passage for piece in padding)
    if not ctx.whole_documents and gap > per_passage + 8:
        filler = choose_filler(
            ctx.tokenizer,
            pool,
            rng,
            gap - per_passage,
            excluded,
            ctx.good_enough,
            [*gold, *padding],
        )
        if filler is not None:
            padding.append(filler)
    exhausted = _exhausted_pool(ctx, pool, padding, room, per_passage, excluded, key)
    rng.shuffle(padding)
    pieces = padding
    for piece in list(gold) + list(records):
        pieces.insert(rng.randint(0, len(pieces)), piece)
    return _verify(ctx, render, pieces, per_passage, exhausted)


def _exhausted_pool(
    ctx: BuildContext,
    pool: Sequence[Document],
    padding: list[Piece],
    room: int,
    per_passage: int,
    excluded: Callable[[Document], bool],
    key: Callable[[Document], str],
) -> dict[str, int] | None:
    """Where ``padding`` leaves more of the budget empty than :data:`USUAL_FILL` allows because no
    document of ``pool`` is left to add: the tokens of distinct text (one document per ``key``)
    each source of ``pool`` holds, in pool order; else ``None``. The pool is only walked when the
    padding falls short."""
    if room - sum(piece.tokens + per_passage for piece in padding) <= ctx.budget * (1 - USUAL_FILL):
        return None
    placed = {piece.doc.id for piece in padding if piece.doc is not None}
    if not all(document.id in placed or excluded(document) for document in pool):
        return None
    held: dict[str, int] = {}
    seen: set[str] = set()
    for document in pool:
        if key(document) not in seen:
            seen.add(key(document))
            held[document.source] = held.get(document.source, 0) + document.tokens
    return held


def _verify(
    ctx: BuildContext,
    render: Render,
    pieces: list[Piece],
    per_passage: int,
    exhausted: dict[str, int] | None,
) -> Fitted | None:
    """Count the rendered prompt exactly; while it is over budget, shorten the filler or drop
    padding (``exhausted``: what the padding pool held where it ran out, recorded on the result)."""
    for _ in range(MAX_REPAIRS):
        prompt = render(pieces)
        tokens = ctx.count_prompt(
            prompt, [(piece.doc.text, len(piece.text)) for piece in pieces if piece.doc is not None]
        )
        excess = tokens - ctx.budget
        if excess <= 0:
            return Fitted(prompt, tokens, pieces, per_passage, exhausted)
        if not _shrink(ctx, pieces, excess):
            return None
    return None


def _shrink(ctx: BuildContext, pieces: list[Piece], excess: int) -> bool:
    """Remove at least ``excess`` tokens of padding: cut the filler shorter, else drop the smallest distractor.

    Returns ``False`` when there is no padding left to remove.
    """
    for index, piece in enumerate(pieces):
        if piece.role == "filler":
            cut = document_cut(ctx.tokenizer, piece.document, piece.tokens - excess - 1)
            if cut is None or repeats_placed_passage(cut[0], piece.document, pieces):
                del pieces[index]
            else:
                pieces[index] = Piece("filler", cut[0], cut[1], piece.document)
            return True
    padding = [index for index, piece in enumerate(pieces) if piece.role == "distractor"]
    if not padding:
        return False
    del pieces[min(padding, key=lambda index: pieces[index].tokens)]
    return True
