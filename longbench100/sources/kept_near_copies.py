"""The filler check's answers kept from one run to the next, so a warm run compares no shingles.

Whether a filler's opening near-copies a passage placed beside it
(:func:`~longbench100.sources.near_duplicates.near_copy_of_any`) is a fixed fact of those texts,
and a run asks again exactly the questions an earlier run of the same rows asked. The answers are
kept by the digest of their texts, under the rule that gives them, one file per set of tasks (like
the piece counts of :mod:`longbench100.text.kept_pieces`); a warm run learns them before it builds
anything. A torn, foreign or unreadable file is ignored, and a read-only cache only costs the
comparing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from longbench100.core.kept_between_runs import keep_new, kept_file
from longbench100.core.marshal_cache import read_marshal
from longbench100.sources.near_duplicates import (
    NEAR_COPY_RULE,
    learn_near_copy_answers,
    worked_out_near_copy_answers,
)

FORMAT = 1
"""Bump when what a kept answer means changes in a way the key does not show."""

Answers = dict[bytes, bool]
"""The digest of a filler check's texts -> whether the filler near-copies one of the passages."""


def kept_answers_path(tasks: Sequence[str]) -> Path:
    """Where the filler check's answers for runs of ``tasks`` are kept."""
    return kept_file("near_copies", [FORMAT, NEAR_COPY_RULE], tasks)


def recall_near_copy_answers(tasks: Sequence[str]) -> Answers:
    """Teach the filler check the answers kept by earlier runs of ``tasks``; return them, for
    :func:`keep_near_copy_answers`."""
    recalled = _valid(read_marshal(kept_answers_path(tasks)))
    learn_near_copy_answers(recalled)
    return recalled


def keep_near_copy_answers(recalled: Answers, tasks: Sequence[str]) -> None:
    """Keep, beside ``recalled``, the answers the filler check worked out in this process (nothing
    is written where it worked none out)."""
    keep_new(kept_answers_path(tasks), recalled, worked_out_near_copy_answers())


def _valid(kept: object) -> Answers:
    """The answers ``kept`` holds when it has their form, else none."""
    if not isinstance(kept, dict) or not all(
        type(digest) is bytes and len(digest) == 16 and type(answer) is bool
        for digest, answer in kept.items()
    ):
        return {}
    return kept
