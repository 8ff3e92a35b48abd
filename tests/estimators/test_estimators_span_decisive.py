"""The span estimate computes S_i^2 only where it decides a call: its calls equal those of every S_i^2
computed exactly (the dense path, thresholds=None), on the Gram and the linear path, by the dense and
the iterative method; the iterative method's bounds are bounds; and the compiled sparse Gram blocks
equal scipy's products."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.estimators.kernel_rows import NamedKernelRows, dense_features, gram_block
from xialpha.estimators.span import (
    BOUND_RTOL,
    call_thresholds,
    span_bounds,
    span_calls,
    span_estimate,
    span_loo_margins,
    span_squared,
)
from xialpha.estimators.span_iterative import certified_bounds
from xialpha.estimators.svm import SVMFit, SVMParameters, TrainingProblem, fit_svm


def _text_like(seed: int, n: int = 120, d: int = 60):
    """Non-negative unit-norm sparse rows (TF-IDF-like), with a duplicate row, labels from a noisy rule."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) * (rng.random((n, d)) < rng.uniform(0.05, 0.3))
    X[:, 0] += 0.05
    X[7] = X[6]
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.normal(size=d)
    y = np.where(X @ w + rng.normal(scale=rng.uniform(0.0, 0.3), size=n) > np.median(X @ w), 1, -1)
    return sp.csr_matrix(X), y


def _assert_calls_of_exact_spans(fit, gram, method, cases=None, exact=None):
    """The calls of span_squared(thresholds=t) by `method` are those of the exact spans (`exact`, else
    computed here); each S^2 is 0 where t <= 0, else the exact value, an upper bound below t, or a
    lower bound at or above t."""
    exact = span_squared(fit, gram) if exact is None else exact
    thresholds = call_thresholds(fit)
    calls = span_calls(fit, gram, method=method, thresholds=thresholds)
    decisive = calls.spans
    sv = fit.alpha > 0
    assert np.isnan(decisive[~sv]).all()
    if not fit.stable:  # no unbounded SV: every S^2 is the diameter bound, no shortcut
        np.testing.assert_array_equal(decisive, exact)
        return calls
    np.testing.assert_array_equal(decisive[sv] >= thresholds[sv], exact[sv] >= thresholds[sv])
    zero = sv & (thresholds <= 0)
    computed = sv & ~zero & np.isclose(decisive, exact, rtol=1e-7, atol=1e-10)
    below = sv & ~zero & ~computed & (decisive < thresholds)
    above = sv & ~zero & ~computed & ~below
    assert (decisive[zero] == 0).all()
    assert (decisive[below] < thresholds[below] * (1 - BOUND_RTOL)).all()
    assert (exact[below] <= decisive[below] + 1e-9).all()  # an upper bound of the exact value
    assert (decisive[above] >= thresholds[above] * (1 + BOUND_RTOL)).all()
    assert (exact[above] >= decisive[above] - 1e-9).all()  # a lower bound of the exact value
    assert calls.by_sign + calls.by_bound + calls.by_solve + calls.by_exact == sv.sum()
    if cases is not None:
        for name, mask in (("zero", zero), ("exact", computed), ("below", below), ("above", above)):
            cases[name] += int(mask.sum())
    return calls


@pytest.fixture(scope="module")
def fitted() -> list[tuple[SVMFit, np.ndarray | None, np.ndarray]]:
    """(fit, its Gram or None for the linear path, its exact S^2) over 40 problems x 4 C on both
    paths: fitted and spanned once for the three methods (issue 50.7: each method refitted them)."""
    out = []
    for seed in range(40):
        X, y = _text_like(seed)
        for C in (0.1, 1.0, 10.0, 100.0):
            gram = (X @ X.T).toarray()
            for fit, fit_gram in (
                (fit_svm(TrainingProblem(y, X=X), SVMParameters(C, tol=1e-6)), None),
                (fit_svm(TrainingProblem(y, gram=gram), SVMParameters(C, tol=1e-6)), gram),
            ):
                out.append((fit, fit_gram, span_squared(fit, fit_gram)))
    return out


