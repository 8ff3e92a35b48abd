"""R_delta^2 = max_i K(x_i, x_i) - min_ij K(x_i, x_j) over a training set (seed Definition 1).

Any upper bound is valid for the xi-alpha estimate; the exact value gives the tightest one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from xialpha.estimators.validation import check_features, check_gram, check_kernel

UNIT_NORM_ATOL = 1e-9


def r_delta_squared(
    *,
    gram=None,
    X=None,
    kernel: str = "linear",
    kernel_params: dict | None = None,
    exact: bool = False,
    block_rows: int = 1024,
) -> float:
    """R_delta^2 of a Gram matrix (n, n), or of features X (n, d) under a named kernel.

    For X without `exact`, closed forms give an upper bound without a scan: unit-norm,
    non-negative rows (TF-IDF with l2 normalisation) have K(x, x) = 1 and K(x, x') >= 0, so
    R_delta^2 <= 1 for the linear kernel and <= 1 - exp(-2 gamma) for RBF. Otherwise rows are
    scanned in blocks of `block_rows`, holding at most block_rows x n kernel values at once.
    """
    if (gram is None) == (X is None):
        raise ValueError("gram, X: give exactly one of a Gram matrix or a feature matrix")
    if gram is not None:
        gram = check_gram(gram)
        return float(np.max(np.diagonal(gram)) - np.min(gram))
    X = check_features(X)
    params = check_kernel(kernel, kernel_params)
    if not exact and kernel in ("linear", "rbf") and _unit_norm_nonnegative(X):
        return 1.0 if kernel == "linear" else float(1.0 - np.exp(-2.0 * params["gamma"]))
    return _scan(X, kernel, params, block_rows)


def _unit_norm_nonnegative(X) -> bool:
    values = X.data if sp.issparse(X) else X
    if values.size and values.min() < 0:
        return False
    sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    return bool(np.allclose(sq_norms, 1.0, rtol=0, atol=UNIT_NORM_ATOL))


def _scan(X, kernel: str, params: dict, block_rows: int) -> float:
    n = X.shape[0]
    max_diag, min_all = -np.inf, np.inf
    for start in range(0, n, block_rows):
        block = pairwise_kernels(X[start : start + block_rows], X, metric=kernel, **params)
        rows = np.arange(block.shape[0])
        max_diag = max(max_diag, float(block[rows, start + rows].max()))
        min_all = min(min_all, float(block.min()))
    return max_diag - min_all
