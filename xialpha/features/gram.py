"""Linear Gram matrices X·Yᵀ computed in row blocks, squared row norms, and the memory check made
before a Gram matrix is allocated.

One linear Gram per preprocessing variant serves every category, C value and dot-product kernel
(`Kernel.from_linear` derives RBF/poly/sigmoid Grams from it). For sparse X, block products
`X[i:i+b] @ X[i:].T` fill the upper triangle and are mirrored: about half the work of
`(X @ X.T).toarray()`, and no n x n sparse intermediate (bench/preprocess.py compares them).
scipy.sparse is imported where a matrix is handled: the spec reads this module's limit.
"""

from __future__ import annotations

import numpy as np

from xialpha.errors import DataFailure, UserError
from xialpha.features.kernels import DEFAULT_GRAM_LIMIT_BYTES

DEFAULT_BLOCK_ROWS = 512


class GramTooLarge(DataFailure):
    """A Gram matrix would need more memory than the configured limit (a sweep stores the
    configurations that need it as failed)."""


def gram_nbytes(n_rows: int, n_cols: int) -> int:
    """Bytes of a dense float64 Gram matrix of shape (n_rows, n_cols)."""
    return 8 * int(n_rows) * int(n_cols)


def check_gram_fits(n_rows: int, n_cols: int, limit_bytes: int | None) -> None:
    """Raise GramTooLarge when an (n_rows, n_cols) float64 Gram needs more than `limit_bytes` (None: no limit)."""
    if limit_bytes is None:
        return
    needed = gram_nbytes(n_rows, n_cols)
    if needed > limit_bytes:
        raise GramTooLarge(
            f"Gram matrix {n_rows:,} x {n_cols:,} (float64) needs {_size(needed)}, "
            f"more than the limit of {_size(limit_bytes)} (limit_bytes); "
            "raise the limit or use fewer training documents"
        )


def row_sq_norms(X) -> np.ndarray:
    """Squared Euclidean norm of each row of X (sparse or dense, shape (n, d)): float64 array (n,)."""
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    X = np.asarray(X, dtype=np.float64)
    return np.einsum("ij,ij->i", X, X)


def linear_gram(
    X, Y=None, *, block_rows: int = DEFAULT_BLOCK_ROWS, limit_bytes: int | None = DEFAULT_GRAM_LIMIT_BYTES
) -> np.ndarray:
    """Dense float64 X·Yᵀ of shape (n_X, n_Y) (Y=None: X·Xᵀ, exactly symmetric), `block_rows` rows at a time.

    X, Y: sparse or dense, shape (n, d) with the same d. Refuses with GramTooLarge before allocating
    more than `limit_bytes`.
    """
    import scipy.sparse as sp

    if isinstance(block_rows, bool) or not isinstance(block_rows, (int, np.integer)) or block_rows < 1:
        raise UserError(f"block_rows: must be a positive integer, got {block_rows!r}")
    X = _as_matrix(X, "X")
    symmetric = Y is None
    Y = X if symmetric else _as_matrix(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise UserError(f"Y: has {Y.shape[1]} features, X has {X.shape[1]}")
    check_gram_fits(X.shape[0], Y.shape[0], limit_bytes)
    out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
    if symmetric:
        for start in range(0, X.shape[0], block_rows):
            stop = start + block_rows
            block = _dense(X[start:stop] @ X[start:].T)
            out[start:stop, start:] = block
            out[stop:, start:stop] = block[:, stop - start :].T
    else:
        Y_t = Y.T.tocsr() if sp.issparse(Y) else Y.T
        for start in range(0, X.shape[0], block_rows):
            out[start : start + block_rows] = _dense(X[start : start + block_rows] @ Y_t)
    return out


def _as_matrix(M, name: str):
    import scipy.sparse as sp

    if sp.issparse(M):
        return sp.csr_matrix(M, dtype=np.float64)
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2:
        raise UserError(f"{name}: expected a 2-d matrix, got shape {M.shape}")
    return M


def _dense(product) -> np.ndarray:
    return np.asarray(product) if isinstance(product, np.ndarray) else product.toarray()


def _size(n_bytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes} bytes"
