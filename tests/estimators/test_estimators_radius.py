"""R_delta^2 = max_i K(x_i, x_i) - min_ij K(x_i, x_j): tiny hand-computed Grams, the block scan and
the unit-norm closed forms (which must bound the exact value from above)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from xialpha.estimators.xi_alpha import r_delta_squared

# X = [[1, 0], [0, 2], [-1, 1]] has Gram [[1, 0, -1], [0, 4, 2], [-1, 2, 2]]:
# max diagonal 4, minimum entry -1, so R_delta^2 = 5.
X_SMALL = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]])
GRAM_SMALL = np.array([[1.0, 0.0, -1.0], [0.0, 4.0, 2.0], [-1.0, 2.0, 2.0]])


def test_tiny_gram_by_hand():
    assert r_delta_squared(gram=GRAM_SMALL) == 5.0
    assert r_delta_squared(gram=GRAM_SMALL.tolist()) == 5.0
    assert r_delta_squared(gram=[[2.0]]) == 0.0


def test_linear_features_equal_gram():
    np.testing.assert_allclose(X_SMALL @ X_SMALL.T, GRAM_SMALL)
    assert r_delta_squared(X=X_SMALL) == pytest.approx(5.0)
    assert r_delta_squared(X=X_SMALL, exact=True) == pytest.approx(5.0)


def test_rbf_by_hand():
    # Squared distances 5 (x0-x1), 5 (x0-x2), 2 (x1-x2); K(x, x) = 1, min K = exp(-0.5 * 5).
    r2 = r_delta_squared(X=X_SMALL, kernel="rbf", kernel_params={"gamma": 0.5})
    assert r2 == pytest.approx(1.0 - math.exp(-2.5))


@pytest.mark.parametrize("block_rows", [1, 2, 3, 1024])
def test_block_scan_independent_of_block_size(block_rows):
    X = np.random.default_rng(0).normal(size=(7, 3))
    for kernel, params in [
        ("linear", {}),
        ("rbf", {"gamma": 0.3}),
        ("poly", {"gamma": 0.5, "degree": 2, "coef0": 1.0}),
    ]:
        gram = pairwise_kernels(X, metric=kernel, **params)
        expected = gram.diagonal().max() - gram.min()
        got = r_delta_squared(X=X, kernel=kernel, kernel_params=params, block_rows=block_rows)
        assert got == pytest.approx(expected, rel=1e-12), kernel


def test_sparse_features_equal_dense():
    X = np.random.default_rng(1).normal(size=(6, 4)) * (np.random.default_rng(2).random((6, 4)) < 0.5)
    dense = r_delta_squared(X=X, block_rows=4)
    assert r_delta_squared(X=sp.csr_matrix(X), block_rows=4) == pytest.approx(dense)
    assert r_delta_squared(X=sp.coo_matrix(X), block_rows=4) == pytest.approx(dense)


def _unit_nonnegative(rng, n, d, density):
    X = rng.random((n, d)) * (rng.random((n, d)) < density)
    X[np.arange(n), rng.integers(0, d, n)] += 0.1  # no empty rows
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_unit_norm_closed_forms_by_hand():
    # Two unit rows with dot product 0.96: exact linear R^2 = 1 - 0.96, closed form 1;
    # squared distance 0.08: exact RBF R^2 = 1 - exp(-0.08 gamma), closed form 1 - exp(-2 gamma).
    X = np.array([[0.6, 0.8], [0.8, 0.6]])
    assert r_delta_squared(X=X) == 1.0
    assert r_delta_squared(X=X, exact=True) == pytest.approx(0.04)
    rbf = {"gamma": 2.0}
    assert r_delta_squared(X=X, kernel="rbf", kernel_params=rbf) == pytest.approx(1.0 - math.exp(-4.0))
    assert r_delta_squared(X=X, kernel="rbf", kernel_params=rbf, exact=True) == pytest.approx(1.0 - math.exp(-0.16))


def test_unit_norm_closed_form_tight_for_orthogonal_rows():
    X = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    assert r_delta_squared(X=X) == r_delta_squared(X=X, exact=True) == pytest.approx(1.0)
    rbf = {"gamma": 0.7}
    assert r_delta_squared(X=X, kernel="rbf", kernel_params=rbf) == pytest.approx(
        r_delta_squared(X=X, kernel="rbf", kernel_params=rbf, exact=True)
    )


@pytest.mark.parametrize("seed", range(20))
def test_closed_form_bounds_exact_scan(seed):
    rng = np.random.default_rng(seed)
    X = _unit_nonnegative(rng, int(rng.integers(2, 30)), int(rng.integers(2, 50)), rng.uniform(0.05, 1.0))
    for X_in in (X, sp.csr_matrix(X)):
        exact = r_delta_squared(X=X_in, exact=True)
        gram = X @ X.T
        assert exact == pytest.approx(gram.diagonal().max() - gram.min())
        assert r_delta_squared(X=X_in) == 1.0 >= exact - 1e-12
        gamma = float(rng.uniform(0.01, 5.0))
        params = {"gamma": gamma}
        exact_rbf = r_delta_squared(X=X_in, kernel="rbf", kernel_params=params, exact=True)
        closed_rbf = r_delta_squared(X=X_in, kernel="rbf", kernel_params=params)
        assert closed_rbf == pytest.approx(1.0 - math.exp(-2.0 * gamma))
        assert closed_rbf >= exact_rbf - 1e-12


def test_closed_form_not_used_for_negative_or_non_unit_rows():
    negative = np.array([[0.6, -0.8], [0.6, 0.8]])  # unit rows, dot product -0.28: exact R^2 = 1.28 > 1
    assert r_delta_squared(X=negative) == pytest.approx(1.28)
    long_rows = np.array([[2.0, 0.0], [0.0, 1.0]])  # K(x0, x0) = 4
    assert r_delta_squared(X=long_rows) == pytest.approx(4.0)
    assert r_delta_squared(X=long_rows, kernel="rbf", kernel_params={"gamma": 1.0}) == pytest.approx(1 - math.exp(-5.0))


def test_closed_form_not_used_for_poly_kernel():
    X = np.array([[0.6, 0.8], [0.8, 0.6]])
    params = {"gamma": 1.0, "degree": 2, "coef0": 1.0}
    gram = pairwise_kernels(X, metric="poly", **params)
    assert r_delta_squared(X=X, kernel="poly", kernel_params=params) == pytest.approx(
        gram.diagonal().max() - gram.min()
    )
