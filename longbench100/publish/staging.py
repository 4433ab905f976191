"""Build a folder under a hidden temporary name next to its target, and rename it into place only
when complete.

Each run stages under a name of its own that holds its process id
(``.TARGET.<pid>-<random>.partial``), so two runs at once never share or remove each other's staging
folder; the second to finish is told in one line that the target was written meanwhile.
"""

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
    """Remove the hidden staging folders an interrupted run (even ``kill -9``) left beside
    ``target``; return them.

    A staging folder whose run is still alive (another process working on the same target) is kept.
    """
    stale = sorted(
        path
        for path in target.parent.glob(f".{target.name}.*.partial")
        if path.is_dir() and not _owner_alive(path, target)
    )
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return stale


def _owner_alive(staging: Path, target: Path) -> bool:
    """Whether the process whose id the staging folder's name holds still runs (``False`` for an
    older name)."""
    owner = staging.name.removeprefix(f".{target.name}.").split("-", 1)[0]
    if not owner.isdigit():
        return False
    try:
        os.kill(int(owner), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, under another user
    return True


@contextmanager
def staged_folder(target: Path, option: str) -> Iterator[Path]:
    """Yield an empty staging folder; on success it becomes ``target``, on any error it is removed."""
    check_empty_target(target, option)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(
        tempfile.mkdtemp(
            prefix=f".{target.name}.{os.getpid()}-", suffix=".partial", dir=target.parent
        )
    )
    try:
        os.chmod(staging, 0o755)
        yield staging
        _move_into_place(staging, target, option)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _move_into_place(staging: Path, target: Path, option: str) -> None:
    """Rename the complete ``staging`` folder to ``target`` (absent or empty); refuse in one line
    when another run filled ``target`` meanwhile."""
    try:
        if target.exists():
            target.rmdir()  # empty (checked before): not every platform renames onto a folder
        os.rename(staging, target)
    except OSError as error:
        if target.exists() and any(target.iterdir()):
            raise UserError(
                f"{option} {target}: another run wrote it meanwhile; nothing of this run was kept"
            ) from None
        raise UserError(
            f"{option} {target}: cannot move the finished output into place "
            f"({error.strerror or type(error).__name__})"
        ) from None
