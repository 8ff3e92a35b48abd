"""The selection options (the CLI parser reads them; the estimators are storage's registry)."""

from xialpha.storage.schema import ESTIMATORS

# The estimator a selection uses unless told otherwise: the span estimate of the LOO error.
# bench/selection_quality.py, 10 fresh Reuters splits (9 C x 2 preprocessings, 10 categories):
# macro held-out F1 regret span 0.73 points, 10-fold CV 0.80, xi-alpha (rho=1) 2.65, at 0.13 /
# 1 / 0.09 of 10-fold CV's CPU. Sweeps store xa next to it; sweeps run without span select by xa.
DEFAULT_ESTIMATOR = "span"
DEFAULT_RHO = 1.0
# metric -> whether larger values are better
MAXIMISED = {"f1": True, "recall": True, "precision": True, "error": False, "cost": False}
METRIC_CHOICES = tuple(MAXIMISED)
AVERAGES = ("macro", "micro")
ESTIMATOR_CHOICES = ESTIMATORS
