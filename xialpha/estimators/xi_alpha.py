"""The xi-alpha estimators of error, recall, precision and F1 (Joachims 2000, Definitions 1-5), and
the radius R_delta^2 they read.

R_delta^2 = max_i K(x_i, x_i) - min_ij K(x_i, x_j) over a training set (seed Definition 1). Any
upper bound is valid for the xi-alpha estimate; the exact value gives the tightest one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xialpha.estimators import DEFAULT_RHO, LINEAR
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.validation import (
    check_features,
    check_gram,
    check_kernel,
    check_labels,
    check_positive,
    check_vector,
)

UNIT_NORM_ATOL = 1e-9
SCAN_MAX_ROWS = 20_000  # larger feature matrices with negative values get the Cauchy-Schwarz bound


def xi_alpha_indicator(alpha, xi, r_delta2: float, rho: float = DEFAULT_RHO) -> np.ndarray:
    """(n,) bool: rho * alpha_i * R_delta^2 + xi_i >= 1, the examples that may be LOO errors."""
    return rho * np.asarray(alpha) * r_delta2 + np.asarray(xi) >= 1.0


def xi_alpha(alpha, xi, y, r_delta2: float, rho: float = DEFAULT_RHO) -> Estimate:
    """The xi-alpha estimate from one SVM solution.

    alpha, xi, y: (n,) dual variables, slacks and -1/+1 labels of the training set;
    r_delta2: R_delta^2 = max_i K(x_i, x_i) - min_ij K(x_i, x_j) or an upper bound on it;
    rho: 2 gives Joachims 2000's Lemma 1 bound on the LOO error of stable solutions (it can fail with a cost
    factor j != 1 or an unstable left-out solution: see `loo`), 1 the recommended estimate.
    d, d_pos, d_neg count the indicator over all, positive and negative examples; the metrics
    follow `xialpha.estimators.metrics` (NaN where a denominator is zero).
    """
    y = check_labels(y)
    n = y.shape[0]
    alpha = check_vector(alpha, n, "alpha")
    xi = check_vector(xi, n, "xi")
    if (alpha < 0).any():
        raise ValueError("alpha: must be >= 0")
    if (xi < 0).any():
        raise ValueError("xi: must be >= 0")
    r_delta2 = check_positive(r_delta2, "r_delta2")
    rho = check_positive(rho, "rho")
    return Estimate.from_indicator("xa", y, xi_alpha_indicator(alpha, xi, r_delta2, rho))


def r_delta_squared(
    *,
    gram=None,
    X=None,
    kernel: str = LINEAR,
    kernel_params: dict | None = None,
    exact: bool = False,
    block_rows: int = 1024,
) -> float:
    """R_delta^2 of a Gram matrix (n, n), or of features X (n, d) under a named kernel.

    For X without `exact`, closed forms give an upper bound in O(nnz(X)), without a scan:
    non-negative rows (TF, TF-IDF) have K(x, x') >= 0, so R_delta^2 <= max_i ||x_i||^2 for the
    linear kernel (= 1 for l2-normalised rows; exact as soon as two rows share no term) and, for
    unit-norm rows, <= 1 - exp(-2 gamma) for RBF. Rows with negative values under the linear kernel
    give max K_ii - min K_ij <= 2 max_i ||x_i||^2 (Cauchy-Schwarz) when n > SCAN_MAX_ROWS, where
    the exact scan (O(n^2 d)) would not finish. Otherwise rows are scanned in blocks of
    `block_rows`, holding at most block_rows x n kernel values at once.
    """
    if (gram is None) == (X is None):
        raise ValueError("gram, X: give exactly one of a Gram matrix or a feature matrix")
    if gram is not None:
        gram = check_gram(gram)
        return float(np.max(np.diagonal(gram)) - np.min(gram))
    X = check_features(X)
    params = check_kernel(kernel, kernel_params)
    if not exact:
        values = X.data if sp.issparse(X) else X
        nonnegative = not values.size or values.min() >= 0
        sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        largest = float(sq_norms.max()) if sq_norms.size else 0.0
        if kernel == LINEAR and nonnegative:
            return 1.0 if np.allclose(sq_norms, 1.0, rtol=0, atol=UNIT_NORM_ATOL) else largest
        if kernel == "rbf" and nonnegative and np.allclose(sq_norms, 1.0, rtol=0, atol=UNIT_NORM_ATOL):
            return float(1.0 - np.exp(-2.0 * params["gamma"]))
        if kernel == LINEAR and X.shape[0] > SCAN_MAX_ROWS:
            return 2.0 * largest
    return _scan(X, kernel, params, block_rows)


def _scan(X, kernel: str, params: dict, block_rows: int) -> float:
    from sklearn.metrics.pairwise import pairwise_kernels  # here: a linear sweep's workers never import it

    n = X.shape[0]
    max_diag, min_all = -np.inf, np.inf
    for start in range(0, n, block_rows):
        block = pairwise_kernels(X[start : start + block_rows], X, metric=kernel, **params)
        rows = np.arange(block.shape[0])
        max_diag = max(max_diag, float(block[rows, start + rows].max()))
        min_all = min(min_all, float(block.min()))
    return max_diag - min_all