@pytest.mark.parametrize("method", ["auto", "dense", "iterative"])
def test_calls_equal_those_of_exact_spans_and_every_shortcut_is_taken(fitted, method):
    """Over 40 problems x 4 C on both paths: the estimate's calls are those of the exact margins, each
    S^2 reported is 0, exact, or a bound on the side of t it decides; the shortcuts occur (the dense
    path: no lower bounds; the iterative path: both bounds, the solve deciding hundreds of points)."""
    cases = {"zero": 0, "exact": 0, "below": 0, "above": 0}
    solved = 0
    for fit, gram, exact in fitted:
        calls = _assert_calls_of_exact_spans(fit, gram, method, cases, exact)
        solved += calls.by_solve
        margins = span_loo_margins(fit, gram, method=method)
        assert np.array_equal(span_estimate(fit, gram, method=method).indicator, margins <= 0)
    expected = {"zero", "below"} | ({"above"} if method == "iterative" else {"exact"})
    assert min(cases[name] for name in expected) > 100, cases
    assert (solved > 500) == (method == "iterative"), solved


def test_iterative_calls_on_duplicates_degenerate_hulls_and_named_kernels():
    """Duplicate unbounded SVs, two unbounded SVs, points inside the hull (n_U > d), an RBF kernel
    given by name: the iterative path's calls are the exact spans'."""
    rng = np.random.default_rng(5)
    checked = 0
    for seed in range(12):
        X, y = _text_like(seed, n=80, d=6 if seed % 3 == 0 else 60)  # d = 6: every hull is the whole space
        dense = X.toarray()
        dense[10:14] = dense[9]  # four more duplicates
        X = sp.csr_matrix(dense)
        for C in (0.5, 50.0):
            fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(C, tol=1e-8))
            _assert_calls_of_exact_spans(fit, None, "iterative")
            rows = NamedKernelRows(dense, "rbf", {"gamma": float(rng.uniform(0.5, 3.0))})
            rbf = fit_svm(TrainingProblem(y, gram=rows.block(np.arange(80), np.arange(80))), SVMParameters(C, tol=1e-8))
            _assert_calls_of_exact_spans(rbf, rows, "iterative")
            checked += 2
    # two unbounded SVs: the hull of the other is a point
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [2.0, 2.0], [3.0, 1.0]])
    for alpha, t_scale in (([0.3, 0.4, 1.0, 1.0, 0.0], 1.0), ([0.3, 0.4, 1.0, 1.0, 0.0], 10.0)):
        fit = _crafted_fit([1, -1, -1, 1, 1], alpha, [1.0] * 5, np.array([1.0, -1.0, 0.5, -0.2, 3.0]) * t_scale)
        gram = X @ X.T
        _assert_calls_of_exact_spans(fit, gram, "iterative")
        checked += 1
    assert checked == 50


def test_certified_bounds_enclose_the_exact_span_at_any_feasible_lambda():
    """At random feasible lambda (free entries summing to 1; a point's own entry 0), the upper bound
    is >= and the dual lower bound <= the exact S^2 (the bordered system solved directly), and both
    equal it at the minimiser."""
    rng = np.random.default_rng(0)
    for n_u, d, ridge in ((30, 50, 1e-8), (30, 10, 1e-6), (12, 200, 1e-3)):
        X = rng.normal(size=(n_u, d)) * rng.uniform(0.1, 2.0, size=(n_u, 1))
        points = np.vstack([rng.normal(size=(4, d)), X[:3]])
        K, columns = X @ X.T, X @ points.T
        k_xx = np.einsum("ij,ij->i", points, points)
        own = np.array([-1, -1, -1, -1, 0, 1, 2])
        free = np.ones((n_u, own.size))
        free[own[4:], np.arange(4, 7)] = 0.0
        exact, optimum = _exact_spans(K, columns, k_xx, free, ridge)
        for scale in (0.0, 1e-6, 1e-2, 1.0, 10.0):
            lam = optimum + scale * rng.normal(size=optimum.shape) * free
            lam += free * (1.0 - lam.sum(axis=0)) / free.sum(axis=0)  # back onto 1^T lambda = 1
            upper, lower, slack = certified_bounds(columns, k_xx, lam, K @ lam + ridge * lam, own, ridge)
            assert (lower <= exact * (1 + 1e-9) + slack).all() and (upper >= exact * (1 - 1e-9) - slack).all()
            if scale == 0.0:
                np.testing.assert_allclose(lower, exact, rtol=1e-6, atol=1e-12 * k_xx.max())
                np.testing.assert_allclose(upper, exact, rtol=1e-9, atol=1e-12 * k_xx.max())


