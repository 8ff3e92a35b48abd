"""Pure numpy/scikit-learn estimators: SVM training, xi-alpha, exact LOO and baselines.

No Dask and no file I/O here: these functions run inside workers and in tests alike.
"""

from xialpha.estimators.baselines import apparent, bootstrap, holdout, kfold
from xialpha.estimators.extended import xi_alpha_extended
from xialpha.estimators.loo import loo_exact
from xialpha.estimators.metrics import METRICS, Estimate
from xialpha.estimators.radius import r_delta_squared
from xialpha.estimators.scoring import one_fit_estimates
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMFit, fit_svm
from xialpha.estimators.xialpha import xi_alpha, xi_alpha_indicator

__all__ = [
    "METRICS",
    "Estimate",
    "SVMFit",
    "apparent",
    "bootstrap",
    "fit_svm",
    "holdout",
    "kfold",
    "loo_exact",
    "one_fit_estimates",
    "r_delta_squared",
    "span_estimate",
    "xi_alpha",
    "xi_alpha_extended",
    "xi_alpha_indicator",
]
