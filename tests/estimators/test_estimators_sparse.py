"""fit_svm on sparse feature matrices (scikit-learn returns sparse dual coefficients there)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xialpha.estimators.loo import loo_exact
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm


def test_sparse_features_give_the_same_solution_as_dense_and_as_the_gram():
    rng = np.random.default_rng(5)
    X = sp.random(60, 30, density=0.2, random_state=5, format="csr")
    mass = np.asarray(X.sum(axis=1)).ravel()
    y = np.where(mass + 0.3 * rng.normal(size=60) > np.median(mass), 1, -1)
    sparse = fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0, tol=1e-8))
    dense = fit_svm(TrainingProblem(y, X=X.toarray()), SVMParameters(1.0, tol=1e-8))
    gram = fit_svm(TrainingProblem(y, gram=(X @ X.T).toarray()), SVMParameters(1.0, tol=1e-8))
    for other in (dense, gram):
        np.testing.assert_allclose(sparse.alpha, other.alpha, atol=1e-6)
        np.testing.assert_allclose(sparse.decision, other.decision, atol=1e-6)
    assert (
        loo_exact(TrainingProblem(y, X=X), SVMParameters(1.0, tol=1e-8)).d
        == loo_exact(TrainingProblem(y, gram=(X @ X.T).toarray()), SVMParameters(1.0, tol=1e-8)).d
    )


def test_linear_path_on_csr_features_equals_the_gram_path():
    # the linear path never forms X X^T; libsvm on the Gram solves the same problem
    X = sp.random(80, 40, density=0.15, random_state=9, format="csr")
    mass = np.asarray(X.sum(axis=1)).ravel()
    y = np.where(mass > np.median(mass), 1, -1)
    via_gram = fit_svm(TrainingProblem(y, gram=(X @ X.T).toarray()), SVMParameters(2.0, tol=1e-8))
    via_features = fit_svm(TrainingProblem(y, X=X), SVMParameters(2.0, tol=1e-8))
    assert via_features.model is None and via_features.w.shape == (40,)
    np.testing.assert_allclose(via_features.decision, via_gram.decision, atol=1e-5)
    np.testing.assert_allclose(via_features.xi, via_gram.xi, atol=1e-5)