def _exact_spans(K, columns, k_xx, free, ridge):
    """S^2 per column and its minimiser, from the bordered system over the free entries."""
    values, lam = [], np.zeros(columns.shape)
    for j in range(columns.shape[1]):
        keep = free[:, j] > 0
        m = int(keep.sum())
        bordered = np.zeros((m + 1, m + 1))
        bordered[:m, :m] = K[np.ix_(keep, keep)] + ridge * np.eye(m)
        bordered[:m, m] = bordered[m, :m] = 1.0
        solution = np.linalg.solve(bordered, np.append(columns[keep, j], 1.0))
        lam[keep, j] = solution[:m]
        values.append(k_xx[j] - columns[keep, j] @ solution[:m] - solution[m])
    return np.array(values), lam


def test_a_wrong_lower_bound_changes_calls(monkeypatch):
    """The comparison above catches a bound that is not one: taking the iterate's value for a lower
    bound (forgetting the duality gap) flips calls."""
    from xialpha.estimators import span_iterative

    original = span_iterative.certified_bounds

    def value_for_lower_bound(*args):
        upper, _, slack = original(*args)
        return upper, upper, slack

    monkeypatch.setattr(span_iterative, "certified_bounds", value_for_lower_bound)
    flipped = 0
    for seed in range(10):
        X, y = _text_like(seed)
        fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(10.0, tol=1e-6))
        thresholds = call_thresholds(fit)
        sv = fit.alpha > 0
        flipped += int(
            np.sum(
                (span_squared(fit, method="iterative", thresholds=thresholds)[sv] >= thresholds[sv])
                != (span_squared(fit)[sv] >= thresholds[sv])
            )
        )
    assert flipped > 0


def test_undecided_unbounded_svs_alone_get_the_triangular_inverse(monkeypatch):
    """The trailing block inverted is as large as the undecided unbounded SVs, not n_U."""
    from xialpha.estimators import span

    sizes = []
    original = span._CholeskyHull.member_inverse_diagonal
    monkeypatch.setattr(
        span._CholeskyHull,
        "member_inverse_diagonal",
        lambda self, k: sizes.append((k, self.factor.shape[0])) or original(self, k),
    )
    X, y = _text_like(3, n=300, d=80)
    fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(10.0, tol=1e-6))
    span_estimate(fit)
    ((k, n_u),) = sizes
    assert n_u == fit.n_sv - fit.n_bounded_sv
    assert 0 < k < n_u


def test_gram_block_equals_the_sparse_product():
    rng = np.random.default_rng(0)
    dense = sp.random(50, 30, density=0.2, random_state=1).toarray()
    dense[3] = 0.0  # an empty row
    X = sp.csr_matrix(dense)
    unsorted = X.copy()
    unsorted.indices = unsorted.indices.copy()
    for i in range(unsorted.shape[0]):  # the same matrix with its indices reversed per row
        part = slice(unsorted.indptr[i], unsorted.indptr[i + 1])
        unsorted.indices[part], unsorted.data[part] = unsorted.indices[part][::-1], unsorted.data[part][::-1]
    unsorted.has_sorted_indices = False
    for matrix in (X, unsorted):
        for rows, cols in (
            (np.arange(50), np.arange(50)),
            (rng.permutation(50)[:17], rng.permutation(50)[:23]),
            (np.array([4, 4, 3, 9]), np.array([4, 4, 3, 9])),
            (np.array([2, 3]), np.arange(0)),
        ):
            expected = (X[rows] @ X[cols].T).toarray()
            block = gram_block(matrix, rows, cols)
            assert block.shape == (rows.size, cols.size) and block.dtype == np.float64
            np.testing.assert_allclose(block, expected, rtol=1e-12, atol=1e-15)


def _crafted_fit(y, alpha, c_i, decision) -> SVMFit:
    """An SVMFit with chosen dual variables (as in test_estimators_span)."""
    y, alpha, c_i, decision = (np.asarray(v, dtype=float) for v in (y, alpha, c_i, decision))
    return SVMFit(
        y=y.astype(np.int8),
        alpha=alpha,
        xi=np.maximum(0.0, 1 - y * decision),
        b=0.0,
        c_i=c_i,
        decision=decision,
        support=np.flatnonzero(alpha > 0),
        fit_seconds=0.0,
        model=None,
        precomputed=True,
    )


