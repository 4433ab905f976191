"""Cache files that name their key and carry a checksum of their content.

Each file starts with one line, ``<file name>\\t<CRC-32 of the rest>``, then the content. A file
copied or moved under another entry's name (another key), torn, or damaged in place reads as
absent, so the entry is worked out again instead of giving wrong data. CRC-32 costs a few
milliseconds for tens of megabytes and catches every change of a few bytes.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from longbench100.core.atomic import write_bytes_atomic

HEADER_LIMIT = 1024
"""Bytes that hold a header line: a file name (at most 255 bytes), a tab and a checksum."""


def write_checked(path: Path, content: bytes) -> None:
    """Keep ``content`` in ``path`` atomically, after a line with the file's name and checksum. A
    cache that cannot be written there (read-only, another user's, a file where its folder should
    be) keeps nothing: that only costs the work next time."""
    try:
        write_bytes_atomic(path, _header(path, content) + b"\n" + content)
    except OSError:
        pass


def read_checked(path: Path) -> bytes | None:
    """The content kept in ``path`` by :func:`write_checked`, or ``None`` when the file is absent,
    unreadable, written under another name, or damaged."""
    try:
        with open(path, "rb", buffering=0) as handle:  # the content read apart: never copied again
            header, newline, _ = handle.read(HEADER_LIMIT).partition(b"\n")
            if not newline:
                return None
            handle.seek(len(header) + 1)
            content = handle.readall()
    except OSError:
        return None
    if header != _header(path, content):
        return None
    return content


def folder_checksums(folder: Path) -> dict[str, int]:
    """The CRC-32 of each file directly in ``folder``, by name: kept beside a folder that another
    library writes, so that a damaged file in it is noticed when read back."""
    return {
        path.name: zlib.crc32(path.read_bytes())
        for path in sorted(folder.iterdir())
        if path.is_file()
    }


def _header(path: Path, content: bytes) -> bytes:
    """The first line of ``path``'s file when it holds ``content``."""
    return f"{path.name}\t{zlib.crc32(content)}".encode()
