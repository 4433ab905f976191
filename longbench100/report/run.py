"""The report as a library call: :func:`run_report` does what ``longbench100 report`` does."""

from dataclasses import dataclass, field
from pathlib import Path

from longbench100.analysis.coverage.run import construction_table
from longbench100.analysis.dolce.chart import load_fit, write_dolce_report
from longbench100.core.errors import UserError
from longbench100.folders.data_records import manifest_sha256
from longbench100.folders.guard import guard_output_dir, mark_folder, replace_outputs
from longbench100.folders.lock import output_lock

from .html import write_html_report
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
    dolce: Path | None = None
    """A dolce.json from ``dolce fit``: its category chart and table are written beside report.md."""
    data_dir: Path | None = None
    """The generated data folder the results were scored on: report.md then shows its information
    coverage by construction per task and length (docs/coverage.md), and the HTML page its prompts."""
    html: bool = False
    """Also write report.html: the report, its plots and a sample browser in one self-contained page."""


@dataclass(frozen=True)
class ReportOutcome:
    """What :func:`run_report` wrote and what the user should be told."""

    written: list[Path]
    """report.md first, then each PNG plot."""
    warnings: list[str] = field(default_factory=list)
    """One line each: settings that could not be checked, settings that differ (with ``allow_mixed``)."""


def run_report(options: ReportOptions) -> ReportOutcome:
    """Load the results, check that they were made alike, and write report.md and the plots.

    Raises :class:`UserError` (one line) for a missing or malformed results or dolce file, results made with
    different settings (unless ``allow_mixed``) and an ``out`` folder that cannot be written; in
    each case before anything is written.
    """
    guard_output_dir(
        options.out,
        "--out",
        "report",
        [
            *(("RESULTS", path) for path in options.results),
            ("--dolce", options.dolce),
            ("--data", options.data_dir),
        ],
    )
    results = load_results(list(options.results))
    dolce_fit = load_fit(options.dolce) if options.dolce else None
    coverage = None
    if options.data_dir is not None:
        check_same_data(options.data_dir, results)
        coverage = construction_table(options.data_dir)
    check = check_settings(
        [(result.path, result.settings) for result in results], allow_mixed=options.allow_mixed
    )
    warnings = list(check.warnings)
    if check.mixed:
        warnings.append(
            "the results were made with different settings ("
            + "; ".join(d.describe() for d in check.differences)
            + "): report.md says so, and models made differently get no paired test"
        )
    with output_lock(options.out, "--out"):  # two reports into one folder would mix their files
        mark_folder(options.out, "report")
        written = write_report(
            results, options.out, check, n_boot=options.n_boot, seed=options.seed, coverage=coverage
        )
        if dolce_fit is not None:
            written += write_dolce_report(dolce_fit, options.out)
        if options.html:
            written.append(write_html_report(results, options.out, options.data_dir))
        replace_outputs(options.out, written)
    return ReportOutcome(written, warnings)


def check_same_data(data_dir: Path, results: list) -> None:
    """Raise :class:`UserError` when a results file records a data manifest other than ``data_dir``'s."""
    fingerprint = manifest_sha256(data_dir)
    for result in results:
        recorded = result.settings.values.get("data_fingerprint")
        if recorded is not None and recorded != fingerprint:
            raise UserError(
                f"--data {data_dir}: {result.path} was scored on other data (manifest sha256 "
                f"{recorded[:12]}..., this folder's is {(fingerprint or 'absent')[:12]}...)"
            )
