"""The xi-alpha estimators of error, recall, precision and F1 (Joachims 2000, Definitions 1-5)."""

from __future__ import annotations

import numpy as np

from xialpha.estimators.metrics import Estimate
from xialpha.estimators.validation import check_labels, check_positive, check_vector


def xi_alpha_indicator(alpha, xi, r_delta2: float, rho: float = 1.0) -> np.ndarray:
    """(n,) bool: rho * alpha_i * R_delta^2 + xi_i >= 1, the examples that may be LOO errors."""
    return rho * np.asarray(alpha) * r_delta2 + np.asarray(xi) >= 1.0


def xi_alpha(alpha, xi, y, r_delta2: float, rho: float = 1.0) -> Estimate:
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
