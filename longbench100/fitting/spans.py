"""Where a sample's context and gold material sit in its prompt, as character offsets.

Builders of newer tasks record ``gold["spans"] = {"context": [start, end], "gold": [[start, end], ...]}``
(offsets into the stored prompt, ends exclusive), so information coverage by construction needs no
knowledge of each template's layout: the share of the context's tokens that fall inside the gold spans.
"""

from __future__ import annotations

from longbench100.core.errors import UserError

Span = tuple[int, int]


class SpanMismatch(UserError, ValueError):
    """A context piece is not in the rendered prompt: the template does not show it unchanged."""


def text_spans(prompt: str, texts: list[str]) -> list[Span]:
    """The span of each text in ``prompt``, searched in order (each after the previous one ends).

    Raises :class:`SpanMismatch` (a ``ValueError`` and a one-line ``UserError``) when a text is not
    found: the builder and its template disagree, e.g. a ``--templates`` template that changes a passage.
    """
    spans: list[Span] = []
    position = 0
    for text in texts:
        start = prompt.find(text, position)
        if start < 0:
            raise SpanMismatch(
                f"context text not found in the prompt after offset {position}: {text[:60]!r}; "
                "the template must show every passage or record unchanged (check a --templates template)"
            )
        spans.append((start, start + len(text)))
        position = start + len(text)
    return spans


def coverage_spans(prompt: str, texts: list[str], is_gold: list[bool]) -> dict:
    """The ``gold["spans"]`` record: the context runs from the first text to the end of the last one.

    ``texts`` are the context's pieces in prompt order (passages, demonstrations, records) and
    ``is_gold`` marks those that hold gold material; a task whose answer needs every piece marks all.
    """
    if len(texts) != len(is_gold):
        raise ValueError("texts and is_gold differ in length")
    spans = text_spans(prompt, texts)
    context = [spans[0][0], spans[-1][1]] if spans else [0, 0]
    return {"context": context, "gold": [list(span) for span, gold in zip(spans, is_gold) if gold]}


def shifted_spans(spans: dict, offset: int) -> dict:
    """The ``gold["spans"]`` record moved ``offset`` characters right (the prompt got a prefix, e.g. a chat template)."""
    return {
        "context": [spans["context"][0] + offset, spans["context"][1] + offset],
        "gold": [[start + offset, end + offset] for start, end in spans["gold"]],
    }


def whole_context_spans(prompt: str, texts: list[str]) -> dict:
    """The ``gold["spans"]`` record of a task whose answer needs every piece: the context is all gold."""
    context = coverage_spans(prompt, texts, [True] * len(texts))["context"]
    return {"context": context, "gold": [list(context)]}


def embedded_spans(
    prompt: str, context: str, gold: list[Span], expected_at: int | None = None
) -> dict:
    """The ``gold["spans"]`` record of a context rendered as one text: ``gold`` are offsets inside ``context``.

    For the synthetic tasks, whose builders know where they placed each needle in the haystack text.
    The context's first occurrence in ``prompt`` is checked at ``expected_at`` (where the builder rendered it)
    and at each offset before it, instead of searched for: the same answer without a pass over a long
    context. Raises ``ValueError`` when ``context`` is not in ``prompt``.
    """
    if (
        expected_at is not None
        and prompt.startswith(context, expected_at)
        and not any(prompt.startswith(context, offset) for offset in range(expected_at))
    ):
        start = expected_at
    else:
        start = text_spans(prompt, [context])[0][0]
    return {
        "context": [start, start + len(context)],
        "gold": [[start + a, start + b] for a, b in gold],
    }
