"""What a selection from a stored sweep is asked for: one validated object that `xialpha select`
(from its flags) and `xialpha.select` (from its parameters) both build, under the same names.

The flags are these names with dashes (`cost_fn` is `--cost-fn`), except `per_category`, whose
flag is `--global` (per_category=False) and `smooth`, whose flag is `--no-smooth` (smooth=False).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from xialpha.errors import UserError
from xialpha.parameters import FLAG, Check, Interval, check_all
from xialpha.selection.objective import (
    AVERAGE,
    COST,
    DEFAULT_AVERAGE,
    DEFAULT_ESTIMATOR,
    DEFAULT_RHO,
    DEFAULT_SMOOTH,
    METRIC,
    RHO,
    SELECTABLE_ESTIMATOR,
    Objective,
)
from xialpha.selection.selector import RUNNER_UP_COUNT, RUNNERS_UP
from xialpha.selection.significance import ALPHA

COSTS = ("cost_fn", "cost_fp")
ALPHA_LEVEL = Interval(0, 1, closed="neither")  # a significance level: between 0 and 1
# Each option's constraint (`xialpha.parameters`), which `xialpha.select` declares as its parameters' too.
CONSTRAINTS: dict[str, Check] = {
    "metric": METRIC.or_none(),
    "estimator": SELECTABLE_ESTIMATOR.or_none(),
    "rho": RHO,
    "smooth": FLAG,
    "per_category": FLAG,
    "average": AVERAGE,
    "cost_fn": COST.or_none(),
    "cost_fp": COST.or_none(),
    "runners_up": RUNNER_UP_COUNT,
    "alpha": ALPHA_LEVEL,
    "save": FLAG,
    "partial": FLAG,
}


@dataclass(frozen=True)
class SelectionOptions:
    """How to select: the objective (metric of estimator at rho, averaged over C neighbours when
    `smooth`; costs per false negative and false positive for metric "cost"), per category or one
    configuration shared by all (per_category=False, averaging categories by `average`), how many
    runners-up to test at significance level `alpha`, and whether to store the selection (`save`;
    `partial`: of a sweep that misses rows).

    metric None is "cost" when a cost is given, else "f1"; a cost given for another metric is
    refused. estimator None is the sweep's default (`objective`). Every value is checked here by
    its constraint in CONSTRAINTS, each mistake named by its parameter (UserError).
    """

    metric: str | None = None
    estimator: str | None = None
    rho: float = DEFAULT_RHO
    smooth: bool = DEFAULT_SMOOTH
    per_category: bool = True
    average: str = DEFAULT_AVERAGE
    cost_fn: float | None = None
    cost_fp: float | None = None
    runners_up: int = RUNNERS_UP
    alpha: float = ALPHA
    save: bool = False
    partial: bool = False

    def __post_init__(self) -> None:
        values = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        for name, value in check_all(CONSTRAINTS, values).items():
            object.__setattr__(self, name, value)
        given = [name for name in COSTS if getattr(self, name) is not None]
        if self.metric is None:
            object.__setattr__(self, "metric", "cost" if given else "f1")
        elif given and self.metric != "cost":
            raise UserError(f"applies to metric= cost only, not {self.metric}", parameter=given[0], mentions="metric=")
        self.objective(DEFAULT_ESTIMATOR)  # the objective's own check of its costs together

    def objective(self, default_estimator: str) -> Objective:
        """The Objective these options select by; `default_estimator` where no estimator was named."""
        if self.metric is None:  # __post_init__ fills it in
            raise ValueError("SelectionOptions.metric: unset")
        costs = {name: getattr(self, name) for name in COSTS if getattr(self, name) is not None}
        return Objective(
            metric=self.metric,
            estimator=self.estimator or default_estimator,
            rho=self.rho,
            average=self.average,
            smooth=self.smooth,
            **costs,
        )
