"""Records: how much of its documents a run draws, estimated from their characters."""

from __future__ import annotations

from longbench100.sources.records import (
    CHARACTERS_PER_TOKEN,
    DRAWN_MULTIPLE,
    Document,
    draws_little_of,
)


def test_rows_drawing_less_than_a_multiple_of_the_documents_tokens_draw_little_of_them() -> None:
    documents = [Document(f"d/{i}", "d", "word " * 2_000) for i in range(10)]
    tokens = sum(len(document.text) for document in documents) // CHARACTERS_PER_TOKEN
    assert draws_little_of(tokens, documents)  # rows drawing as much as there is leave much undrawn
    assert draws_little_of(DRAWN_MULTIPLE * tokens - 1, documents)
    assert not draws_little_of(DRAWN_MULTIPLE * tokens, documents)
    assert not draws_little_of(1, [])
