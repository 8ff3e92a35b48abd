"""What a selection optimises: a metric of one estimator's counts, per category or averaged.

Counts per result row and estimator prefix p: n and n_pos examples (holdout_n / holdout_n_pos
for "holdout"), d_pos false negatives and d_neg false positives (p_d_pos, p_d_neg; derived
from p_recall and p_error when a resampling estimator stored fractional counts as null).

Undefined metrics are completed before ranking or averaging, so NaN never wins nor vanishes:
with no positive examples, recall, precision and F1 are 1 (nothing to find, nothing wrongly
claimed: Lewis 1995, seed 003); with positives but no positive prediction, precision is 0.
Micro averages pool n, n_pos, d_pos, d_neg over categories, then compute the metric; macro
averages take the mean of the per-category values (seed 002). cost is the average cost per
decision (c_fn * d_pos + c_fp * d_neg) / n (seed 004).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.selection.choices import (
    AVERAGES,
    DEFAULT_ESTIMATOR,
    DEFAULT_RHO,
    ESTIMATOR_CHOICES,
    MAXIMISED,
    METRIC_CHOICES,
)


@dataclass(frozen=True)
class Objective:
    """metric of estimator's counts at rho; costs weigh errors when metric == "cost"."""

    metric: str = "f1"
    estimator: str = DEFAULT_ESTIMATOR
    rho: float = DEFAULT_RHO
    average: str = "macro"
    cost_fn: float = 1.0
    cost_fp: float = 1.0

    def __post_init__(self):
        if self.metric not in MAXIMISED:
            raise UserError(f"--metric: must be one of {', '.join(METRIC_CHOICES)}, got {self.metric!r}")
        if self.estimator not in ESTIMATOR_CHOICES:
            raise UserError(f"--estimator: must be one of {', '.join(ESTIMATOR_CHOICES)}, got {self.estimator!r}")
        if self.average not in AVERAGES:
            raise UserError(f"--average: must be macro or micro, got {self.average!r}")
        if not (np.isfinite(self.rho) and self.rho > 0):
            raise UserError(f"--rho: must be a number > 0, got {self.rho!r}")
        for name in ("cost_fn", "cost_fp"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise UserError(f"--{name.replace('_', '-')}: must be a number >= 0, got {value!r}")
        if self.cost_fn == 0 and self.cost_fp == 0:
            raise UserError("--cost-fn, --cost-fp: at least one cost must be > 0")

    @property
    def maximise(self) -> bool:
        return MAXIMISED[self.metric]

    def counts(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Columns n, n_pos, d_pos, d_neg (float) of `rows` for this estimator."""
        return estimator_counts(rows, self.estimator)

    def values(self, counts: pd.DataFrame) -> np.ndarray:
        """The completed metric of each row of `counts` (n, n_pos, d_pos, d_neg)."""
        return metric_values(counts, self.metric, self.cost_fn, self.cost_fp)

    def average_value(self, counts: pd.DataFrame) -> float:
        """The macro or micro average over the rows of `counts` (one row per category)."""
        if self.average == "macro":
            return float(np.mean(self.values(counts)))
        pooled = counts[["n", "n_pos", "d_pos", "d_neg"]].sum().to_frame().T
        return float(self.values(pooled)[0])


def estimator_counts(rows: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """n, n_pos, d_pos, d_neg of estimator `prefix` for each row (NaN where not computed)."""
    size, size_pos = ("holdout_n", "holdout_n_pos") if prefix == "holdout" else ("n", "n_pos")
    n = _column(rows, size)
    n_pos = _column(rows, size_pos)
    d_pos = _column(rows, f"{prefix}_d_pos")
    d_neg = _column(rows, f"{prefix}_d_neg")
    recall = _column(rows, f"{prefix}_recall")
    error = _column(rows, f"{prefix}_error")
    derived_pos = np.where(n_pos == 0, 0.0, (1.0 - recall) * n_pos)  # NaN when n_pos or recall is
    d_pos = np.where(np.isnan(d_pos), derived_pos, d_pos)
    d_neg = np.where(np.isnan(d_neg), error * n - d_pos, d_neg)
    return pd.DataFrame({"n": n, "n_pos": n_pos, "d_pos": d_pos, "d_neg": d_neg}, index=rows.index)


def metric_values(counts: pd.DataFrame, metric: str, cost_fn: float = 1.0, cost_fp: float = 1.0) -> np.ndarray:
    """Completed metric values (see module docstring) from count columns, shape (rows,);
    NaN where a count is missing (the estimator did not run)."""
    n, n_pos = counts["n"].to_numpy(float), counts["n_pos"].to_numpy(float)
    d_pos, d_neg = counts["d_pos"].to_numpy(float), counts["d_neg"].to_numpy(float)
    missing = np.isnan(n) | np.isnan(n_pos) | np.isnan(d_pos) | np.isnan(d_neg)
    return np.where(missing, np.nan, _completed(metric, n, n_pos, d_pos, d_neg, cost_fn, cost_fp))


def _completed(metric, n, n_pos, d_pos, d_neg, cost_fn, cost_fp) -> np.ndarray:
    tp = n_pos - d_pos
    no_positives = n_pos == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "error":
            return (d_pos + d_neg) / n
        if metric == "cost":
            return (cost_fn * d_pos + cost_fp * d_neg) / n
        if metric == "recall":
            return np.where(no_positives, 1.0, tp / n_pos)
        if metric == "precision":
            predicted = tp + d_neg
            return np.where(predicted > 0, tp / predicted, np.where(no_positives, 1.0, 0.0))
        if metric == "f1":
            denominator = 2 * n_pos - d_pos + d_neg
            return np.where(denominator > 0, 2 * tp / denominator, 1.0)
    raise ValueError(f"metric: unknown {metric!r}")


def _column(rows: pd.DataFrame, name: str) -> np.ndarray:
    if name not in rows.columns:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
