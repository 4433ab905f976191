"""What the project's JSON cache entries share: a digest of the code an entry depends on, and
reading an entry back or else working it out and keeping it.

An entry is one small JSON file, written atomically, so worker processes may write side by side; an
absent, damaged or foreign entry is worked out again, and a read-only cache only costs the work. An
entry names the file it was written to, so one copied or moved under another entry's name (another
key) is foreign, never read back as that key's value.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from longbench100.core.atomic import write_json_atomic

Value = TypeVar("Value")


def python_sources_digest(root: Path, packages: Sequence[str] = ()) -> str:
    """The sha256 of the Python files under ``root`` (under its sub-packages ``packages`` only, in
    that order, when given), each with its path relative to ``root``: an entry keyed by it is never
    read back by changed code."""
    digest = hashlib.sha256()
    for folder in [root / package for package in packages] or [root]:
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def stamped(path: Path, value: object) -> dict[str, object]:
    """``value`` as the entry kept at ``path`` stores it: with the file's name, its key."""
    return {"entry": path.name, "value": value}


def unstamped(path: Path, stored: object) -> Any:
    """The value of the entry ``stored`` read from ``path``; raises ``KeyError`` when it was written
    under another name (a foreign entry) or in another form. The value is JSON's, of any type."""
    if not isinstance(stored, dict) or stored.get("entry") != path.name or "value" not in stored:
        raise KeyError(path.name)
    return stored["value"]


def cached_json(
    path: Path,
    compute: Callable[[], Value],
    encode: Callable[[Value], object],
    decode: Callable[[object], Value],
) -> Value:
    """The value kept at ``path`` (``decode`` of its JSON, which raises ``ValueError``,
    ``TypeError`` or ``KeyError`` on a form it does not take), else ``compute()``'s, kept there as
    ``encode`` gives it."""
    try:
        return decode(unstamped(path, json.loads(path.read_text(encoding="utf-8"))))
    except (OSError, ValueError, TypeError, KeyError):
        pass  # absent, damaged or foreign: work it out again
    value = compute()
    try:
        write_json_atomic(path, stamped(path, encode(value)))
    except OSError:
        pass  # a read-only cache: worked out again next time
    return value
