"""The library API: the functions the commands call, for notebooks and other harnesses (docs/api.md)."""

from .predict.options import PredictOptions  # noqa: F401
from .predict.runner import run_predict  # noqa: F401
