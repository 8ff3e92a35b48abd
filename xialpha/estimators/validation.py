"""Input checks shared by the estimators: each failure is a ValueError naming the argument."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def check_labels(y, name: str = "y") -> np.ndarray:
    """Return y as an int8 vector of -1/+1; both classes must be present."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name}: must be 1-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: is empty")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    bad = ~np.isin(arr, (-1, 1))
    if bad.any():
        raise ValueError(f"{name}: labels must be -1 or +1, found {arr[bad][0]!r} at index {int(np.flatnonzero(bad)[0])}")
    out = arr.astype(np.int8)
    if np.all(out == out[0]):
        raise ValueError(f"{name}: has a single class ({int(out[0]):+d}); an SVM needs both -1 and +1")
    return out


def check_positive(value, name: str) -> float:
    """Return value as a finite float > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
    return v


TOL_RANGE = (1e-12, 1.0)  # stopping tolerances a solver in float64 can reach, in margin units


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


def check_training_data(svm_args: dict, n: int) -> dict:
    """svm_args with its gram (n, n) or X (n, d) checked once, for estimators that then retrain
    many times with check_input=False; they set the sample weights themselves."""
    if "sample_weight" in svm_args:
        raise ValueError("sample_weight: not accepted here; this estimator sets the weights itself")
    if (svm_args.get("gram") is None) == (svm_args.get("X") is None):
        raise ValueError("gram, X: give exactly one of a Gram matrix or a feature matrix")
    if svm_args.get("gram") is not None:
        return {**svm_args, "gram": check_gram(svm_args["gram"], n)}
    return {**svm_args, "X": check_features(svm_args["X"], n)}


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


KERNELS = ("linear", "rbf", "poly", "sigmoid")


def check_kernel(kernel: str, kernel_params: dict | None) -> dict:
    """Validate a named kernel and its parameters; non-linear kernels need an explicit gamma.

    Returns the parameters as scikit-learn's SVC and pairwise_kernels take them.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel: must be one of {', '.join(KERNELS)}, got {kernel!r}")
    params = dict(kernel_params or {})
    allowed = {"linear": set(), "rbf": {"gamma"}, "poly": {"gamma", "degree", "coef0"}, "sigmoid": {"gamma", "coef0"}}
    unknown = set(params) - allowed[kernel]
    if unknown:
        raise ValueError(f"kernel_params: {kernel} kernel takes no {', '.join(sorted(unknown))}")
    if kernel != "linear":
        params["gamma"] = check_positive(params.get("gamma"), "kernel_params.gamma")
    return params
