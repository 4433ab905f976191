"""Fingerprints that tie predictions to the exact data they answer (shared by ``predict`` and ``score``)."""

import hashlib


def prompt_sha256(text: str) -> str:
    """Return the hex sha256 of ``text`` encoded as UTF-8 (a data record's ``prompt`` as stored)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
