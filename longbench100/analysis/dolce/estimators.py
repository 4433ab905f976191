"""The two Dolce estimators a user can choose between (``dolce fit --estimator``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from longbench100.core.errors import UserError
from longbench100.analysis.dolce.algorithm1 import fit_cow_algorithm1, fit_pig_algorithm1
from longbench100.analysis.dolce.refined_em import Fit, Problem, fit_cow, fit_pig


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


ESTIMATORS = {
    estimator.name: estimator
    for estimator in (
        Estimator("paper", "the paper's Algorithm 1 (q = 0.5 start, shared noise, brute-force argmax over every "
                           "candidate pair, ties to the simplest pair)",
                  fit_cow_algorithm1, fit_pig_algorithm1, "flag"),
        Estimator("refined", "longbench100's refinement (equivalent pairs collapsed, per-pair EM, BIC-gated "
                             "categorical below lambda and oracle weight)", fit_cow, fit_pig, "ns"),
    )
}
DEFAULT_ESTIMATOR = "paper"


def get_estimator(name: str) -> Estimator:
    """The estimator called ``name``; an unknown name is a one-line error listing the choices."""
    if name not in ESTIMATORS:
        raise UserError(f"unknown estimator {name!r}: choose from {', '.join(ESTIMATORS)}")
    return ESTIMATORS[name]
