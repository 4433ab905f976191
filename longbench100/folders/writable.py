"""Check up front that an output folder or file can be written, so a run never fails after its slow part."""

from __future__ import annotations

import os
from pathlib import Path

from longbench100.core.atomic import create_new_file
from longbench100.core.errors import UserError


def ensure_writable_dir(path: Path, option: str = "--out") -> None:
    """Check, creating nothing, that the folder ``path`` exists or can be created, and that files can be written in it.

    The probe writes and removes a hidden temporary file in ``path``, or in its nearest existing
    ancestor when ``path`` does not exist yet (where creating it would write). That catches what
    permission bits do not show (a read-only mount, an immutable folder, /proc, a full disk) and
    holds for root too. Any failure is a one-line :class:`UserError` naming ``option``, the path
    and the operating system's reason.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: is a file, not a folder")
    _probe(path, f"{option} {path}")


def ensure_writable_file(path: Path, option: str = "--out") -> None:
    """Check, creating nothing, that the file ``path`` can be written: it is no folder and its folder is writable."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{option} {path}: is a folder, not a file")
    _probe(path.parent, f"{option} {path}")


def _probe(folder: Path, what: str) -> None:
    """Write and remove a temporary file in ``folder`` or its nearest existing ancestor; ``what`` starts the error."""
    try:
        existing = next(
            candidate for candidate in (folder, *folder.absolute().parents) if candidate.exists()
        )
        if not existing.is_dir():
            raise UserError(f"{what}: cannot create it, {existing} is a file")
        probe, handle = create_new_file(
            lambda tag: existing / f".longbench100-write-probe-{tag}", 0o600
        )
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise UserError(
            f"{what}: cannot write there ({error.strerror or type(error).__name__})"
        ) from None
