"""Which texts a drawn pool cleans: a test's record of every call to its cleaning."""

from __future__ import annotations

import pytest

from longbench100.sources import drawn_pool


def record_cleaning(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text a drawn pool cleans from now on (the list grows as it cleans), still cleaned."""
    cleaned: list[str] = []
    clean_once = drawn_pool.clean_once

    def counting(entry, text, passage):
        cleaned.append(text)
        return clean_once(entry, text, passage)

    monkeypatch.setattr(drawn_pool, "clean_once", counting)
    return cleaned