def test_auto_takes_the_iterative_path_above_the_dense_limit(monkeypatch):
    """method="auto": above DENSE_MAX_UNBOUNDED unbounded SVs the iterative path, with the same calls."""
    from xialpha.estimators import span

    X, y = _text_like(2, n=200, d=80)
    fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(10.0, tol=1e-6))
    assert _assert_calls_of_exact_spans(fit, None, "auto").method == "dense"
    monkeypatch.setattr(span, "DENSE_MAX_UNBOUNDED", fit.n_sv - fit.n_bounded_sv - 1)
    calls = _assert_calls_of_exact_spans(fit, None, "auto")
    assert calls.method == "iterative" and calls.by_solve > 0


def test_a_sigmoid_kernel_takes_the_dense_path_whatever_the_method():
    """The iterative bounds need a positive semi-definite kernel: a (possibly indefinite) sigmoid one is
    computed densely, with the calls of the exact spans."""
    X, y = _text_like(4, n=80, d=30)
    rows = NamedKernelRows(X.toarray(), "sigmoid", {"gamma": 0.5, "coef0": 0.0})
    fit = fit_svm(TrainingProblem(y, gram=rows.block(np.arange(80), np.arange(80))), SVMParameters(1.0, tol=1e-6))
    assert fit.stable
    assert _assert_calls_of_exact_spans(fit, rows, "iterative").method == "dense"


def test_points_the_solve_leaves_undecided_are_computed_densely(monkeypatch):
    """With the iterations capped at 2, most solved points stay undecided: the dense path computes
    them exactly (by_exact), and the calls are still the exact spans'."""
    from xialpha.estimators import span_iterative

    monkeypatch.setattr(span_iterative, "MAX_ITERATIONS", 2)
    X, y = _text_like(2, n=200, d=80)
    fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(10.0, tol=1e-6))
    calls = _assert_calls_of_exact_spans(fit, None, "iterative")
    assert calls.by_exact > 10 and (calls.solve_iterations <= 2).all()


def test_gram_block_splits_frequent_features_into_a_dense_product():
    """Text-like skew: a few features in most rows (the dense BLAS product), many rare ones (the sparse
    kernels); symmetric and rectangular blocks are the exact products to rounding, and the symmetric
    block is exactly symmetric."""
    rng = np.random.default_rng(3)
    n, d = 300, 400
    share = np.where(np.arange(d) < 8, 0.7, 0.02)  # 8 frequent features
    dense = rng.random((n, d)) * (rng.random((n, d)) < share)
    X = sp.csr_matrix(dense / np.maximum(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12))
    rows, cols = rng.permutation(n)[:200], rng.permutation(n)[:150]
    counts = np.bincount(X[rows].indices, minlength=d)
    frequent = dense_features(counts, counts, rows.size, rows.size)
    assert set(frequent) == set(range(8))
    for a, b in ((rows, rows), (rows, cols), (cols, rows)):
        block = gram_block(X, a, b)
        np.testing.assert_allclose(block, (X[a] @ X[b].T).toarray(), rtol=1e-12, atol=1e-15)
    symmetric = gram_block(X, rows, rows)
    assert np.array_equal(symmetric, symmetric.T)


def test_span_bounds_hold_the_estimate_and_are_it_where_every_call_is_cheap():
    """`span_bounds` (sign and centroid only) brackets span's counts: its lows are the sign's errors,
    its highs add every call not made; where it leaves none, span_calls forms no kernel block ("bounds")."""
    widths, cheap = [], 0
    for seed in range(16):
        X, y = _text_like(seed)
        gram = (X @ X.T).toarray() if seed % 2 else None
        problem = TrainingProblem(y, X=X) if gram is None else TrainingProblem(y, gram=gram)
        fit = fit_svm(problem, SVMParameters(10.0 ** (seed % 5 - 2)))
        bounds, estimate = span_bounds(fit, gram), span_estimate(fit, gram)
        assert bounds.d_pos_low <= estimate.d_pos <= bounds.d_pos_high
        assert bounds.d_neg_low <= estimate.d_neg <= bounds.d_neg_high
        sign_errors = (fit.alpha > 0) & (fit.y * fit.decision <= 0)
        assert bounds.d_pos_low + bounds.d_neg_low == int(sign_errors.sum())
        calls = span_calls(fit, gram, thresholds=call_thresholds(fit))
        assert bounds.exact == (calls.method == "bounds") or calls.method == "diameter"
        cheap += bounds.exact
        widths.append(bounds.d_pos_high - bounds.d_pos_low + bounds.d_neg_high - bounds.d_neg_low)
    assert cheap and max(widths) > 0  # both kinds were met
