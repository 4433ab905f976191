"""Cut a context into consecutive chunks of at most N tokens, at sentence boundaries where possible.

Chunks tile the context (each chunk runs up to where the next starts), so every character belongs to
exactly one chunk. Sentences come from the generator's segmenter (:mod:`longbench100.text.units`);
a sentence longer than the limit is cut at the whitespace nearest its middle, recursively (at the
middle character when it has none). Every chunk's token count is checked exactly, not estimated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from longbench100.text.units import Span, sentence_spans

if TYPE_CHECKING:
    from longbench100.text.tokenization import Tokenizer

CHUNK_TOKENS = 512


def _split_long(text: str, span: Span, tokenizer: Tokenizer, limit: int) -> list[Span]:
    """``span`` of ``text`` as pieces of at most ``limit`` tokens each."""
    start, end = span
    if end - start <= 1 or tokenizer.count(text[start:end]) <= limit:
        return [span]
    left, right = _halves(text, span)
    return _split_long(text, left, tokenizer, limit) + _split_long(text, right, tokenizer, limit)


def chunk_spans(text: str, tokenizer: Tokenizer, limit: int = CHUNK_TOKENS) -> list[Span]:
    """Consecutive spans covering ``text`` whole, each at most ``limit`` tokens of ``tokenizer``."""
    if not text:
        return []
    starts = [start for start, _ in sentence_spans(text)]
    starts = sorted({0, *starts})
    pieces = list(zip(starts, starts[1:] + [len(text)]))  # sentences with the whitespace after them
    units: list[Span] = []
    for piece in pieces:
        units += _split_long(text, piece, tokenizer, limit)
    sizes = tokenizer.count_batch([text[a:b] for a, b in units])
    chunks: list[Span] = []
    first, budget = 0, 0
    for index, size in enumerate(sizes):
        if index > first and budget + size > limit:
            chunks.append((units[first][0], units[index][0]))
            first, budget = index, 0
        budget += size
    chunks.append((units[first][0], len(text)))
    return _exact(text, chunks, tokenizer, limit)


def _exact(text: str, chunks: list[Span], tokenizer: Tokenizer, limit: int) -> list[Span]:
    """Recount every chunk; one whose joined pieces tokenise to more than ``limit`` is split again."""
    result: list[Span] = []
    for start, end in chunks:
        if tokenizer.count(text[start:end]) <= limit:
            result.append((start, end))
        else:
            result += _exact(text, _halves(text, (start, end)), tokenizer, limit)
    return result


def _halves(text: str, span: Span) -> list[Span]:
    """``span`` cut in two at the whitespace nearest its middle (or at the middle)."""
    start, end = span
    middle = (start + end) // 2
    spaces = [i for i in range(start + 1, end) if text[i].isspace()]
    cut = min(spaces, key=lambda i: abs(i - middle)) if spaces else middle
    return [(start, cut), (cut, end)]
