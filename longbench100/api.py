"""The library API: the functions the commands call, for notebooks and other harnesses (docs/api.md)."""

from .report.run import ReportOptions, ReportOutcome, run_report  # noqa: F401
