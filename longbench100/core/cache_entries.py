"""What the project's JSON cache entries share: a digest of the code an entry depends on, and
reading an entry back or else working it out and keeping it.

An entry is one small JSON file, written atomically, so worker processes may write side by side; an
absent, damaged or foreign entry is worked out again, and a read-only cache only costs the work. An
entry names the file it was written to and carries a checksum
(:mod:`longbench100.core.checked_files`), so one copied or moved under another entry's name (another
key), or damaged in place, is never read back as that key's value.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from longbench100.core.checked_files import read_checked, write_checked

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


def read_json_entry(path: Path) -> Any:
    """The JSON value kept at ``path`` by :func:`write_json_entry` (of any JSON type); raises
    ``ValueError`` when it is absent, unreadable, foreign or damaged."""
    content = read_checked(path)
    if content is None:
        raise ValueError(f"no entry at {path}")
    return json.loads(content)


def write_json_entry(path: Path, value: object) -> None:
    """Keep ``value`` as JSON at ``path``, atomically, with the file's name and a checksum; a cache
    folder that cannot be written (read-only, another user's) keeps nothing and only costs the
    work next time."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    write_checked(path, text.encode("utf-8"))


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
        return decode(read_json_entry(path))
    except (OSError, ValueError, TypeError, KeyError):
        pass  # absent, damaged or foreign: work it out again
    value = compute()
    write_json_entry(path, encode(value))
    return value
