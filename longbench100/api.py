"""The Python API: what the commands call, importable as ``from longbench100 import ...`` (docs/api.md)."""

from .report.run import ReportOptions, ReportOutcome, run_report

__all__ = ["ReportOptions", "ReportOutcome", "run_report"]
