"""Piece counts and filler openings kept from one run to the next, so a warm run tokenizes nothing.

The documents' own piece counts are kept with their sources (``sources/token_cache.py``); what a run
counts besides them are the parts where texts meet in a prompt (a passage's last sentence with the
heading after it, a template's lines, a record), which recur whenever the same rows are built again,
and what it decodes are the first tokens of the piece a filler is cut in
(:meth:`~longbench100.text.tokenization.Tokenizer.first_tokens`). Each is a fixed fact of one
tokenizer and one text, so they are kept under the tokenizer's identity and the rule that cuts texts
into pieces, one file per set of tasks (a run reads only what runs of its own tasks counted), and a
warm run learns them before it builds anything. A torn, foreign or unreadable file is ignored, and a
read-only cache only costs the tokenizing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from longbench100.core.kept_between_runs import kept_file, newest_kept
from longbench100.core.marshal_cache import read_marshal, write_marshal
from longbench100.text.segment_count import ANY_BOUNDARY, CUT
from longbench100.text.tokenization import Tokenizer

FORMAT = 2
"""Bump when what a kept count means changes in a way the key does not show."""

Openings = dict[tuple[str, int], "str | None"]
"""``(text, count)`` -> the text's first ``count`` tokens decoded (``None``: it holds no more)."""
Recalled = dict[str, tuple[dict[str, int], Openings]]
"""The kept piece counts and openings each tokenizer learned, by its identity."""


def kept_path(tokenizer: Tokenizer, tasks: Sequence[str], lengths: Sequence[int] = ()) -> Path:
    """Where ``tokenizer``'s piece counts for runs of ``tasks`` at ``lengths`` (their budgets, in
    any order) are kept: a run reads the windows its own rows counted (each prompt's joins, kept
    whole), not those of every length its tasks were run at."""
    key = [FORMAT, tokenizer.identity, CUT.pattern, ANY_BOUNDARY.pattern, sorted(set(lengths))]
    return kept_file("piece_counts", key, tasks)


def recall_piece_counts(
    members: tuple[Tokenizer, ...], tasks: Sequence[str], lengths: Sequence[int] = ()
) -> Recalled:
    """Teach each tokenizer that counts by pieces the counts and openings kept by earlier runs (of
    ``tasks`` at ``lengths``); return them, for :func:`keep_piece_counts`."""
    recalled: Recalled = {}
    for member in members:
        if member.counting != "segments":
            continue
        counts, openings = _valid(read_marshal(kept_path(member, tasks, lengths)))
        member.learn(list(counts), list(counts.values()))
        member.learn_openings(openings)
        recalled[member.identity] = counts, openings
    return recalled


def keep_piece_counts(
    members: tuple[Tokenizer, ...],
    recalled: Recalled,
    tasks: Sequence[str],
    lengths: Sequence[int] = (),
) -> None:
    """Keep, beside what ``recalled`` holds, the pieces each tokenizer counted and the openings it
    decoded in this run (nothing is written where it tokenized nothing)."""
    for member in members:
        counted, decoded = member.counted_pieces(), member.counted_openings()
        if member.counting != "segments" or not (counted or decoded):
            continue  # (a tokenizer counted whole is never recalled)
        counts, openings = recalled.get(member.identity, ({}, {}))
        kept = {
            "pieces": newest_kept({**counts, **counted}),
            "openings": newest_kept({**openings, **decoded}),
        }
        write_marshal(
            kept_path(member, tasks, lengths), kept
        )  # an unwritable cache: counted next time


@contextmanager
def not_kept(members: tuple[Tokenizer, ...]) -> Iterator[None]:
    """What the tokenizers tokenize inside the block is not kept for the next run (work that is
    not the rows', whose pieces would only make every run read more)."""
    for member in members:
        member.keep_counting(False)
    try:
        yield
    finally:
        for member in members:
            member.keep_counting(True)


def _valid(kept: object) -> tuple[dict[str, int], Openings]:
    """The piece counts and openings ``kept`` holds when it has their form, else none."""
    if not isinstance(kept, Mapping):
        return {}, {}
    counts, openings = kept.get("pieces"), kept.get("openings")
    if not (isinstance(counts, Mapping) and isinstance(openings, Mapping)):
        return {}, {}
    if not all(
        type(text) is str and type(count) is int and count >= 0 for text, count in counts.items()
    ):
        return {}, {}
    if not all(
        type(key) is tuple
        and len(key) == 2
        and type(key[0]) is str
        and type(key[1]) is int
        and (first is None or type(first) is str)
        for key, first in openings.items()
    ):
        return {}, {}
    return dict(counts), dict(openings)
