"""Where the packaged registry, templates and demo data live, and where caches go."""

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def packaged_dir(name: str) -> Path:
    """Return a top-level data folder (``sources``, ``suites`` or ``task_templates``).

    An installed wheel carries them under ``longbench100/_data/``; a source checkout (including an
    editable install) has them at the repository root.
    """
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"packaged folder {name!r} is missing from this installation")


DEMO_DIR = _PACKAGE / "demo"

SOURCES_ENV = "LONGBENCH100_SOURCES"
"""The environment variable naming where sources are read from when ``--sources`` is not given."""


CACHE_HINT = "set LONGBENCH100_CACHE to a writable folder"


def cache_dir() -> Path:
    """The user cache folder: ``$LONGBENCH100_CACHE``, else ``$XDG_CACHE_HOME/longbench100``, else ``~/.cache/longbench100``."""
    override = os.environ.get("LONGBENCH100_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "longbench100"
