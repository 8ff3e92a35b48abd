"""One-sided confidence bounds on test-set effectiveness (certification).

Error, recall and precision are binomial proportions: exact Clopper-Pearson bounds, an upper
bound for the error rate and lower bounds for recall and precision.

F1 is not a proportion. As in Webber et al. 2013 (after Webber 2013), its lower bound
is the (1 - confidence) quantile of Monte-Carlo draws from the posterior of the population
F1: Beta posteriors with Jeffreys' prior (0.5, 0.5) on the true positive rate (recall), the
false positive rate and the prevalence of the category, combined as
F1 = 2 pi r / (pi r + pi + (1 - pi) f). With no true positive the bound is 0 (Webber et al. 2013).
Macro averages draw each category's posterior and average the draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from xialpha.estimators.metrics import metrics_from_counts
from xialpha.storage.schema import CertificationColumn

CONFIDENCE = 0.95
DRAWS = 40_000
DRAWS_SEED = 0  # the Monte-Carlo draws' random seed unless told otherwise
PRIOR = 0.5  # Jeffreys' Beta(0.5, 0.5)


@dataclass(frozen=True)
class Confusion:
    """Counts of one binary classifier on a test set (non-negative integers)."""

    tp: int
    fp: int
    fn: int
    tn: int

    def __post_init__(self) -> None:
        for name in ("tp", "fp", "fn", "tn"):
            value = getattr(self, name)
            if int(value) != value or value < 0:
                raise ValueError(f"{name}: must be a count >= 0, got {value!r}")
        if self.n == 0:
            raise ValueError("tp, fp, fn, tn: the test set is empty")

    @classmethod
    def from_predictions(cls, y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> Confusion:
        """Counts from bool arrays (n,): truly positive, predicted positive."""
        t = np.asarray(y_true, dtype=bool)
        p = np.asarray(y_pred, dtype=bool)
        if t.shape != p.shape or t.ndim != 1:
            raise ValueError(f"y_true, y_pred: must be 1-d of equal length, got {t.shape} and {p.shape}")
        return cls(int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum()), int((~t & ~p).sum()))

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn)

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def clopper_pearson_lower(k: int, n: int, confidence: float = CONFIDENCE) -> float:
    """Exact one-sided lower bound on a proportion from k successes in n trials (NaN if n = 0).

    The closed form (a Beta quantile), not `scipy.stats.binomtest(k, n).proportion_ci(2c - 1,
    "exact")`: that solves for the same bounds numerically and differs from them by up to ~5e-13,
    so stored bounds would change in their last digits (tests/selection/test_selection_certify.py checks
    that the two agree within 1e-9)."""
    if n == 0:
        return float("nan")
    return 0.0 if k == 0 else _beta_quantile(1.0 - confidence, k, n - k + 1)


def clopper_pearson_upper(k: int, n: int, confidence: float = CONFIDENCE) -> float:
    """Exact one-sided upper bound on a proportion from k successes in n trials (NaN if n = 0)."""
    if n == 0:
        return float("nan")
    return 1.0 if k == n else _beta_quantile(confidence, k + 1, n - k)


def _beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b) (0 < q < 1, a, b > 0): `scipy.stats.beta.ppf(q, a, b)` bit for
    bit, from the scipy.special function it computes with (scipy.stats costs a command its start-up)."""
    from scipy.special._ufuncs import _beta_ppf

    return float(_beta_ppf(q, a, b))


def point_metrics(c: Confusion) -> dict[str, float]:
    """error, recall, precision, F1 on the test set (NaN where undefined: `metrics_from_counts`)."""
    values = metrics_from_counts(c.n, c.tp + c.fn, c.fn, c.fp)
    return {name: float(value) for name, value in values.items()}


def binomial_bounds(c: Confusion, confidence: float = CONFIDENCE) -> dict[str, float]:
    """Clopper-Pearson: error_upper, recall_lower, precision_lower."""
    return {
        CertificationColumn.ERROR_UPPER: clopper_pearson_upper(c.fp + c.fn, c.n, confidence),
        CertificationColumn.RECALL_LOWER: clopper_pearson_lower(c.tp, c.tp + c.fn, confidence),
        CertificationColumn.PRECISION_LOWER: clopper_pearson_lower(c.tp, c.tp + c.fp, confidence),
    }


def posterior_draws(c: Confusion, draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """(draws,) samples of the population error, recall, precision and F1 given c."""
    recall = rng.beta(c.tp + PRIOR, c.fn + PRIOR, draws)
    fpr = rng.beta(c.fp + PRIOR, c.tn + PRIOR, draws)
    prevalence = rng.beta(c.tp + c.fn + PRIOR, c.fp + c.tn + PRIOR, draws)
    hits = prevalence * recall
    false_alarms = (1.0 - prevalence) * fpr
    return {
        "error": prevalence * (1.0 - recall) + false_alarms,
        "recall": recall,
        "precision": hits / (hits + false_alarms),
        "f1": 2.0 * hits / (hits + prevalence + false_alarms),
    }


def f1_lower_bound(c: Confusion, confidence: float = CONFIDENCE, draws: int = DRAWS, seed: int = DRAWS_SEED) -> float:
    """One-sided lower bound on the population F1 (the Monte-Carlo method of Webber et al. 2013)."""
    if c.tp == 0:
        return 0.0
    sample = posterior_draws(c, draws, np.random.default_rng(seed))["f1"]
    return float(np.quantile(sample, 1.0 - confidence))


def macro_bounds(
    confusions: list[Confusion], confidence: float = CONFIDENCE, draws: int = DRAWS, seed: int = DRAWS_SEED
) -> dict:
    """Bounds on the macro averages over categories: error_upper, *_lower for the others.

    Each category's posterior is drawn independently and the draws are averaged.
    """
    rng = np.random.default_rng(seed)
    per_category = [posterior_draws(c, draws, rng) for c in confusions]
    means = {m: np.mean([d[m] for d in per_category], axis=0) for m in ("error", "recall", "precision", "f1")}
    low, high = 1.0 - confidence, confidence
    return {
        CertificationColumn.ERROR_UPPER: float(np.quantile(means["error"], high)),
        CertificationColumn.RECALL_LOWER: float(np.quantile(means["recall"], low)),
        CertificationColumn.PRECISION_LOWER: float(np.quantile(means["precision"], low)),
        CertificationColumn.F1_LOWER: float(np.quantile(means["f1"], low)),
    }
