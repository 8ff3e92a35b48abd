"""Baselines recomputed independently: apparent, k-fold (manual StratifiedKFold on copied sub-Grams),
holdout (scikit-learn predictions) and bootstrap (manual replicates with copied rows)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from xialpha.estimators.baselines import apparent, bootstrap, holdout, kfold
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm

TOL = 1e-6


def _problem(seed: int, n: int = 30, kernel: str = "linear"):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.35, 1, -1)
    y[:4] = [1, 1, -1, -1]
    X = rng.normal(size=(n, 4)) + 0.7 * y[:, None] * np.array([1.0, 0.5, 0.0, 0.0])
    X /= np.linalg.norm(X, axis=1).max()
    params = {"gamma": 1.5} if kernel == "rbf" else {}
    return X, y, params, pairwise_kernels(X, metric=kernel, **params)


def _svc(C, j, kernel="precomputed", **params):
    return SVC(C=C, kernel=kernel, class_weight={1: j, -1: 1.0}, tol=TOL, **params)


def _expected_counts(est, y, indicator):
    assert est.indicator.tolist() == indicator.tolist()
    assert est.d_pos == int((indicator & (y > 0)).sum())
    assert est.d_neg == int((indicator & (y < 0)).sum())


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_apparent_is_training_misclassification(kernel):
    X, y, params, gram = _problem(0, kernel=kernel)
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(0.5, j=2.0, tol=TOL))
    wrong = _svc(0.5, 2.0).fit(gram, y).predict(gram) != y
    est = apparent(fit)
    assert est.method == "apparent" and est.retrains == 0
    assert wrong.any()  # the problem overlaps: the test compares a non-trivial indicator
    _expected_counts(est, y, wrong)


@pytest.mark.parametrize("kernel, k, seed", [("linear", 3, 0), ("linear", 5, 7), ("rbf", 4, 3)])
def test_kfold_equals_manual_stratified_kfold_on_sub_grams(kernel, k, seed):
    X, y, params, gram = _problem(1 + seed, kernel=kernel)
    expected = np.zeros(y.size, dtype=bool)
    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    for train, test in folds.split(np.zeros(y.size), y):
        model = _svc(2.0, 1.5).fit(gram[np.ix_(train, train)], y[train])
        expected[test] = model.predict(gram[np.ix_(test, train)]) != y[test]

    by_gram = kfold(TrainingProblem(y, gram=gram), SVMParameters(2.0, j=1.5, tol=TOL), k=k, seed=seed)
    by_features = kfold(
        TrainingProblem(y, X=X, kernel=kernel, kernel_params=params), SVMParameters(2.0, j=1.5, tol=TOL), k=k, seed=seed
    )
    for est in (by_gram, by_features):
        assert est.method == "kfold" and est.retrains == k
        _expected_counts(est, y, expected)


def test_kfold_with_k_equal_smaller_class_size():
    X, y, params, gram = _problem(9, n=14)
    k = int(min((y > 0).sum(), (y < 0).sum()))
    est = kfold(TrainingProblem(y, gram=gram), SVMParameters(1.0, tol=TOL), k=k)
    assert est.retrains == k and est.n == 14


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_holdout_equals_scikit_learn_predictions(kernel):
    X, y, params, gram = _problem(2, n=40, kernel=kernel)
    train, test = np.arange(25), np.arange(25, 40)
    reference = _svc(1.0, 2.0, kernel=kernel, **params).fit(X[train], y[train])
    wrong = reference.predict(X[test]) != y[test]

    fit_x = fit_svm(
        TrainingProblem(y[train], X=X[train], kernel=kernel, kernel_params=params), SVMParameters(1.0, j=2.0, tol=TOL)
    )
    fit_g = fit_svm(TrainingProblem(y[train], gram=gram[np.ix_(train, train)]), SVMParameters(1.0, j=2.0, tol=TOL))
    for est in (holdout(fit_x, y[test], X[test]), holdout(fit_g, y[test], gram[np.ix_(test, train)])):
        assert est.method == "holdout" and est.n == test.size
        _expected_counts(est, y[test], wrong)


def test_holdout_single_class_test_set_is_allowed():
    X, y, params, gram = _problem(3)
    fit = fit_svm(TrainingProblem(y[:20], X=X[:20]), SVMParameters(1.0, tol=TOL))
    negatives = np.flatnonzero(y[20:] < 0) + 20
    est = holdout(fit, y[negatives], X[negatives])
    assert est.n_pos == 0 and np.isnan(est.recall)


def _manual_e0(y, gram, C, n_boot, seed):
    """Out-of-bag error rates, training each replicate on copied rows (duplicates = copies)."""
    rng = np.random.default_rng(seed)
    errors, counts = np.zeros(y.size), np.zeros(y.size)
    for _ in range(n_boot):
        drawn = np.concatenate([rng.choice(np.flatnonzero(y == cls), size=int((y == cls).sum())) for cls in (-1, 1)])
        oob = np.setdiff1d(np.arange(y.size), drawn)
        if oob.size == 0:
            continue
        model = _svc(C, 1.0).fit(gram[np.ix_(drawn, drawn)], y[drawn])
        errors[oob] += model.decision_function(gram[np.ix_(oob, drawn)]) * y[oob] <= 0
        counts[oob] += 1
    assert (counts > 0).all()
    return errors / counts


def test_bootstrap_e0_equals_manual_replicates():
    X, y, params, gram = _problem(4, n=24)
    rate = _manual_e0(y, gram, 1.0, n_boot=30, seed=5)
    e0 = bootstrap(TrainingProblem(y, gram=gram), SVMParameters(1.0, tol=TOL), n_boot=30, method="e0", seed=5)
    assert e0.method == "bootstrap" and e0.retrains == 30
    assert e0.d_pos == pytest.approx(rate[y > 0].sum())
    assert e0.d_neg == pytest.approx(rate[y < 0].sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_632_between_apparent_and_e0(seed):
    X, y, params, gram = _problem(10 + seed, n=30)
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(3.0, tol=TOL))
    train = apparent(fit)
    e0 = bootstrap(TrainingProblem(y, gram=gram), SVMParameters(3.0, tol=TOL), n_boot=20, method="e0", seed=seed)
    b632 = bootstrap(TrainingProblem(y, gram=gram), SVMParameters(3.0, tol=TOL), n_boot=20, seed=seed)
    assert min(train.d, e0.d) <= b632.d <= max(train.d, e0.d)
    assert min(train.error, e0.error) <= b632.error <= max(train.error, e0.error)
    assert train.error < e0.error  # resubstitution is optimistic here
    assert b632.d_pos == pytest.approx(0.368 * train.d_pos + 0.632 * e0.d_pos)
    assert b632.d_neg == pytest.approx(0.368 * train.d_neg + 0.632 * e0.d_neg)
    # Passing the full fit gives the same estimate without retraining it.
    assert bootstrap(
        TrainingProblem(y, gram=gram), SVMParameters(3.0, tol=TOL), n_boot=20, seed=seed, fit=fit
    ).d == pytest.approx(b632.d)


def test_bootstrap_same_seed_same_estimate_features_path():
    X, y, params, gram = _problem(6, n=20)
    a = bootstrap(TrainingProblem(y, X=X), SVMParameters(1.0, tol=TOL), n_boot=10, seed=3)
    b = bootstrap(TrainingProblem(y, gram=gram), SVMParameters(1.0, tol=TOL), n_boot=10, seed=3)
    assert a.d_pos == pytest.approx(b.d_pos) and a.d_neg == pytest.approx(b.d_neg)
