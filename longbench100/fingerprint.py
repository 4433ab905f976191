"""Fingerprints that tie predictions to the exact prompts they answer (shared by ``predict`` and ``score``)."""

import hashlib


def prompt_sha256(text: str) -> str:
    """The hex sha256 of a prompt's UTF-8 bytes, exactly as stored in the data file."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
