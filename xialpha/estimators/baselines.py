"""Resampling and held-out baselines with the same metric set as the xi-alpha estimates (Nolan 1997).

The resampling ones take what `fit_svm` takes (a `TrainingProblem` without weights and
`SVMParameters`) and train on subsets by example weights, so a shared Gram matrix is never
copied. An error is y f(x) <= 0.
"""

from __future__ import annotations

import numpy as np

from xialpha.errors import DataFailure, one_of
from xialpha.estimators.metrics import Estimate, weighted_average
from xialpha.estimators.svm import SVMFit, SVMParameters, TrainingProblem, fit_svm

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


def kfold(
    problem: TrainingProblem, parameters: SVMParameters, *, k: int = 10, seed: int = 0, fit: SVMFit | None = None
) -> Estimate:
    """Stratified k-fold cross-validation: each example is tested once, by the fold model without it.

    fit: the SVM trained on all examples; on the linear path each fold's training starts from it.
    """
    from sklearn.model_selection import StratifiedKFold  # here: a sweep's apparent and held-out scores do without

    y = problem.y
    if not 2 <= k <= min(np.bincount(y > 0)):
        raise DataFailure(f"k: must be between 2 and the size of the smaller class, got {k}")
    problem = problem.checked()
    warm = _warm(fit, problem)
    errors = np.zeros(y.shape[0], dtype=bool)
    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    for train_idx, test_idx in folds.split(np.zeros(y.shape[0]), y):
        fold = _fit_on(problem, parameters, train_idx, warm)
        errors[test_idx] = y[test_idx] * fold.decision_function(problem.rows(test_idx)) <= 0
    return Estimate.from_indicator("kfold", y, errors, retrains=k)


def bootstrap(
    problem: TrainingProblem,
    parameters: SVMParameters,
    *,
    n_boot: int = 50,
    method: str = ".632",
    seed: int = 0,
    fit: SVMFit | None = None,
) -> Estimate:
    """Bootstrap estimate: "e0" is the out-of-bag error (leave-one-out bootstrap), ".632" is
    0.368 * apparent + 0.632 * e0 (Efron 1983). Samples are drawn within each class so every
    replicate has both; counts are expected (fractional) error counts.
    """
    y = problem.y
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"method: {one_of(method, BOOTSTRAP_METHODS)}")
    if n_boot < 1:
        raise ValueError(f"n_boot: must be >= 1, got {n_boot}")
    problem = problem.checked()
    warm = _warm(fit, problem)
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
        boot = fit_svm(problem.weighted(weights), parameters, check_input=False, warm_start=warm)
        error_sum[oob] += y[oob] * boot.decision_function(problem.rows(oob)) <= 0
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
    train = apparent(fit if fit is not None else fit_svm(problem, parameters))
    blend = weighted_average([train, e0], [0.368, 0.632], "bootstrap")
    return Estimate("bootstrap", blend.n, blend.n_pos, blend.d_pos, blend.d_neg, retrains=n_boot)


def _fit_on(problem: TrainingProblem, parameters: SVMParameters, idx: np.ndarray, warm: SVMFit | None) -> SVMFit:
    weights = np.zeros(problem.n)
    weights[idx] = 1.0
    return fit_svm(problem.weighted(weights), parameters, check_input=False, warm_start=warm)


def _warm(fit: SVMFit | None, problem: TrainingProblem) -> SVMFit | None:
    """The start of every retraining: `fit` on the linear path, else none (libsvm starts cold)."""
    if fit is not None and not np.array_equal(fit.y, problem.y):
        raise ValueError("fit: was trained on other labels than y")
    return fit if fit is not None and problem.linear else None
