"""Working-set leave-one-out retrainings on the linear path equal retrainings on all examples."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.estimators.loo_linear import WorkingSet, _full_retrain_margin
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm

TOL = 1e-4


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(30, 120)), int(rng.integers(5, 60))
    y = np.where(rng.random(n) < rng.uniform(0.15, 0.5), 1, -1)
    y[:4] = [1, 1, -1, -1]
    dense = np.abs(rng.normal(size=(n, d))) * (rng.random((n, d)) < 0.3) + 0.8 * (y[:, None] > 0) * np.eye(d)[0]
    X = sp.csr_matrix(dense / np.maximum(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12))
    C = float(10 ** rng.uniform(-1, 2))
    j = float(rng.choice([1.0, 1.0, 2.0, 0.5]))
    weights = np.where(rng.random(n) < 0.1, 0.0, 1.0)  # some examples outside the window, as drift runs give
    weights[:4] = 1.0
    return y, X, C, j, weights


@pytest.mark.parametrize("slack", [0.0, 0.5])
def test_working_set_margins_equal_full_retrains(slack):
    admitted, compared = 0, 0
    for seed in range(30):
        y, X, C, j, weights = _problem(seed)
        fit = fit_svm(TrainingProblem(y, X=X, weights=weights), SVMParameters(C, j=j, tol=TOL))
        candidates = np.flatnonzero(fit.alpha > 0)
        working = WorkingSet(fit, candidates, slack=slack)
        start = working.members.size
        for t in candidates:
            got = working.left_out_margin(int(t), TOL)
            want = _full_retrain_margin(fit, int(t), TOL)
            compared += 1
            assert got == pytest.approx(want, abs=5e-3), (seed, int(t))
            assert (got <= 0) == (want <= 0) or abs(want) < 5e-3, (seed, int(t))
        admitted += working.members.size - start
    assert compared > 300
    if slack == 0.0:
        assert admitted > 0  # with no slack the certificate must have sent examples back into the set


def test_working_set_leaves_out_examples_far_from_the_margin():
    found = 0
    for seed in range(30):
        y, X, C, j, weights = _problem(seed)
        fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(C, tol=TOL))
        working = WorkingSet(fit, np.flatnonzero(fit.alpha > 0), slack=0.5)
        far = np.flatnonzero(fit.y * fit.decision >= 1.5)
        assert not np.isin(far, working.members).any()
        assert np.isin(np.flatnonzero(fit.alpha > 0), working.members).all()
        found += far.size
    assert found > 0


def test_single_remaining_class_is_an_error():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]))
    y = np.array([1, -1, -1])
    fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0))
    assert WorkingSet(fit, np.arange(3)).left_out_margin(0, TOL) == -1.0


def test_needs_a_linear_path_fit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    y = np.array([1, -1] * 6)
    fit = fit_svm(TrainingProblem(y, gram=X @ X.T), SVMParameters(1.0))
    with pytest.raises(ValueError, match="fit: working-set retrainings need a fit of the linear path"):
        WorkingSet(fit, np.arange(3))
