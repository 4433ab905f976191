"""Build a folder under a hidden temporary name next to its target, and rename it into place only when complete."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from longbench100.core.errors import UserError


def check_empty_target(target: Path, option: str) -> None:
    """Refuse a target that exists and is not an empty folder; ``option`` names it in the message."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UserError(f"{option} {target}: exists and is not an empty folder")


def remove_stale_staging(target: Path) -> list[Path]:
    """Remove the hidden staging folders an interrupted run (even ``kill -9``) left beside ``target``; return them."""
    stale = sorted(path for path in target.parent.glob(f".{target.name}.*.partial") if path.is_dir())
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return stale


@contextmanager
def staged_folder(target: Path, option: str) -> Iterator[Path]:
    """Yield an empty staging folder; on success it becomes ``target``, on any error it is removed."""
    check_empty_target(target, option)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        os.chmod(staging, 0o755)
        yield staging
        if target.exists():
            target.rmdir()  # empty (checked above); a rename cannot replace a folder on every platform
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
