"""Where a run keeps, for the next run of the same tasks, facts it worked out (piece counts, filler
checks), and how much of them it keeps: one marshal file per key and set of tasks."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from longbench100.core.marshal_cache import write_marshal
from longbench100.core.paths import cache_dir

KEPT_LIMIT = 100_000
"""Most entries kept per file; beyond it the ones added longest ago are dropped."""


def kept_file(folder: str, key: Sequence[object], tasks: Sequence[str]) -> Path:
    """The file under the cache's ``folder`` for ``key`` (what fixes the kept facts' meaning: a
    format number, the rule or tokenizer behind them) and runs of ``tasks`` (in any order)."""
    text = json.dumps([*key, sorted(set(tasks))])
    return cache_dir() / folder / f"{hashlib.sha256(text.encode()).hexdigest()[:24]}.marshal"


def newest_kept(kept: dict) -> dict:
    """``kept`` less the entries added longest ago beyond :data:`KEPT_LIMIT`."""
    return dict(list(kept.items())[-KEPT_LIMIT:]) if len(kept) > KEPT_LIMIT else kept


def keep_new(path: Path, recalled: dict, worked_out: dict) -> None:
    """Keep at ``path`` the facts ``recalled`` from it with those this run ``worked_out``, the
    newest :data:`KEPT_LIMIT` of them; nothing is written where the run worked out none that was
    not recalled (an unwritable cache only costs the work next time)."""
    if worked_out.keys() - recalled.keys():
        write_marshal(path, newest_kept({**recalled, **worked_out}))
