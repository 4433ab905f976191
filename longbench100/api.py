"""The Python API: what each command runs, as one options dataclass and one function (docs/api.md).

``from longbench100 import run_score, ScoreOptions`` reaches these names lazily (see ``__init__``).
"""

from longbench100.analysis.coverage.run import CoverageOptions, CoverageOutcome, run_coverage
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.predict.run import run_predict

from .predict.options import PredictOptions
from .report.run import ReportOptions, ReportOutcome, run_report
from .scoring.run import ScoreOptions, run_score

__all__ = [
    "GenerateOptions",
    "run_generate",
    "PredictOptions",
    "run_predict",
    "ScoreOptions",
    "run_score",
    "ReportOptions",
    "ReportOutcome",
    "run_report",
    "CoverageOptions",
    "CoverageOutcome",
    "run_coverage",
]
