"""The hand-written input checks of xialpha/estimators/validation.py before issue 15 replaced parts of
them with scikit-learn's check_array / check_scalar, kept here (only) so that tests can check old and
new give the same result on the project's inputs."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def check_positive(value, name: str) -> float:
    """Return value as a finite float > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
    return v


TOL_RANGE = (1e-12, 1.0)


def check_tolerance(value, name: str = "tol") -> float:
    """Return value as a float in TOL_RANGE: a KKT tolerance below 1e-12 is under the rounding of
    float64 decision values (a solver would never stop), one above 1 accepts any solution."""
    tol = check_positive(value, name)
    low, high = TOL_RANGE
    if not low <= tol <= high:
        raise ValueError(f"{name}: must be between {low:g} and {high:g}, got {value!r}")
    return tol


def check_vector(v, n: int, name: str, *, dtype=np.float64) -> np.ndarray:
    """Return v as a finite 1-d array of length n."""
    arr = np.asarray(v, dtype=dtype)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: must have shape ({n},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    return arr


def check_gram(gram, n: int | None = None, name: str = "gram") -> np.ndarray:
    """Return a square, finite float64 Gram matrix (n x n when n is given)."""
    arr = np.asarray(gram)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name}: must be a square matrix, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name}: has {arr.shape[0]} rows but y has {n} labels")
    arr = np.asarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    return arr


def check_features(X, n: int | None = None, name: str = "X"):
    """Return X (dense float64 or CSR float64) with n rows and only finite values."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"{name}: must be 2-dimensional, got shape {X.shape}")
        values = X
    if n is not None and X.shape[0] != n:
        raise ValueError(f"{name}: has {X.shape[0]} rows but y has {n} labels")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name}: contains NaN or inf")
    return X


def check_kernel(kernel: str, kernel_params: dict | None) -> dict:
    """The kernel check with its own copy of the kernel table, as before issue 15."""
    kernels = ("linear", "rbf", "poly", "sigmoid")
    if kernel not in kernels:
        raise ValueError(f"kernel: must be one of {', '.join(kernels)}, got {kernel!r}")
    params = dict(kernel_params or {})
    allowed = {"linear": set(), "rbf": {"gamma"}, "poly": {"gamma", "degree", "coef0"}, "sigmoid": {"gamma", "coef0"}}
    unknown = set(params) - allowed[kernel]
    if unknown:
        raise ValueError(f"kernel_params: {kernel} kernel takes no {', '.join(sorted(unknown))}")
    if kernel != "linear":
        params["gamma"] = check_positive(params.get("gamma"), "kernel_params.gamma")
    return params
