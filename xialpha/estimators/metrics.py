"""The metric set every estimator reports, computed from error counts (seed Definitions 1-5).

An estimator counts d_pos positive examples and d_neg negative examples as (possible) errors
among n examples with n_pos positives. Then, with TP = n_pos - d_pos:

    error     = (d_pos + d_neg) / n
    recall    = 1 - d_pos / n_pos                 (NaN when n_pos = 0: nothing to recall)
    precision = TP / (TP + d_neg)                 (NaN when TP + d_neg = 0: nothing predicted positive)
    F1        = 2 TP / (2 n_pos - d_pos + d_neg)  (NaN when n_pos = 0 and d_neg = 0)

NaN means "undefined", never 0; averaging code decides how to treat it (see xialpha.selection).
Counts may be fractional for resampling estimators (bootstrap averages over replicates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

METRICS = ("error", "recall", "precision", "f1")


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
    def from_indicator(cls, method: str, y: np.ndarray, indicator: np.ndarray, retrains: int = 0) -> "Estimate":
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

    @property
    def error(self) -> float:
        return self.d / self.n if self.n else float("nan")

    @property
    def recall(self) -> float:
        return 1.0 - self.d_pos / self.n_pos if self.n_pos else float("nan")

    @property
    def precision(self) -> float:
        tp = self.n_pos - self.d_pos
        return tp / (tp + self.d_neg) if tp + self.d_neg > 0 else float("nan")

    @property
    def f1(self) -> float:
        denominator = 2 * self.n_pos - self.d_pos + self.d_neg
        return 2 * (self.n_pos - self.d_pos) / denominator if denominator > 0 else float("nan")

    def metrics(self) -> dict[str, float]:
        """{"error", "recall", "precision", "f1"} as fractions in [0, 1] or NaN."""
        return {name: float(getattr(self, name)) for name in METRICS}

    def columns(self, prefix: str | None = None) -> dict:
        """Flat result-store columns: <prefix>_d_pos, _d_neg, _error, _recall, _precision, _f1."""
        p = prefix or self.method
        counts = {}
        for name in ("d_pos", "d_neg"):
            value = getattr(self, name)
            counts[f"{p}_{name}"] = int(value) if float(value).is_integer() else None
        return counts | {f"{p}_{name}": value for name, value in self.metrics().items()}


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

