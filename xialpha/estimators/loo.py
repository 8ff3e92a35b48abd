"""Exact leave-one-out error, retraining only the examples the full solution cannot decide.

Training errors with xi_t > 1 (y_t f(x_t) < 0) stay errors when left out: dropping an example
from training can only increase its hinge loss. On a stable solution (one unbounded support
vector at least) non-support vectors (alpha_t = 0) stay correct: the solution without t is the
same, and b stays pinned by an unbounded support vector. Every other example is retrained with
sample weight 0 on it, so the shared Gram matrix is never copied; on the linear path the
retraining starts from the full solution and solves on a working set of the examples near the
margin, certified to equal a retraining on all (`xialpha.estimators.loo_linear`). A
leave-one-out error is y_t f^{\\t}(x_t) <= 0.

prune="xi_alpha" also skips support vectors with 2 alpha_t R_delta^2 + xi_t < 1 (Joachims 2000, Lemma 1):
far fewer retrains, but not exact. The lemma's proof moves alpha_t onto unbounded support vectors
of the full AND of the leave-one-out solution, and stability does not promise room for that.
It can miss errors with a cost factor j != 1, or where the solution without t has no unbounded
support vector (its b is then any point of an interval). tests/estimators/test_estimators_loo.py has a
five-example case; on 1,200 Reuters documents no pruned support vector was an error.
"""

from __future__ import annotations

import numpy as np

from xialpha.errors import one_of
from xialpha.estimators.loo_linear import WorkingSet
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import DEFAULT_TOL, SVMFit, fit_svm
from xialpha.estimators.validation import check_labels, check_positive, check_training_data
from xialpha.estimators.xialpha import r_delta_squared, xi_alpha_indicator

# xi_t > 1 + this margin is a certain LOO error; closer calls are retrained.
CERTAIN_ERROR_MARGIN = 1e-6
PRUNE_RULES = ("support", "xi_alpha")


def loo_exact(
    y, C: float, *, fit: SVMFit | None = None, prune: str = "support", r_delta2: float | None = None, **svm_args
) -> Estimate:
    """The exact leave-one-out estimate (method "loo") of the SVM trained by fit_svm(y, C, **svm_args).

    fit: the SVM already trained on all n examples with these arguments (trained here if None);
    prune: "support" (exact) or "xi_alpha" (fewer retrains, can miss errors: see the module doc);
    r_delta2: R_delta^2 or an upper bound, used by prune="xi_alpha" (computed from the data if None).
    svm_args: gram= or X= (with kernel, kernel_params) plus j, tol, ... as for `fit_svm`.
    Returns counts over the n examples, the per-example LOO-error indicator, and `retrains`.
    """
    if prune not in PRUNE_RULES:
        raise ValueError(f"prune: {one_of(prune, PRUNE_RULES)}")
    if r_delta2 is not None:
        r_delta2 = check_positive(r_delta2, "r_delta2")
    y = check_labels(y)
    svm_args = check_training_data(svm_args, y.shape[0])
    if fit is None:
        fit = fit_svm(y, C, **svm_args)
    elif not np.array_equal(fit.y, y):
        raise ValueError("fit: was trained on other labels than y")
    certain = fit.xi > 1.0 + CERTAIN_ERROR_MARGIN
    if not fit.stable:
        candidates = ~certain  # b is not unique: even non-support vectors may flip, retrain all
    elif prune == "support":
        candidates = (fit.alpha > 0) & ~certain
    else:
        if r_delta2 is None:
            r_delta2 = _r_delta2(svm_args)
        candidates = xi_alpha_indicator(fit.alpha, fit.xi, r_delta2, rho=2.0) & ~certain
    errors = certain.copy()
    retrain = np.flatnonzero(candidates)
    if can_warm_start(svm_args) and fit.w is not None:
        working, tol = WorkingSet(fit, retrain), svm_args.get("tol", DEFAULT_TOL)
        for t in retrain:
            errors[t] = working.left_out_margin(int(t), tol) <= 0
    else:
        for t in retrain:
            errors[t] = _left_out_margin(y, C, t, svm_args) <= 0
    return Estimate.from_indicator("loo", y, errors, retrains=int(candidates.sum()))


def _left_out_margin(y: np.ndarray, C: float, t: int, svm_args: dict) -> float:
    """y_t f(x_t) for the SVM trained without example t, from scratch (the kernel path)."""
    weights = np.ones(y.shape[0])
    weights[t] = 0.0
    rest = np.delete(y, t)
    if np.all(rest == rest[0]):
        return -1.0  # without t only one class is left: t is always misclassified
    fit = fit_svm(y, C, sample_weight=weights, check_input=False, **svm_args)
    return float(y[t] * fit.decision_function(rows(svm_args, [t]))[0])


def can_warm_start(svm_args: dict) -> bool:
    """True for the linear path (features with the linear kernel), whose retrainings start from a fit."""
    return svm_args.get("X") is not None and svm_args.get("kernel", "linear") == "linear"


def rows(svm_args: dict, idx) -> np.ndarray:
    """The data that `SVMFit.decision_function` needs for training examples idx."""
    if svm_args.get("gram") is not None:
        return np.asarray(svm_args["gram"])[idx]
    return svm_args["X"][idx]


def _r_delta2(svm_args: dict) -> float:
    if svm_args.get("gram") is not None:
        return r_delta_squared(gram=svm_args["gram"])
    return r_delta_squared(
        X=svm_args["X"], kernel=svm_args.get("kernel", "linear"), kernel_params=svm_args.get("kernel_params")
    )
