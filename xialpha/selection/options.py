"""What a selection from a stored sweep is asked for: one validated object that `xialpha select`
(from its flags) and `xialpha.select` (from its parameters) both build, under the same names.

The flags are these names with dashes (`cost_fn` is `--cost-fn`), except `per_category`, whose
flag is `--global` (per_category=False) and `smooth`, whose flag is `--no-smooth` (smooth=False).
"""

from __future__ import annotations

from dataclasses import dataclass

from xialpha.errors import UserError
from xialpha.parameters import check_flag, check_int, check_number, check_text
from xialpha.selection.objective import (
    DEFAULT_AVERAGE,
    DEFAULT_ESTIMATOR,
    DEFAULT_RHO,
    DEFAULT_SMOOTH,
    Objective,
    check_selectable,
)
from xialpha.selection.selector import RUNNERS_UP
from xialpha.selection.significance import ALPHA

COSTS = ("cost_fn", "cost_fp")


@dataclass(frozen=True)
class SelectionOptions:
    """How to select: the objective (metric of estimator at rho, averaged over C neighbours when
    `smooth`; costs per false negative and false positive for metric "cost"), per category or one
    configuration shared by all (per_category=False, averaging categories by `average`), how many
    runners-up to test at significance level `alpha`, and whether to store the selection (`save`;
    `partial`: of a sweep that misses rows).

    metric None is "cost" when a cost is given, else "f1"; a cost given for another metric is
    refused. estimator None is the sweep's default (`objective`). Every value is checked here,
    each mistake named by its parameter (UserError).
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
        check_text("metric", self.metric)
        check_text("estimator", self.estimator)
        check_text("average", self.average, optional=False)
        for name in ("rho", "alpha"):
            object.__setattr__(self, name, check_number(name, getattr(self, name)))
        for name in COSTS:
            object.__setattr__(self, name, check_number(name, getattr(self, name), optional=True))
        object.__setattr__(self, "runners_up", check_int("runners_up", self.runners_up))
        for name in ("smooth", "per_category", "save", "partial"):
            check_flag(name, getattr(self, name))
        given = [name for name in COSTS if getattr(self, name) is not None]
        if self.metric is None:
            object.__setattr__(self, "metric", "cost" if given else "f1")
        elif given and self.metric != "cost":
            raise UserError(f"applies to metric= cost only, not {self.metric}", parameter=given[0], mentions="metric=")
        if not 0 < self.alpha < 1:
            raise UserError(f"must be between 0 and 1, got {self.alpha}", parameter="alpha")
        if self.estimator is not None:
            check_selectable(self.estimator)
        self.objective(DEFAULT_ESTIMATOR)  # the objective's own checks (metric, rho, average, costs)

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
