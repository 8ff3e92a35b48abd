"""fit_svm: the extracted (alpha, xi, b) satisfy the KKT conditions with per-example bounds C_i,
agree with scikit-learn, and sample weights (zero weights in particular) mean what svm.py says;
a TrainingProblem says which path trains it by its type, not by which keys a dict holds."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import SVC

from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm

TOL = 1e-6
# libsvm stops when the maximal KKT violation m(alpha) - M(alpha) <= tol; margins are off by about that.
KKT_ATOL = 10 * TOL


def _problem(seed: int, kernel: str):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 40))
    y = np.where(rng.random(n) < rng.uniform(0.2, 0.5), 1, -1)
    y[:2] = [1, -1]
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None] * np.array([1.0, 0.0, 0.0])
    X /= np.linalg.norm(X, axis=1).max()
    params = {"gamma": 2.0} if kernel == "rbf" else {}
    return X, y, params, pairwise_kernels(X, metric=kernel, **params)


CASES = [
    (seed, kernel, C, j)
    for seed, (C, j) in enumerate([(0.3, 1.0), (3.0, 1.0), (10.0, 2.0), (1.0, 0.5), (30.0, 5.0)])
    for kernel in ("linear", "rbf")
]


@pytest.mark.parametrize("seed, kernel, C, j", CASES)
def test_kkt_conditions_with_cost_factor(seed, kernel, C, j):
    X, y, params, gram = _problem(seed, kernel)
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(C, j=j, tol=TOL))
    c_i = np.where(y > 0, C * j, C)
    np.testing.assert_allclose(fit.c_i, c_i)
    assert abs(np.sum(fit.alpha * y)) <= 1e-9 * c_i.max() * y.size
    assert (fit.alpha >= 0).all() and (fit.alpha <= c_i * (1 + 1e-12)).all()
    margin = y * fit.decision
    # The decision function is the kernel expansion over the support vectors plus b.
    np.testing.assert_allclose(fit.decision, gram @ (fit.alpha * y) + fit.b, atol=1e-10)
    np.testing.assert_allclose(fit.xi, np.maximum(0.0, 1.0 - margin))
    assert (margin >= 1.0 - fit.xi - 1e-12).all()
    free = (fit.alpha > 0) & ~fit.bounded
    non_sv = fit.alpha == 0
    assert np.all(np.abs(margin[free] - 1.0) <= KKT_ATOL)
    assert np.all(margin[non_sv] >= 1.0 - KKT_ATOL)
    assert np.all(margin[fit.bounded] <= 1.0 + KKT_ATOL)
    assert np.array_equal(np.sort(fit.support), np.flatnonzero(fit.alpha > 0))
    assert fit.n_sv == int((fit.alpha > 0).sum())
    assert fit.n_bounded_sv == int(fit.bounded.sum())
    assert fit.stable == bool(free.any())
    assert fit.fit_seconds >= 0


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_decision_values_equal_scikit_learn(kernel):
    X, y, params, gram = _problem(11, kernel)
    X_test = np.random.default_rng(5).normal(size=(9, 3)) / 3
    reference = SVC(C=2.0, kernel=kernel, class_weight={1: 3.0, -1: 1.0}, tol=TOL, **params).fit(X, y)

    by_gram = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(2.0, j=3.0, tol=TOL))
    np.testing.assert_allclose(by_gram.decision, by_gram.model.decision_function(gram), atol=1e-10)
    cross = pairwise_kernels(X_test, X, metric=kernel, **params)
    np.testing.assert_allclose(by_gram.decision_function(cross), by_gram.model.decision_function(cross), atol=1e-10)
    np.testing.assert_allclose(by_gram.decision_function(cross), reference.decision_function(X_test), atol=1e-5)

    by_features = fit_svm(
        TrainingProblem(y, X=X, kernel=kernel, kernel_params=params), SVMParameters(2.0, j=3.0, tol=TOL)
    )
    # rbf on features is libsvm itself; linear takes xialpha's own solver: the same optimum within tol
    same_solver = 1e-12 if kernel == "rbf" else 1e-5
    np.testing.assert_allclose(by_features.decision, reference.decision_function(X), atol=same_solver)
    np.testing.assert_allclose(
        by_features.decision_function(X_test), reference.decision_function(X_test), atol=same_solver
    )
    np.testing.assert_allclose(by_features.alpha, by_gram.alpha, atol=1e-5)
    assert by_features.b == pytest.approx(by_gram.b, abs=1e-5)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_zero_weights_equal_fit_on_sub_gram(kernel):
    # scikit-learn drops zero-weight rows before libsvm: its support_ indexes the compacted rows.
    X, y, params, gram = _problem(21, kernel)
    n = y.size
    dropped = np.array([0, 3, 4, n - 1])
    weights = np.ones(n)
    weights[dropped] = 0.0
    keep = np.flatnonzero(weights > 0)
    sub = SVC(C=1.5, kernel="precomputed", class_weight={1: 2.0, -1: 1.0}, tol=TOL).fit(
        gram[np.ix_(keep, keep)], y[keep]
    )
    sub_alpha = np.zeros(n)
    sub_alpha[keep[sub.support_]] = np.abs(sub.dual_coef_[0])
    sub_decision = sub.decision_function(gram[:, keep])

    by_gram = fit_svm(TrainingProblem(y, gram=gram, weights=weights), SVMParameters(1.5, j=2.0, tol=TOL))
    by_features = fit_svm(
        TrainingProblem(y, X=X, kernel=kernel, kernel_params=params, weights=weights),
        SVMParameters(1.5, j=2.0, tol=TOL),
    )
    # linear on features is xialpha's own solver: the same optimum, to its tolerance
    atol = {by_gram: 1e-6, by_features: 1e-6 if kernel == "rbf" else 1e-5}
    for fit in (by_gram, by_features):
        assert not np.isin(fit.support, dropped).any()
        assert fit.c_i[dropped].tolist() == [0.0] * dropped.size
        np.testing.assert_allclose(fit.alpha, sub_alpha, atol=atol[fit])
        assert fit.b == pytest.approx(float(sub.intercept_[0]), abs=atol[fit])
        np.testing.assert_allclose(fit.decision, sub_decision, atol=atol[fit])
    assert np.array_equal(by_gram.alpha, sub_alpha)  # the same libsvm problem: bit for bit
    if kernel == "rbf":
        np.testing.assert_array_equal(by_features.model.support_vectors_, X[by_features.support])


def test_integer_weight_acts_as_copies():
    X, y, params, gram = _problem(31, "linear")
    weights = np.ones(y.size)
    weights[[2, 5]] = 2.0
    weighted = fit_svm(TrainingProblem(y, gram=gram, weights=weights), SVMParameters(0.7, tol=TOL))
    idx = np.concatenate([np.arange(y.size), [2, 5]])
    copied = fit_svm(TrainingProblem(y[idx], gram=gram[np.ix_(idx, idx)]), SVMParameters(0.7, tol=TOL))
    np.testing.assert_allclose(weighted.decision, copied.decision[: y.size], atol=1e-5)
    np.testing.assert_allclose(weighted.c_i[[2, 5]], 1.4)


def test_unstable_solution_all_bounded():
    # Identical inputs, equal class sizes: w = 0, every alpha_i = C, b is not unique.
    y = np.array([1, -1, 1, -1, 1, -1])
    fit = fit_svm(TrainingProblem(y, gram=np.ones((6, 6))), SVMParameters(0.5, tol=TOL))
    np.testing.assert_allclose(fit.alpha, 0.5)
    assert fit.n_bounded_sv == 6
    assert not fit.stable


def test_separable_solution_is_stable_with_margin_one_support_vectors():
    # Two points per class on a line at -2, -1 | 1, 2 (linear kernel, large C): the hard-margin SVM
    # has w = 1, b = 0, support vectors x = -1 and x = 1 with alpha = 1/2 each (w = sum alpha y x).
    x = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([-1, -1, 1, 1])
    fit = fit_svm(TrainingProblem(y, X=x), SVMParameters(100.0, tol=1e-9))
    np.testing.assert_allclose(fit.alpha, [0.0, 0.5, 0.5, 0.0], atol=1e-7)
    assert fit.b == pytest.approx(0.0, abs=1e-7)
    np.testing.assert_allclose(fit.decision, [-2.0, -1.0, 1.0, 2.0], atol=1e-7)
    np.testing.assert_allclose(fit.xi, 0.0, atol=1e-7)
    assert fit.stable and fit.n_bounded_sv == 0


@pytest.mark.parametrize("tol", [1e-300, 0.0, 2.0, float("nan")])
@pytest.mark.parametrize("path", ["gram", "features"])
def test_a_tolerance_no_solver_can_reach_is_refused(tol, path):
    # before: tol=1e-300 sent libsvm into a loop that never ended
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    data = {"gram": X @ X.T} if path == "gram" else {"X": sp.csr_matrix(X)}
    with pytest.raises(ValueError, match="tol: must be"):
        fit_svm(TrainingProblem(y, **data), SVMParameters(1.0, tol=tol))


def test_libsvm_iterations_are_capped_and_reported(monkeypatch):
    import sklearn.svm

    import xialpha.estimators.svm as svm

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1, -1)
    with pytest.warns(Warning, match="terminated early"):
        stopped = fit_svm(TrainingProblem(y, gram=X @ X.T), SVMParameters(10.0, max_iter=3))
    assert not stopped.converged
    # without max_iter libsvm gets its own cap, not scikit-learn's -1 (never stop)
    seen = []  # the SVC fit_svm imports when it calls libsvm
    monkeypatch.setattr(sklearn.svm, "SVC", lambda **kwargs: seen.append(kwargs["max_iter"]) or SVC(**kwargs))
    assert fit_svm(TrainingProblem(y, gram=X @ X.T), SVMParameters(10.0)).converged
    assert seen == [max(svm.LIBSVM_MAX_ITER, 100 * 200)]


def test_a_training_problem_knows_its_path_its_rows_and_its_checks():
    X, y, params, gram = _problem(3, "rbf")
    linear, named, precomputed = (
        TrainingProblem(y.tolist(), X=sp.csr_matrix(X)),
        TrainingProblem(y, X=X, kernel="rbf", kernel_params=params),
        TrainingProblem(y, gram=gram.tolist()),
    )
    assert linear.y.dtype == np.int8 and linear.n == y.size  # labels checked and typed when made
    assert [p.linear for p in (linear, named, precomputed)] == [True, False, False]
    np.testing.assert_array_equal(named.rows([2, 0]), X[[2, 0]])
    np.testing.assert_array_equal(precomputed.rows([2, 0]), gram[[2, 0]])  # Gram rows, for decision_function
    checked = precomputed.checked()
    assert checked.gram.dtype == np.float64 and checked.y is not None  # the data checked once, as arrays
    with pytest.raises(ValueError, match="^weights: not accepted here"):
        precomputed.weighted(np.ones(y.size)).checked()
    assert named.r_delta2() == pytest.approx(np.max(np.diagonal(gram)) - np.min(gram), rel=1e-12)
    with pytest.raises(ValueError, match="^gram, X: give exactly one"):
        TrainingProblem(y, X=X, gram=gram)
    with pytest.raises(ValueError, match="^C: must be"):
        SVMParameters(0.0)
    parameters = SVMParameters(1.0, j=2.0, tol=1e-4)
    assert parameters.at(5.0) == SVMParameters(5.0, j=2.0, tol=1e-4)
    # one problem and one set of parameters train the same SVM on either path
    by_features, by_gram = fit_svm(named, parameters), fit_svm(precomputed, parameters)
    np.testing.assert_allclose(by_features.alpha, by_gram.alpha, atol=1e-3)
