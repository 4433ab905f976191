"""Digests: of a file on disk, and of a prompt (which ties predictions to the exact data they answer)."""

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def prompt_sha256(text: str) -> str:
    """Return the hex sha256 of ``text`` encoded as UTF-8 (a data record's ``prompt`` as stored)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
