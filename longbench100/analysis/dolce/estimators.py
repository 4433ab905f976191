"""The two Dolce estimators a user can choose between (``dolce fit --estimator``).

Their fitting functions are imported on first use: they load numpy, which ``dolce --help`` does
not need.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from longbench100.core.errors import UserError

if TYPE_CHECKING:
    from longbench100.analysis.dolce.refined_em import Fit, Problem


@dataclass(frozen=True)
class Estimator:
    """A way to fit a task's problems: one function for COW problems (with the task's noise), one
    for PIG, and the never-solved rule it uses unless told otherwise ("flag" or "ns", see
    ``categories.NEVER_SOLVED_RULES``)."""

    name: str
    description: str
    fit_cow: Callable[[list[Problem]], tuple[list[Fit], tuple[float, float, float]]]
    fit_pig: Callable[[list[Problem]], list[Fit]]
    never_solved: str


def _on_first_call(module: str, function: str) -> Callable:
    """``function`` of this package's ``module``, imported when first called."""

    def call(problems: list[Problem]):  # noqa: ANN202 - the wrapped function's own result
        return getattr(importlib.import_module(module, __package__), function)(problems)

    return call


ESTIMATORS = {
    estimator.name: estimator
    for estimator in (
        Estimator(
            "paper",
            "the paper's Algorithm 1 (q = 0.5 start, shared noise, brute-force argmax over every "
            "candidate pair, ties to the simplest pair)",
            _on_first_call(".algorithm1", "fit_cow_algorithm1"),
            _on_first_call(".algorithm1", "fit_pig_algorithm1"),
            "flag",
        ),
        Estimator(
            "refined",
            "longbench100's refinement (equivalent pairs collapsed, per-pair EM, BIC-gated "
            "categorical below lambda and oracle weight)",
            _on_first_call(".refined_em", "fit_cow"),
            _on_first_call(".refined_em", "fit_pig"),
            "ns",
        ),
    )
}
DEFAULT_ESTIMATOR = "paper"


def get_estimator(name: str) -> Estimator:
    """The estimator called ``name``; an unknown name is a one-line error listing the choices."""
    if name not in ESTIMATORS:
        raise UserError(f"unknown estimator {name!r}: choose from {', '.join(ESTIMATORS)}")
    return ESTIMATORS[name]
