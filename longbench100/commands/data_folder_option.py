"""The ``--data`` option of the commands that read a generated data folder."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import click


def data_folder_option(
    help_text: str = "Generated data folder (OUT).",
) -> Callable[[Callable], Callable]:
    """The required ``--data DIR`` option, handed to its command as ``data_dir``."""
    return click.option(
        "--data", "data_dir", type=click.Path(path_type=Path), required=True, help=help_text
    )
