"""Resampling and held-out baselines with the same metric set as the xi-alpha estimates (Nolan 1997).

All take the `fit_svm` arguments (gram= or X=, kernel, j, tol, ...) and train on subsets by
sample weights, so a shared Gram matrix is never copied. An error is y f(x) <= 0.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold

from xialpha.errors import DataFailure, one_of
from xialpha.estimators.loo import can_warm_start, rows
from xialpha.estimators.metrics import Estimate, weighted_average
from xialpha.estimators.svm import SVMFit, fit_svm
from xialpha.estimators.validation import check_labels, check_training_data

BOOTSTRAP_METHODS = (".632", "e0")


def apparent(fit: SVMFit) -> Estimate:
    """The training (resubstitution) error of a fit: optimistic, shown for contrast."""
    return Estimate.from_indicator("apparent", fit.y, fit.y * fit.decision <= 0)


def holdout(fit: SVMFit, y_test, test_data) -> Estimate:
    """Errors on a held-out set: y_test (m,), test_data the (m, n_train) cross-Gram or (m, d) features."""
    y_test = np.asarray(y_test)
    if not np.isin(y_test, (-1, 1)).all():
        raise ValueError("y_test: labels must be -1 or +1")
    decision = fit.decision_function(test_data)
    if y_test.shape != decision.shape:
        raise ValueError(
            f"y_test: must have shape {decision.shape}, one label per row of test_data, got {y_test.shape}"
        )
    return Estimate.from_indicator("holdout", y_test, y_test * decision <= 0)


def kfold(y, C: float, *, k: int = 10, seed: int = 0, fit: SVMFit | None = None, **svm_args) -> Estimate:
    """Stratified k-fold cross-validation: each example is tested once, by the fold model without it.

    fit: the SVM trained on all examples; on the linear path each fold's training starts from it.
    """
    y = check_labels(y)
    if not 2 <= k <= min(np.bincount(y > 0)):
        raise DataFailure(f"k: must be between 2 and the size of the smaller class, got {k}")
    svm_args = check_training_data(svm_args, y.shape[0])
    warm = _warm(fit, y, svm_args)
    errors = np.zeros(y.shape[0], dtype=bool)
    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    for train_idx, test_idx in folds.split(np.zeros(y.shape[0]), y):
        fold = _fit_on(y, C, train_idx, svm_args, warm)
        errors[test_idx] = y[test_idx] * fold.decision_function(rows(svm_args, test_idx)) <= 0
    return Estimate.from_indicator("kfold", y, errors, retrains=k)


def bootstrap(
    y, C: float, *, n_boot: int = 50, method: str = ".632", seed: int = 0, fit: SVMFit | None = None, **svm_args
) -> Estimate:
    """Bootstrap estimate: "e0" is the out-of-bag error (leave-one-out bootstrap), ".632" is
    0.368 * apparent + 0.632 * e0 (Efron 1983). Samples are drawn within each class so every
    replicate has both; counts are expected (fractional) error counts.
    """
    y = check_labels(y)
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"method: {one_of(method, BOOTSTRAP_METHODS)}")
    if n_boot < 1:
        raise ValueError(f"n_boot: must be >= 1, got {n_boot}")
    svm_args = check_training_data(svm_args, y.shape[0])
    warm = _warm(fit, y, svm_args)
    rng = np.random.default_rng(seed)
    n = y.shape[0]
    error_sum, oob_count = np.zeros(n), np.zeros(n)
    for _ in range(n_boot):
        weights = np.zeros(n)
        for cls in (-1, 1):
            members = np.flatnonzero(y == cls)
            np.add.at(weights, rng.choice(members, size=members.size), 1.0)
        oob = np.flatnonzero(weights == 0)
        if oob.size == 0:
            continue
        boot = fit_svm(y, C, sample_weight=weights, check_input=False, warm_start=warm, **svm_args)
        error_sum[oob] += y[oob] * boot.decision_function(rows(svm_args, oob)) <= 0
        oob_count[oob] += 1
    covered = oob_count > 0
    rate = np.where(covered, error_sum / np.maximum(oob_count, 1), 0.0)
    scale = n / max(int(covered.sum()), 1)  # examples never out of bag: assume the average rate
    positive = y > 0
    e0 = Estimate(
        "e0",
        n,
        int(positive.sum()),
        float(rate[positive].sum() * scale),
        float(rate[~positive].sum() * scale),
        retrains=n_boot,
    )
    if method == "e0":
        return Estimate("bootstrap", e0.n, e0.n_pos, e0.d_pos, e0.d_neg, retrains=n_boot)
    train = apparent(fit if fit is not None else fit_svm(y, C, **svm_args))
    blend = weighted_average([train, e0], [0.368, 0.632], "bootstrap")
    return Estimate("bootstrap", blend.n, blend.n_pos, blend.d_pos, blend.d_neg, retrains=n_boot)


def _fit_on(y: np.ndarray, C: float, idx: np.ndarray, svm_args: dict, warm: SVMFit | None) -> SVMFit:
    weights = np.zeros(y.shape[0])
    weights[idx] = 1.0
    return fit_svm(y, C, sample_weight=weights, check_input=False, warm_start=warm, **svm_args)


def _warm(fit: SVMFit | None, y: np.ndarray, svm_args: dict) -> SVMFit | None:
    """The start of every retraining: `fit` on the linear path, else none (libsvm starts cold)."""
    if fit is not None and not np.array_equal(fit.y, y):
        raise ValueError("fit: was trained on other labels than y")
    return fit if fit is not None and can_warm_start(svm_args) else None
