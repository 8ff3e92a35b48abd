"""Input checks shared by the estimators: each failure is a one-line ValueError naming the argument.

Hand-written, not scikit-learn's check_array / check_scalar (issue 47.2): importing scikit-learn,
with the scipy.stats and pandas it imports, cost every sweep's workers 0.8-1 s at their start for
these checks alone. They refuse what those refused, with the same messages: a value that is not a
real number, arrays that do not convert to float64 (text, complex values), NaN or inf. Shapes and
the -1/+1 labels are checked where the message can say which argument disagrees with which.
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

from xialpha.errors import DataFailure, one_of
from xialpha.estimators import KERNEL_PARAMETERS, LINEAR, TOL_RANGE


@contextmanager
def _named(name: str):
    """Turn a ValueError/TypeError of a conversion into one line starting with `name:`."""
    try:
        yield
    except (TypeError, ValueError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(f"{name}: {message}") from None


def _float64(values, name: str):
    """`values` (an array or a scipy.sparse matrix) as float64, not copied when it is float64 already;
    ValueError naming `name` for complex values or values that do not convert (text)."""
    if np.iscomplexobj(values):
        raise ValueError(f"{name}: Complex data not supported")
    if values.dtype == np.float64:
        return values
    with _named(name):
        return values.astype(np.float64) if sp.issparse(values) else np.asarray(values, dtype=np.float64)


def _finite(values: np.ndarray, name: str) -> None:
    """ValueError naming `name` where float `values` hold NaN or inf: one sum over them first (no
    temporary as large as they are), element by element only where the sum is not finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(values.sum()) or np.isfinite(values).all():
            return
    raise ValueError(f"{name}: contains NaN or inf")


def check_labels(y, name: str = "y") -> np.ndarray:
    """Return y as an int8 vector of -1/+1; both classes must be present.

    Hand-written on purpose: scikit-learn's column_or_1d would accept an (n, 1) column with a
    warning, and neither it nor type_of_target checks for exactly -1/+1 or says which label at
    which index is wrong; the int8 result is what the estimators index with.
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name}: must be 1-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: is empty")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    bad = ~np.isin(arr, (-1, 1))
    if bad.any():
        raise ValueError(
            f"{name}: labels must be -1 or +1, found {arr[bad][0]!r} at index {int(np.flatnonzero(bad)[0])}"
        )
    out = arr.astype(np.int8)
    if np.all(out == out[0]):
        raise DataFailure(f"{name}: has a single class ({int(out[0]):+d}); an SVM needs both -1 and +1")
    return out


def check_positive(value, name: str) -> float:
    """Return value (a real number: Python or NumPy int/float, not text nor an array) as a finite
    float > 0."""
    if not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: must be a number, got {value!r}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
    return float(value)


def check_tolerance(value, name: str = "tol") -> float:
    """Return value as a float in TOL_RANGE: a KKT tolerance below 1e-12 is under the rounding of
    float64 decision values (a solver would never stop), one above 1 accepts any solution."""
    tol = check_positive(value, name)
    low, high = TOL_RANGE
    if not low <= tol <= high:
        raise ValueError(f"{name}: must be between {low:g} and {high:g}, got {value!r}")
    return tol


def check_vector(v, n: int, name: str, *, dtype=np.float64) -> np.ndarray:
    """Return v as a finite 1-d array of length n (dtype as given)."""
    arr = np.asarray(v, dtype=dtype)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: must have shape ({n},), got {arr.shape}")
    if arr.dtype.kind == "f":
        _finite(arr, name)
    return arr


def check_gram(gram, n: int | None = None, name: str = "gram") -> np.ndarray:
    """Return a square, finite float64 Gram matrix (n x n when n is given); no copy when it is one."""
    arr = np.asarray(gram)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name}: must be a square matrix, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name}: has {arr.shape[0]} rows but y has {n} labels")
    arr = _float64(arr, name)
    _finite(arr, name)
    return arr


def check_features(X, n: int | None = None, name: str = "X"):
    """Return X (n, d) as dense float64 or a float64 scipy.sparse csr_matrix, only finite values; no
    copy when it is one already.

    Other sparse formats are converted to CSR, and a csr_array comes back as csr_matrix (an array's
    `*` multiplies elementwise); explicit zeros are kept, as before.
    """
    if not sp.issparse(X):
        X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name}: must be 2-dimensional, got shape {X.shape}")
    if n is not None and X.shape[0] != n:
        raise ValueError(f"{name}: has {X.shape[0]} rows but y has {n} labels")
    if not sp.issparse(X):
        X = _float64(X, name)
        _finite(X, name)
        return X
    X = _float64(X if X.format == "csr" else X.asformat("csr"), name)
    _finite(X.data, name)
    return X if isinstance(X, sp.csr_matrix) else sp.csr_matrix(X)


def check_kernel(kernel: str, kernel_params: dict | None) -> dict:
    """Validate a named kernel (KERNEL_PARAMETERS) and its parameters; non-linear kernels need
    an explicit gamma. Returns the parameters as scikit-learn's SVC and pairwise_kernels take them.
    """
    if kernel not in KERNEL_PARAMETERS:
        raise ValueError(f"kernel: {one_of(kernel, KERNEL_PARAMETERS)}")
    params = dict(kernel_params or {})
    unknown = set(params) - set(KERNEL_PARAMETERS[kernel])
    if unknown:
        raise ValueError(f"kernel_params: {kernel} kernel takes no {', '.join(sorted(unknown))}")
    if kernel != LINEAR:
        params["gamma"] = check_positive(params.get("gamma"), "kernel_params.gamma")
    return params
