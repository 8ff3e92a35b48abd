"""Exact leave-one-out error, retraining only where the xi-alpha bound cannot decide.

By Lemma 1 of the seed, for a stable solution example t can be a leave-one-out error only if
2 alpha_t R_delta^2 + xi_t >= 1; every other example is classified correctly when left out.
Training errors with xi_t > 1 (y_t f(x_t) < 0) stay errors when left out: dropping an example
from training can only increase its hinge loss. Only the remaining candidates are retrained,
each with sample weight 0 on the left-out example, so the shared Gram matrix is never copied.
A leave-one-out error is y_t f^{\\t}(x_t) <= 0.
"""

from __future__ import annotations

import numpy as np

from xialpha.estimators.metrics import Estimate
from xialpha.estimators.radius import r_delta_squared
from xialpha.estimators.svm import SVMFit, fit_svm
from xialpha.estimators.xialpha import xi_alpha_indicator

# xi_t > 1 + this margin is a certain LOO error; closer calls are retrained.
CERTAIN_ERROR_MARGIN = 1e-6


def loo_exact(y, C: float, *, fit: SVMFit | None = None, r_delta2: float | None = None, **svm_args) -> Estimate:
    """The exact leave-one-out estimate (method "loo") of the SVM trained by fit_svm(y, C, **svm_args).

    fit: the SVM already trained on all n examples with these arguments (trained here if None);
    r_delta2: R_delta^2 or an upper bound (computed from the data if None).
    svm_args: gram= or X= (with kernel, kernel_params) plus j, tol, ... as for `fit_svm`.
    Returns counts over the n examples, the per-example LOO-error indicator, and `retrains`.
    """
    if fit is None:
        fit = fit_svm(y, C, **svm_args)
    y = fit.y
    certain = fit.xi > 1.0 + CERTAIN_ERROR_MARGIN
    if fit.stable:
        if r_delta2 is None:
            r_delta2 = _r_delta2(svm_args)
        candidates = xi_alpha_indicator(fit.alpha, fit.xi, r_delta2, rho=2.0) & ~certain
    else:
        candidates = ~certain  # Lemma 1 needs a stable solution: retrain every other example
    errors = certain.copy()
    for t in np.flatnonzero(candidates):
        errors[t] = _left_out_margin(y, C, t, svm_args) <= 0
    return Estimate.from_indicator("loo", y, errors, retrains=int(candidates.sum()))


def _left_out_margin(y: np.ndarray, C: float, t: int, svm_args: dict) -> float:
    """y_t f(x_t) for the SVM trained without example t."""
    weights = np.ones(y.shape[0])
    weights[t] = 0.0
    rest = np.delete(y, t)
    if np.all(rest == rest[0]):
        return -1.0  # without t only one class is left: t is always misclassified
    fit = fit_svm(y, C, sample_weight=weights, check_input=False, **svm_args)
    return float(y[t] * fit.decision_function(rows(svm_args, [t]))[0])


def rows(svm_args: dict, idx) -> np.ndarray:
    """The data that `SVMFit.decision_function` needs for training examples idx."""
    if svm_args.get("gram") is not None:
        return np.asarray(svm_args["gram"])[idx]
    return svm_args["X"][idx]


def _r_delta2(svm_args: dict) -> float:
    if svm_args.get("gram") is not None:
        return r_delta_squared(gram=svm_args["gram"])
    return r_delta_squared(X=svm_args["X"], kernel=svm_args.get("kernel", "linear"), kernel_params=svm_args.get("kernel_params"))
