"""The metric set every estimator reports, computed from error counts (Joachims 2000, Definitions 1-5).

An estimator counts d_pos positive examples and d_neg negative examples as (possible) errors
among n examples with n_pos positives. Then, with TP = n_pos - d_pos (`metrics_from_counts`,
the one place xialpha computes metrics from counts):

    error     = (d_pos + d_neg) / n                (NaN when n = 0)
    recall    = 1 - d_pos / n_pos                 (NaN when n_pos = 0: nothing to recall)
    precision = TP / (TP + d_neg)                 (NaN when TP + d_neg = 0: nothing predicted positive)
    F1        = 2 TP / (2 n_pos - d_pos + d_neg)  (NaN when n_pos = 0 and d_neg = 0)

NaN means "undefined", never 0, in every computed and stored metric; rankings and averages
complete it by one documented rule (`xialpha.selection.objective.complete_undefined`).
Counts may be fractional for resampling estimators (bootstrap averages over replicates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Estimate:
    """Error counts of one estimator on one training set, and the metrics derived from them.

    indicator: (n,) bool, example i counted as an error, where the estimator is per-example.
    retrains: number of SVM trainings the estimate cost beyond the main fit (0 for xi-alpha).
    """

    method: str
    n: int
    n_pos: int
    d_pos: float
    d_neg: float
    indicator: np.ndarray | None = None
    retrains: int = 0

    @classmethod
    def from_indicator(cls, method: str, y: np.ndarray, indicator: np.ndarray, retrains: int = 0) -> Estimate:
        """Counts from labels y (n,) in {-1,+1} and a per-example error indicator (n,)."""
        indicator = np.asarray(indicator, dtype=bool)
        positive = np.asarray(y) > 0
        return cls(
            method=method,
            n=int(indicator.shape[0]),
            n_pos=int(positive.sum()),
            d_pos=int((indicator & positive).sum()),
            d_neg=int((indicator & ~positive).sum()),
            indicator=indicator,
            retrains=retrains,
        )

    @property
    def d(self) -> float:
        return self.d_pos + self.d_neg

    def metrics(self) -> dict[str, float]:
        """{"error", "recall", "precision", "f1"} as fractions in [0, 1] or NaN (undefined)."""
        return {
            name: float(value)
            for name, value in metrics_from_counts(self.n, self.n_pos, self.d_pos, self.d_neg).items()
        }

    error = property(lambda self: self.metrics()["error"], doc="The estimated error rate (NaN if n = 0).")
    recall = property(lambda self: self.metrics()["recall"], doc="The estimated recall (NaN if undefined).")
    precision = property(lambda self: self.metrics()["precision"], doc="The estimated precision (NaN if undefined).")
    f1 = property(lambda self: self.metrics()["f1"], doc="The estimated F1 (NaN if undefined).")


def metrics_from_counts(n, n_pos, d_pos, d_neg) -> dict[str, np.ndarray]:
    """{"error", "recall", "precision", "f1"} from counts (scalars or arrays of one shape,
    float64 results of that shape); NaN where a metric is undefined (see the module docstring)
    or a count is NaN."""
    n, n_pos, d_pos, d_neg = (np.asarray(value, dtype=np.float64) for value in (n, n_pos, d_pos, d_neg))
    tp = n_pos - d_pos
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "error": np.where(n > 0, (d_pos + d_neg) / n, np.nan),
            "recall": np.where(n_pos > 0, 1.0 - d_pos / n_pos, np.nan),
            "precision": np.where(tp + d_neg > 0, tp / (tp + d_neg), np.nan),
            "f1": np.where(2 * n_pos - d_pos + d_neg > 0, 2 * tp / (2 * n_pos - d_pos + d_neg), np.nan),
        }


def weighted_average(estimates: list[Estimate], weights: list[float], method: str) -> Estimate:
    """An estimate whose counts are the weighted sum of the given estimates' counts (same n)."""
    first = estimates[0]
    return Estimate(
        method=method,
        n=first.n,
        n_pos=first.n_pos,
        d_pos=float(sum(w * e.d_pos for e, w in zip(estimates, weights))),
        d_neg=float(sum(w * e.d_neg for e, w in zip(estimates, weights))),
    )
