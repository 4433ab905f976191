"""Piece counts kept from one run to the next, so a warm run tokenizes almost nothing.

The documents' own piece counts are kept with their sources (``sources/token_cache.py``); what a run
counts besides them are the parts where texts meet in a prompt (a passage's last sentence with the
heading after it, a template's lines, a record), which recur whenever the same rows are built again.
Each count is a fixed fact of one tokenizer and one piece's text, so the kept counts are keyed by
the tokenizer's identity and the rule that cuts texts into pieces, and a warm run learns them before
it builds anything. A torn, foreign or unreadable file is ignored, and a read-only cache only costs
the tokenizing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from longbench100.core.marshal_cache import read_marshal, write_marshal
from longbench100.core.paths import cache_dir
from longbench100.text.segment_count import ANY_BOUNDARY, CUT
from longbench100.text.tokenization import Tokenizer

FORMAT = 1
"""Bump when what a kept count means changes in a way the key does not show."""
KEPT_LIMIT = 300_000
"""Most pieces kept per tokenizer; beyond it the ones counted longest ago are dropped."""

Recalled = dict[str, dict[str, int]]
"""The kept counts each tokenizer learned, by its identity."""


def kept_path(tokenizer: Tokenizer) -> Path:
    """Where ``tokenizer``'s piece counts are kept."""
    key = json.dumps([FORMAT, tokenizer.identity, CUT.pattern, ANY_BOUNDARY.pattern])
    return cache_dir() / "piece_counts" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.marshal"


def recall_piece_counts(members: tuple[Tokenizer, ...]) -> Recalled:
    """Teach each tokenizer that counts by pieces the counts kept by earlier runs; return them, for
    :func:`keep_piece_counts`."""
    recalled: Recalled = {}
    for member in members:
        if member.counting != "segments":
            continue
        kept = _valid(read_marshal(kept_path(member)))
        member.learn(list(kept), list(kept.values()))
        recalled[member.identity] = kept
    return recalled


def keep_piece_counts(members: tuple[Tokenizer, ...], recalled: Recalled) -> None:
    """Keep, beside what ``recalled`` holds, the pieces each tokenizer counted in this run (nothing
    is written where it counted none)."""
    for member in members:
        counted = member.counted_pieces()
        if not counted:
            continue
        kept = {**recalled.get(member.identity, {}), **counted}
        if len(kept) > KEPT_LIMIT:
            kept = dict(list(kept.items())[-KEPT_LIMIT:])
        try:
            write_marshal(kept_path(member), kept)
        except OSError:
            pass  # a read-only cache: counted again next time


def _valid(kept: object) -> dict[str, int]:
    """``kept`` when it is a mapping of texts to counts, else nothing."""
    if isinstance(kept, Mapping) and all(
        type(text) is str and type(count) is int and count >= 0 for text, count in kept.items()
    ):
        return dict(kept)
    return {}
