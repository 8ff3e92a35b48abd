"""The span estimate computes S_i^2 only where it decides a call: its calls equal those of every S_i^2
computed exactly, on the Gram and the linear path, with and without a sampled hull; and the
compiled sparse Gram blocks equal scipy's products."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import fit_svm
from xialpha.estimators.span import BOUND_RTOL, span_loo_margins, span_squared
from xialpha.estimators.sparse_gram import gram_block


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


def _thresholds(fit) -> np.ndarray:
    margins = fit.y * fit.decision
    sv = fit.alpha > 0
    thresholds = np.full(margins.shape, np.nan)
    thresholds[sv] = margins[sv] / fit.alpha[sv]
    return thresholds


@pytest.mark.parametrize("max_unbounded", [4000, 7])
def test_calls_equal_those_of_exact_spans_and_every_shortcut_is_taken(max_unbounded):
    """Over 40 problems x 4 C on both paths: the estimate's calls are those of the exact margins; the
    exact S^2 is reported wherever it was computed, 0 where t <= 0, and an upper bound below t
    elsewhere; each of the three cases occurs."""
    cases = {"zero": 0, "bound": 0, "exact": 0}
    for seed in range(40):
        X, y = _text_like(seed)
        for C in (0.1, 1.0, 10.0, 100.0):
            for fit, gram in ((fit_svm(y, C, X=X, tol=1e-6), None),
                              (fit_svm(y, C, gram=(X @ X.T).toarray(), tol=1e-6), (X @ X.T).toarray())):
                exact = span_squared(fit, gram, max_unbounded=max_unbounded)
                thresholds = _thresholds(fit)
                decisive = span_squared(fit, gram, max_unbounded=max_unbounded, thresholds=thresholds)
                sv = fit.alpha > 0
                assert np.isnan(decisive[~sv]).all()
                if not fit.stable:  # no unbounded SV: every S^2 is the diameter bound, no shortcut
                    np.testing.assert_array_equal(decisive, exact)
                    continue
                zero = sv & (thresholds <= 0)
                computed = sv & ~zero & np.isclose(decisive, exact, rtol=1e-7, atol=1e-10)
                bound = sv & ~zero & ~computed
                assert (decisive[zero] == 0).all()
                assert (decisive[bound] < thresholds[bound] * (1 - BOUND_RTOL)).all()
                assert (exact[bound] <= decisive[bound] + 1e-9).all()  # an upper bound of the exact value
                cases["zero"] += int(zero.sum())
                cases["bound"] += int(bound.sum())
                cases["exact"] += int(computed.sum())
                margins = span_loo_margins(fit, gram, max_unbounded=max_unbounded)
                assert np.array_equal(span_estimate(fit, gram, max_unbounded=max_unbounded).indicator, margins <= 0)
    assert min(cases.values()) > 100, cases


def test_undecided_unbounded_svs_alone_get_the_triangular_inverse(monkeypatch):
    """The trailing block inverted is as large as the undecided unbounded SVs, not n_U."""
    import xialpha.estimators.span as span

    sizes = []
    original = span._CholeskyHull.member_inverse_diagonal
    monkeypatch.setattr(span._CholeskyHull, "member_inverse_diagonal",
                        lambda self, k: sizes.append((k, self.factor.shape[0])) or original(self, k))
    X, y = _text_like(3, n=300, d=80)
    fit = fit_svm(y, 10.0, X=X, tol=1e-6)
    span_estimate(fit)
    (k, n_u), = sizes
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
        for rows, cols in ((np.arange(50), np.arange(50)), (rng.permutation(50)[:17], rng.permutation(50)[:23]),
                           (np.array([4, 4, 3, 9]), np.array([4, 4, 3, 9])), (np.array([2, 3]), np.arange(0))):
            expected = (X[rows] @ X[cols].T).toarray()
            block = gram_block(matrix, rows, cols)
            assert block.shape == (rows.size, cols.size) and block.dtype == np.float64
            np.testing.assert_allclose(block, expected, rtol=1e-12, atol=1e-15)
