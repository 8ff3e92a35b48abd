"""Gram matrices: blockwise linear Grams, kernels derived from them equal scikit-learn's, memory refusal."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel
from sklearn.svm import SVC

from xialpha.errors import UserError
from xialpha.features import (
    GramTooLarge,
    Kernel,
    check_gram_fits,
    gram_nbytes,
    linear_gram,
    row_sq_norms,
)


def sparse_rows(n: int, d: int, seed: int) -> sp.csr_matrix:
    return sp.random(n, d, density=0.2, random_state=seed, format="csr")


@pytest.mark.parametrize("block_rows", [1, 7, 512])
def test_linear_gram_equals_the_one_product_and_is_symmetric(block_rows):
    X = sparse_rows(40, 25, seed=0)
    G = linear_gram(X, block_rows=block_rows)
    np.testing.assert_allclose(G, (X @ X.T).toarray(), rtol=0, atol=1e-14)
    assert G.dtype == np.float64 and np.array_equal(G, G.T)


def test_test_versus_train_gram_sparse_and_dense():
    X, Y = sparse_rows(30, 25, seed=1), sparse_rows(11, 25, seed=2)
    expected = (Y @ X.T).toarray()
    np.testing.assert_allclose(linear_gram(Y, X, block_rows=4), expected, atol=1e-14)
    np.testing.assert_allclose(linear_gram(Y.toarray(), X.toarray(), block_rows=4), expected, atol=1e-12)
    with pytest.raises(UserError, match="Y: has 24 features, X has 25"):
        linear_gram(X, sparse_rows(3, 24, seed=3))


def test_row_sq_norms_sparse_and_dense():
    X = sparse_rows(9, 6, seed=4)
    np.testing.assert_allclose(row_sq_norms(X), (X.toarray() ** 2).sum(axis=1))
    np.testing.assert_allclose(row_sq_norms(X.toarray()), (X.toarray() ** 2).sum(axis=1))


def test_memory_estimate_and_refusal():
    assert gram_nbytes(6451, 6451) == 8 * 6451 * 6451
    check_gram_fits(1000, 1000, limit_bytes=8_000_000)
    check_gram_fits(10**6, 10**6, limit_bytes=None)
    with pytest.raises(
        GramTooLarge, match=r"Gram matrix 50,000 x 50,000 \(float64\) needs 18.6 GiB, more than the limit of 4.0 GiB"
    ):
        check_gram_fits(50_000, 50_000, limit_bytes=4 * 2**30)
    assert issubclass(GramTooLarge, UserError)
    with pytest.raises(GramTooLarge, match="needs 3.1 KiB, more than the limit of 3.0 KiB"):
        linear_gram(sparse_rows(20, 5, seed=5), limit_bytes=3 * 1024)


finite = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    X=arrays(np.float64, st.tuples(st.integers(1, 8), st.just(5)), elements=finite),
    Y=arrays(np.float64, st.tuples(st.integers(1, 6), st.just(5)), elements=finite),
    gamma=st.floats(0.01, 2.0),
    degree=st.integers(1, 4),
    coef0=st.floats(-2.0, 2.0),
)
def test_derived_kernels_equal_sklearn_pairwise(X, Y, gamma, degree, coef0):
    G_xx, G_yx = linear_gram(X), linear_gram(Y, X)
    sq_x, sq_y = row_sq_norms(X), row_sq_norms(Y)
    cases = [
        (Kernel("rbf", gamma=gamma), lambda A, B: rbf_kernel(A, B, gamma=gamma)),
        (
            Kernel("poly", gamma=gamma, degree=degree, coef0=coef0),
            lambda A, B: polynomial_kernel(A, B, degree=degree, gamma=gamma, coef0=coef0),
        ),
        (Kernel("sigmoid", gamma=gamma, coef0=coef0), lambda A, B: sigmoid_kernel(A, B, gamma=gamma, coef0=coef0)),
        (Kernel("linear"), lambda A, B: A @ B.T),
    ]
    for kernel, reference in cases:
        scale = max(1.0, np.abs(reference(X, X)).max())
        np.testing.assert_allclose(kernel.from_linear(G_xx, sq_x), reference(X, X), rtol=1e-9, atol=1e-9 * scale)
        np.testing.assert_allclose(
            kernel.from_linear(G_yx, sq_y, sq_x),
            reference(Y, X),
            rtol=1e-9,
            atol=1e-9 * max(1.0, np.abs(reference(Y, X)).max()),
        )


def test_rbf_gram_has_exact_unit_diagonal():
    X = sparse_rows(15, 8, seed=6)
    K = Kernel("rbf", gamma=0.3).from_linear(linear_gram(X), row_sq_norms(X))
    assert np.all(np.diagonal(K) == 1.0)


def test_svc_kwargs_give_the_same_kernel_as_the_derived_gram():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1, -1)
    for kernel in (Kernel("rbf", gamma=0.5), Kernel("poly", gamma=0.5, degree=2, coef0=1.0), Kernel("linear")):
        on_features = SVC(C=1.0, **kernel.svc_kwargs()).fit(X, y)
        on_gram = SVC(C=1.0, kernel="precomputed").fit(kernel.from_linear(linear_gram(X), row_sq_norms(X)), y)
        np.testing.assert_allclose(
            np.sort(np.abs(on_features.dual_coef_)), np.sort(np.abs(on_gram.dual_coef_)), atol=1e-6
        )


def test_kernel_defaults_ids_and_params():
    assert Kernel("rbf").gamma == 1.0
    poly = Kernel("poly")
    assert (poly.gamma, poly.degree, poly.coef0) == (1.0, 3, 0.0)
    assert Kernel("linear").params() == {"name": "linear", "gamma": None, "degree": None, "coef0": None}
    assert (
        Kernel("rbf", gamma=0.5) == Kernel("rbf", gamma=0.5)
        and len({Kernel("rbf", gamma=0.5), Kernel("rbf", gamma=0.5)}) == 1
    )
    assert Kernel("rbf", gamma=0.5).id != Kernel("rbf", gamma=0.25).id
    assert Kernel("sigmoid", gamma=2, coef0=-1).svc_kwargs() == {"kernel": "sigmoid", "gamma": 2.0, "coef0": -1.0}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(name="rbf", gamma=0), "gamma: must be > 0"),
        (dict(name="rbf", gamma=-1.0), "gamma: must be > 0"),
        (dict(name="rbf", gamma=float("inf")), "gamma: must be a finite number"),
        (dict(name="poly", degree=0), "degree: must be an integer >= 1"),
        (dict(name="poly", degree=2.5), "degree: must be an integer >= 1"),
        (dict(name="sigmoid", coef0="1"), "coef0: must be a finite number"),
        (dict(name="linear", gamma=1.0), "gamma: not a parameter of the linear kernel"),
        (dict(name="rbf", degree=2), "degree: not a parameter of the rbf kernel"),
        (dict(name="laplacian"), "name: must be one of linear, rbf, poly, sigmoid"),
    ],
)
def test_bad_kernels(kwargs, message):
    with pytest.raises(UserError, match=message):
        Kernel(**kwargs)


def test_bad_gram_inputs():
    with pytest.raises(UserError, match="block_rows: must be a positive integer"):
        linear_gram(sparse_rows(3, 3, seed=7), block_rows=0)
    with pytest.raises(UserError, match="sq_norms_rows: expected shape"):
        Kernel("rbf").from_linear(np.eye(3), np.ones(2))
    with pytest.raises(UserError, match="sq_norms_cols: needed for a non-square Gram"):
        Kernel("rbf").from_linear(np.ones((2, 3)), np.ones(2))
