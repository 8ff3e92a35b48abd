"""What a selection optimises: a metric of one estimator's estimates, per category or averaged.

A config's value is the stored metric column <estimator>_<metric> of its results row
(`stored_values`), the metric the worker computed next to the training. Counts per row and
estimator prefix p (`estimator_counts`): the n and n_pos examples it counts over (the held-out
split's for "holdout": `xialpha.storage.schema.size_columns`), d_pos false negatives and d_neg
false positives (p_d_pos, p_d_neg; derived from p_recall and p_error when a resampling estimator
stored fractional counts as null); metrics of counts (micro averages, cost) come from
`xialpha.estimators.metrics.metrics_from_counts`.

Undefined metrics (NaN, see xialpha.estimators.metrics) are completed before ranking or
averaging by one rule, `complete_undefined`, so NaN never wins nor vanishes: with no positive
examples, recall, precision and F1 are 1 (nothing to find, nothing wrongly claimed: Lewis 1995);
with positives but no positive prediction, precision is 0. Micro averages pool n, n_pos, d_pos,
d_neg over categories, then compute the metric; macro averages take the mean of the
per-category values (Yang & Liu 1999). cost is the average cost per decision
(c_fn * d_pos + c_fp * d_neg) / n (Nolan 1997).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators import DEFAULT_RHO
from xialpha.estimators.metrics import metrics_from_counts
from xialpha.estimators.registry import DEFAULT, NAMES, SELECTABLE
from xialpha.parameters import Interval, Options
from xialpha.storage.schema import COUNTS, ResultColumn, SelectionColumn, estimate_column, size_columns

# The selection's options (the command line's parser reads them; the estimators are the registry's).
DEFAULT_ESTIMATOR = DEFAULT  # span: what a selection uses unless told otherwise
DEFAULT_SMOOTH = True  # rank by each value averaged with its C neighbours' (xialpha.selection.smoothing)
# metric -> whether larger values are better
MAXIMISED = {"f1": True, "recall": True, "precision": True, "error": False, "cost": False}
METRIC_CHOICES = tuple(MAXIMISED)
AVERAGES = ("macro", "micro")
DEFAULT_AVERAGE = AVERAGES[0]  # how a --global selection averages its categories unless told otherwise
ESTIMATOR_CHOICES = SELECTABLE  # what a selection may choose by
# the largest cost of an error: costs, counts and their sums stay far from float overflow (1e308);
# only the costs' ratio changes a choice, so no user needs more
MAX_COST = 1e12
SHOWN_ESTIMATORS = NAMES  # what a report may show


# The constraints of a selection's parameters (`xialpha.parameters`): the API, the command line's
# SelectionOptions and the Objective each check a value by the same one.
METRIC = Options(METRIC_CHOICES)
AVERAGE = Options(AVERAGES)
RHO = Interval(0, None, closed="neither")  # a finite number > 0
COST = Interval(0, MAX_COST)  # the cost of one error: from 0 to MAX_COST
SHOWN_ESTIMATOR = Options(SHOWN_ESTIMATORS)  # what a report may show
# The metrics a report (or plot) is asked for by name. Not cost: a report shows it only as a saved
# selection's metric, with that selection's costs; named alone it would be the error at costs 1:1.
SHOWN_METRIC = Options(
    tuple(metric for metric in METRIC_CHOICES if metric != "cost"),
    reasons={
        "cost": "a report shows cost only for a saved selection by cost, with its costs; "
        "named alone it is the error at costs 1:1: ask for error"
    },
)
# what a selection may choose by: one a report shows only for contrast (apparent) says so
SELECTABLE_ESTIMATOR = Options(
    ESTIMATOR_CHOICES,
    reasons={
        name: f"{name!r} is stored for contrast, never chosen by; use one of {', '.join(ESTIMATOR_CHOICES)}"
        for name in SHOWN_ESTIMATORS
        if name not in ESTIMATOR_CHOICES
    },
)


@dataclass(frozen=True)
class Objective:
    """metric of estimator's counts at rho; costs weigh errors when metric == "cost"; smooth: rank by
    each value averaged with its C neighbours' (`xialpha.selection.smoothing`), not by the value alone."""

    metric: str = "f1"
    estimator: str = DEFAULT_ESTIMATOR
    rho: float = DEFAULT_RHO
    average: str = DEFAULT_AVERAGE
    cost_fn: float = 1.0
    cost_fp: float = 1.0
    smooth: bool = DEFAULT_SMOOTH

    def __post_init__(self) -> None:
        METRIC("metric", self.metric)
        SHOWN_ESTIMATOR("estimator", self.estimator)
        AVERAGE("average", self.average)
        RHO("rho", self.rho)
        COST("cost_fn", self.cost_fn)
        COST("cost_fp", self.cost_fp)
        if self.cost_fn == 0 and self.cost_fp == 0:
            raise UserError("at least one cost must be > 0", parameter=("cost_fn", "cost_fp"))
        if not isinstance(self.smooth, (bool, np.bool_)):
            raise UserError(f"must be True or False, got {self.smooth!r}", parameter="smooth")

    @classmethod
    def of_selection(cls, row: Mapping[str, Any]) -> Objective:
        """The objective a stored selection row (a mapping: "selections" columns) was chosen by; a
        selection stored before smoothing existed (smooth_c null) was ranked without it."""
        smooth = row.get(SelectionColumn.SMOOTH_C)
        average = row.get(SelectionColumn.AVERAGE)
        return cls(
            metric=row[SelectionColumn.METRIC],
            estimator=row[SelectionColumn.ESTIMATOR],
            rho=float(row[SelectionColumn.RHO]),
            average=average if isinstance(average, str) else DEFAULT_AVERAGE,
            cost_fn=float(row[SelectionColumn.COST_FN]),
            cost_fp=float(row[SelectionColumn.COST_FP]),
            smooth=False if smooth is None or pd.isna(smooth) else bool(smooth),
        )

    @property
    def maximise(self) -> bool:
        return MAXIMISED[self.metric]

    def counts(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Columns n, n_pos, d_pos, d_neg (float) of `rows` for this estimator."""
        return estimator_counts(rows, self.estimator)

    def values(self, counts: pd.DataFrame) -> np.ndarray:
        """The completed metric of each row of `counts` (n, n_pos, d_pos, d_neg)."""
        return metric_values(counts, self.metric, self.cost_fn, self.cost_fp)

    def row_values(self, rows: pd.DataFrame) -> np.ndarray:
        """The completed metric of each results row: the stored one (cost: from the counts)."""
        if self.metric == "cost":
            return self.values(self.counts(rows))
        return stored_values(rows, self.estimator, self.metric)

    def value_bounds(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(best, worst, bounded), each (rows,): the completed metric of each results row, as `row_values`
        (best == worst) where the estimator's counts are stored, and the range its stored count bounds
        allow where they are not (bounded: a configuration decided by bounds, `count_bounds`)."""
        values = self.row_values(rows)
        low, high = count_bounds(rows, self.estimator)
        bounded = low["d_pos"].notna().to_numpy() & np.isnan(values)
        if not bounded.any():
            return values, values, bounded
        best, worst = metric_range(low, high, self.metric, self.cost_fn, self.cost_fp)
        return np.where(bounded, best, values), np.where(bounded, worst, values), bounded

    def average_value(self, counts: pd.DataFrame) -> float:
        """The macro average of the `value` column or the micro average of the counts (n, n_pos,
        d_pos, d_neg) over the rows of `counts` (one row per category)."""
        if self.average == "macro":
            return float(np.mean(counts["value"].to_numpy(dtype=float)))
        pooled = counts[[ResultColumn.N, ResultColumn.N_POS, "d_pos", "d_neg"]].sum().to_frame().T
        return float(self.values(pooled)[0])


def estimator_counts(rows: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """n, n_pos, d_pos, d_neg of estimator `prefix` for each row (NaN where not computed)."""
    size, size_pos = size_columns(prefix)
    n = _column(rows, size)
    n_pos = _column(rows, size_pos)
    d_pos = _column(rows, estimate_column(prefix, "d_pos"))
    d_neg = _column(rows, estimate_column(prefix, "d_neg"))
    recall = _column(rows, estimate_column(prefix, "recall"))
    error = _column(rows, estimate_column(prefix, "error"))
    derived_pos = np.where(n_pos == 0, 0.0, (1.0 - recall) * n_pos)  # NaN when n_pos or recall is
    d_pos = np.where(np.isnan(d_pos), derived_pos, d_pos)
    d_neg = np.where(np.isnan(d_neg), error * n - d_pos, d_neg)
    return pd.DataFrame(
        {ResultColumn.N: n, ResultColumn.N_POS: n_pos, "d_pos": d_pos, "d_neg": d_neg}, index=rows.index
    )


def count_bounds(rows: pd.DataFrame, prefix: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(low, high): n, n_pos and the count bounds <prefix>_d_pos_low, ..._d_neg_high of each row as
    columns n, n_pos, d_pos, d_neg (NaN where the row stores none: its counts are exact, or a store
    written before bounds existed)."""
    size, size_pos = size_columns(prefix)
    sizes: dict[str, np.ndarray] = {ResultColumn.N: _column(rows, size), ResultColumn.N_POS: _column(rows, size_pos)}

    def side(name: str) -> pd.DataFrame:
        bounds = {count: _column(rows, estimate_column(prefix, f"{count}_{name}")) for count in COUNTS}
        return pd.DataFrame({**sizes, **bounds}, index=rows.index)

    return side("low"), side("high")


def metric_range(
    low: pd.DataFrame, high: pd.DataFrame, metric: str, cost_fn: float = 1.0, cost_fp: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst), each (rows,): the completed metric at the fewest errors (`low`'s counts) and at
    the most (`high`'s). Every metric is monotone in d_pos and d_neg (fewer errors never make one worse),
    so a count range gives this value range."""
    return metric_values(low, metric, cost_fn, cost_fp), metric_values(high, metric, cost_fn, cost_fp)


def stored_values(rows: pd.DataFrame, prefix: str, metric: str) -> np.ndarray:
    """The completed stored metric <prefix>_<metric> of each results row, shape (rows,); NaN
    where the estimator did not run (no <prefix>_error)."""
    n_pos = _column(rows, size_columns(prefix)[1])
    ran = ~np.isnan(_column(rows, estimate_column(prefix, "error")))
    return np.where(ran, complete_undefined(metric, _column(rows, estimate_column(prefix, metric)), n_pos), np.nan)


def metric_values(counts: pd.DataFrame, metric: str, cost_fn: float = 1.0, cost_fp: float = 1.0) -> np.ndarray:
    """Completed metric values from count columns n, n_pos, d_pos, d_neg, shape (rows,); NaN
    where a count is missing (the estimator did not run)."""
    n, n_pos = counts[ResultColumn.N].to_numpy(float), counts[ResultColumn.N_POS].to_numpy(float)
    d_pos, d_neg = counts["d_pos"].to_numpy(float), counts["d_neg"].to_numpy(float)
    missing = np.isnan(n) | np.isnan(n_pos) | np.isnan(d_pos) | np.isnan(d_neg)
    if metric == "cost":
        with np.errstate(divide="ignore", invalid="ignore"):
            values = (cost_fn * d_pos + cost_fp * d_neg) / n
    else:
        values = complete_undefined(metric, metrics_from_counts(n, n_pos, d_pos, d_neg)[metric], n_pos)
    return np.where(missing, np.nan, values)


def complete_undefined(metric: str, values: np.ndarray, n_pos: np.ndarray) -> np.ndarray:
    """`values` of `metric` with each undefined (NaN) recall, precision or F1 completed: 1 where
    there are no positives (n_pos = 0), else 0 (positives, none predicted: precision). Error
    and cost are never completed."""
    values = np.asarray(values, dtype=float)
    if metric not in ("recall", "precision", "f1"):
        return values
    return np.where(np.isnan(values), np.where(np.asarray(n_pos) == 0, 1.0, 0.0), values)


def _column(rows: pd.DataFrame, name: str) -> np.ndarray:
    if name not in rows.columns:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
