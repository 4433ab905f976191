"""The Python API: what each command runs, as one options dataclass and one function (docs/api.md).

``from longbench100 import run_score, ScoreOptions`` reaches these names lazily (see ``__init__``).
"""

from .analysis.coverage import CoverageOptions, CoverageOutcome, run_coverage
from .generate.runner import GenerateOptions, run_generate
from .predict.options import PredictOptions
from .predict.runner import run_predict
from .report.run import ReportOptions, ReportOutcome, run_report
from .scoring.run import ScoreOptions, run_score

__all__ = ["GenerateOptions", "run_generate", "PredictOptions", "run_predict", "ScoreOptions", "run_score",
           "ReportOptions", "ReportOutcome", "run_report", "CoverageOptions", "CoverageOutcome", "run_coverage"]
