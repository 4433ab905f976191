"""Shared fixtures: an isolated cache folder for every test session, and the synthetic mirror."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixture_mirror import write_mirror

SHARED_SOURCES = Path(__file__).resolve().parents[2] / "shared" / "sources"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the longbench100 cache at a per-session temporary folder (never the user's cache)."""
    folder = tmp_path_factory.getbasetemp() / "lb100-cache"
    monkeypatch.setenv("LONGBENCH100_CACHE", str(folder))
    monkeypatch.delenv("LONGBENCH100_SOURCES", raising=False)
    return folder


@pytest.fixture(scope="session")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic mirror of every registered source, in hub layout."""
    return write_mirror(tmp_path_factory.mktemp("mirror"))
