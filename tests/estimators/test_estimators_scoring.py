"""one_fit_estimates: the one scoring function of the sweep's tasks and XiAlphaSearchCV."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from xialpha.estimators.baselines import apparent, bootstrap, holdout, kfold
from xialpha.estimators.extended import xi_alpha_extended
from xialpha.estimators.kernel_rows import NamedKernelRows
from xialpha.estimators.loo import loo_exact
from xialpha.estimators.scoring import one_fit_estimates
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha


def problem(seed=0, n=120):
    X, y = make_classification(n_samples=n + 40, n_features=6, n_informative=3, flip_y=0.1, random_state=seed)
    y = np.where(y == 1, 1, -1)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)  # unit rows, as xialpha's text features: R_delta^2 <= 2
    return X[:n], y[:n], X[n:], y[n:]


def counts(estimate):
    return estimate.method, estimate.n, estimate.n_pos, estimate.d_pos, estimate.d_neg, estimate.retrains


@pytest.mark.parametrize("path", ["gram", "linear"])
def test_every_requested_estimate_is_the_estimator_called_directly(path):
    X, y, X_test, y_test = problem()
    if path == "gram":
        data, test_data = TrainingProblem(y, gram=rbf_kernel(X, gamma=0.2)), rbf_kernel(X_test, X, gamma=0.2)
        r2 = r_delta_squared(gram=data.gram)
    else:
        data, test_data = TrainingProblem(y, X=sp.csr_matrix(X)), sp.csr_matrix(X_test)
        r2 = r_delta_squared(X=data.X)
    parameters = SVMParameters(1.0, j=2.0, tol=1e-3)
    fit = fit_svm(data, parameters)
    got = one_fit_estimates(
        fit,
        data,
        parameters,
        r2,
        rhos=(1.0, 2.0),
        span=True,
        xa_ext_depth=3,
        exact_loo=True,
        kfold=3,
        bootstrap=4,
        holdout=True,
        held_out=(y_test, test_data),
    )
    gram = data.gram
    expected_shared = [
        ("apparent", apparent(fit)),
        ("loo", loo_exact(data, parameters, fit=fit, r_delta2=r2)),
        ("holdout", holdout(fit, y_test, test_data)),
        ("kfold", kfold(data, parameters, k=3, fit=fit)),
        ("bootstrap", bootstrap(data, parameters, n_boot=4, fit=fit)),
        ("span", span_estimate(fit, gram)),
    ]  # in registry order
    assert [e.method for e in got.shared] == [method for method, _ in expected_shared]
    for estimate, (_, expected) in zip(got.shared, expected_shared):
        assert counts(estimate) == counts(expected)
    for rho in (1.0, 2.0):
        xa, ext = got.per_rho[rho]
        assert counts(xa) == counts(xi_alpha(fit.alpha, fit.xi, y, r2, rho))
        assert counts(ext) == counts(xi_alpha_extended(fit, gram, r2, rho=rho, depth=3))
        assert got.get("xa", rho) is xa and got.at(rho) == got.shared + (xa, ext)
    # rho matters here, so a mix-up of the rhos would show
    assert got.get("xa", 1.0).d != got.get("xa", 2.0).d


def test_only_what_is_asked_for_is_computed():
    X, y, _, _ = problem(seed=1)
    training, parameters = TrainingProblem(y, X=X), SVMParameters(1.0)
    fit = fit_svm(training, parameters)
    got = one_fit_estimates(fit, training, parameters, r_delta_squared(X=X), span=False)
    assert [e.method for e in got.shared] == ["apparent"]
    assert [e.method for e in got.per_rho[1.0]] == ["xa"]
    assert got.get("xa").method == "xa"
    with pytest.raises(KeyError, match="'span' was not computed"):
        got.get("span")
    with pytest.raises(TypeError, match="unknown estimator setting"):
        one_fit_estimates(fit, training, parameters, r_delta_squared(X=X), kfold_k=3)
    with pytest.raises(ValueError, match="held_out: the holdout estimator needs"):
        one_fit_estimates(fit, training, parameters, r_delta_squared(X=X), holdout=True)


@pytest.mark.parametrize(
    "kernel, params, gram_of",
    [
        ("rbf", {"gamma": 0.3}, lambda X: rbf_kernel(X, gamma=0.3)),
        (
            "poly",
            {"gamma": 0.2, "degree": 2, "coef0": 1.0},
            lambda X: polynomial_kernel(X, degree=2, gamma=0.2, coef0=1.0),
        ),
    ],
)
def test_features_under_a_named_kernel_give_the_estimates_of_their_gram(kernel, params, gram_of):
    # a fit trained by libsvm on features with a named kernel: span and xa_ext read kernel blocks of
    # the features (NamedKernelRows), and equal what the full Gram of the same kernel gives
    X, y, _, _ = problem(seed=2)
    gram = gram_of(X)
    training, parameters = TrainingProblem(y, X=X, kernel=kernel, kernel_params=params), SVMParameters(3.0)
    fit = fit_svm(training, parameters)
    r2 = r_delta_squared(gram=gram)
    got = one_fit_estimates(fit, training, parameters, r2, xa_ext_depth=5)
    np.testing.assert_array_equal(got.get("span").indicator, span_estimate(fit, gram).indicator)
    np.testing.assert_array_equal(got.get("xa_ext").indicator, xi_alpha_extended(fit, gram, r2, depth=5).indicator)
    rows = NamedKernelRows(X, kernel, params)
    idx = np.array([5, 0, 77, 3])
    np.testing.assert_allclose(rows.block(idx, idx[::-1]), gram[np.ix_(idx, idx[::-1])], rtol=1e-12)
    everything = np.arange(X.shape[0])
    np.testing.assert_allclose(rows.diagonal(everything), np.diagonal(gram), rtol=1e-12)  # > one block of rows
