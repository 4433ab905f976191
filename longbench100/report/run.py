"""The report as a library call: :func:`run_report` does what ``longbench100 report`` does."""

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.coverage import construction_table
from ..errors import UserError
from ..scoring.data import manifest_sha256
from .load import load_results
from .settings import check_settings
from .write import write_report


@dataclass(frozen=True)
class ReportOptions:
    """What to report and where (the ``report`` command's arguments)."""

    results: list[Path]
    """results.json files written by ``score``, one per model."""
    out: Path
    """Folder for report.md and the PNG plots (created if needed)."""
    n_boot: int = 1000
    """Bootstrap replicates of the paired model comparison (0: no intervals)."""
    seed: int = 0
    """Seed of the paired bootstrap."""
    allow_mixed: bool = False
    """Report results made with different settings (metric, judge, data, ...) instead of refusing."""
    data_dir: Path | None = None
    """The generated data folder the results were scored on: report.md then shows its information
    coverage by construction per task and length (docs/coverage.md)."""


@dataclass(frozen=True)
class ReportOutcome:
    """What :func:`run_report` wrote and what the user should be told."""

    written: list[Path]
    """report.md first, then each PNG plot."""
    warnings: list[str] = field(default_factory=list)
    """One line each: settings that could not be checked, settings that differ (with ``allow_mixed``)."""


def run_report(options: ReportOptions) -> ReportOutcome:
    """Load the results, check that they were made alike, and write report.md and the plots.

    Raises :class:`UserError` (one line) for a missing or malformed results file, results made with
    different settings (unless ``allow_mixed``) and an ``out`` folder that cannot be written; in
    each case before anything is written.
    """
    check_writable_folder(options.out)
    results = load_results(list(options.results))
    coverage = None
    if options.data_dir is not None:
        check_same_data(options.data_dir, results)
        coverage = construction_table(options.data_dir)
    check = check_settings([(result.path, result.settings) for result in results], allow_mixed=options.allow_mixed)
    warnings = list(check.warnings)
    if check.mixed:
        warnings.append(
            "the results were made with different settings (" + "; ".join(d.describe() for d in check.differences)
            + "): report.md says so, and models made differently get no paired test"
        )
    options.out.mkdir(parents=True, exist_ok=True)
    written = write_report(results, options.out, check, n_boot=options.n_boot, seed=options.seed, coverage=coverage)
    return ReportOutcome(written, warnings)


def check_same_data(data_dir: Path, results: list) -> None:
    """Raise :class:`UserError` when a results file records a data manifest other than ``data_dir``'s."""
    fingerprint = manifest_sha256(data_dir)
    for result in results:
        recorded = result.settings.values.get("data_fingerprint")
        if recorded is not None and recorded != fingerprint:
            raise UserError(f"--data {data_dir}: {result.path} was scored on other data (manifest sha256 "
                            f"{recorded[:12]}..., this folder's is {(fingerprint or 'absent')[:12]}...)")


def check_writable_folder(folder: Path) -> None:
    """Raise :class:`UserError` unless ``folder`` is, or can be created as, a folder we can write in.

    Probes by creating and removing a temporary file in the folder, or in its nearest existing
    ancestor when it does not exist yet, so permissions, read-only mounts and pseudo file systems
    are all caught; nothing is left behind.
    """
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--out {folder} is a file, not a folder")
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"--out {folder} cannot be created: {existing} is a file, not a folder")
    try:
        handle, name = tempfile.mkstemp(dir=existing, prefix=".longbench100-probe-")
        os.close(handle)
        os.unlink(name)
    except OSError as error:
        raise UserError(f"--out {folder} is not writable: cannot create files in {existing} ({error.strerror})") from None
