"""The selection options (the CLI parser reads them; the estimators are storage's registry)."""

from xialpha.storage.schema import ESTIMATORS

# The estimator a selection uses unless told otherwise: the span estimate of the LOO error,
# averaged with its C neighbours (DEFAULT_SMOOTH; xialpha.selection.smoothing). Issue 24's
# pre-registered test on 15 fresh splits (bench/README.md): macro held-out F1 regret 1.00 points,
# 10-fold CV 1.07, 5-fold CV 0.95, span alone 1.02; xi-alpha at rho 0.5 averaged the same way
# (1.10) did not pass (worse than CV on rare categories). Before it:
# bench/selection_quality.py on the linear path, 14 fresh splits in 4 settings (issue 19): macro
# held-out F1 regret span 0.93 points, 10-fold CV 1.05, xi-alpha (rho=1) 2.37, at 0.21 / 1 / 0.12
# of 10-fold CV's CPU; no pre-registered candidate beat it on every target, so it stays the
# default. A second test on 13 other fresh splits: span 1.10, 10-fold CV 0.88, and span with ties
# toward larger C (the first test's best) 0.98, not passing; ties stay at the smaller C
# (xialpha.selection.ranking). Sweeps store xa next to it; sweeps run without span select by xa.
DEFAULT_ESTIMATOR = "span"
DEFAULT_SMOOTH = True
DEFAULT_RHO = 1.0
# metric -> whether larger values are better
MAXIMISED = {"f1": True, "recall": True, "precision": True, "error": False, "cost": False}
METRIC_CHOICES = tuple(MAXIMISED)
AVERAGES = ("macro", "micro")
ESTIMATOR_CHOICES = ESTIMATORS
