"""Cache files in Python's ``marshal`` format: several times faster to read back than JSON or pickle for
plain lists, dicts and strings, written atomically, and read as absent when torn, written by another
Python version (whose marshal format may differ), written under another file name (another key) or
damaged in place (see :mod:`longbench100.core.checked_files`)."""

from __future__ import annotations

import marshal
from pathlib import Path

from longbench100.core.checked_files import read_checked, write_checked

MarshalData = dict | list | tuple | str | bytes | int | float | None
"""What this cache keeps: plain values and containers of them (marshal refuses anything else)."""


def read_marshal(path: Path) -> object | None:
    """The value kept in ``path``, or ``None`` when the file is absent, unreadable, torn, not this
    Python's, written for another file name (a foreign entry) or damaged."""
    content = read_checked(path)
    if content is None:
        return None
    try:
        return marshal.loads(content)
    except (ValueError, EOFError, TypeError):
        return None


def write_marshal(path: Path, value: MarshalData) -> None:
    """Keep ``value`` (plain data only) in ``path``, atomically, with the file's name (its key); an
    unwritable cache keeps nothing."""
    write_checked(path, marshal.dumps(value))
