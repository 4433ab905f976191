"""The Python API: what each command runs, as one options dataclass and one function (docs/api.md).

``from longbench100 import run_score, ScoreOptions`` reaches these names lazily (see ``__init__``).
"""

from .scoring.run import ScoreOptions, run_score

__all__ = ["ScoreOptions", "run_score"]
