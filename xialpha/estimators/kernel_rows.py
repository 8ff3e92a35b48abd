"""Blocks of a training kernel matrix, read from a Gram matrix or computed from sparse features.

The span and extended xi-alpha estimators read only some rows and columns of the kernel matrix
(support vectors, flagged examples). On the Gram path those are slices of the stored (n, n)
matrix; on the linear path they are products X[rows] X[cols]^T of the CSR training features; for
features under a named non-linear kernel (`NamedKernelRows`) they are computed by scikit-learn's
`pairwise_kernels`. Apart from a Gram matrix, no n x n matrix ever exists.

The linear path's dense blocks are compiled (`gram_block`, the span's and xa_ext's blocks).
scipy's sparse product builds a sparse result (index arrays for every one of its nearly dense
entries) before it is densified; these kernels add the products straight into the dense
(len(rows), len(cols)) float64 block, about three times faster on Reuters' support vectors, with
the same sums in the same order per entry as a term-by-term dot product (exact up to rounding).

- symmetric (rows is cols): per feature, every pair of rows that share it, the upper triangle only,
  then mirrored: sum over features of m_f (m_f + 1) / 2 multiply-adds, m_f = rows having feature f;
- rectangular: rows in CSR, cols in CSC (per feature the cols having it); for each row's feature,
  every col having it: sum over features of m_f(rows) x m_f(cols) multiply-adds.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.metrics.pairwise import pairwise_kernels

from xialpha.errors import UserError


class GramRows:
    """Kernel blocks read from a precomputed (n, n) Gram matrix."""

    def __init__(self, gram, n: int):
        gram = np.asarray(gram)
        if gram.shape != (n, n):
            raise UserError(f"gram: must have shape ({n}, {n}) like the fit's labels, got {gram.shape}")
        self.gram = gram

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """K[rows][:, cols] as a new float64 (len(rows), len(cols)) array."""
        return _finite(
            np.asarray(self.gram[np.ix_(rows, cols)], dtype=np.float64), "among the support vectors' kernel values"
        )

    def diagonal(self, idx: np.ndarray) -> np.ndarray:
        """K[idx, idx] as float64 (len(idx),)."""
        return _finite(np.asarray(self.gram[idx, idx], dtype=np.float64), "on the diagonal")


class FeatureRows:
    """Linear-kernel blocks X[rows] X[cols]^T of (n, d) CSR features (values already checked finite),
    computed by `gram_block` straight into a dense block."""

    def __init__(self, X):
        self.X = sp.csr_matrix(X)

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return gram_block(self.X, np.asarray(rows), np.asarray(cols))

    def diagonal(self, idx: np.ndarray) -> np.ndarray:
        part = self.X[idx]
        return np.asarray(part.multiply(part).sum(axis=1), dtype=np.float64).ravel()


class NamedKernelRows:
    """Blocks K(X[rows], X[cols]) of (n, d) features under a named kernel ("rbf", "poly", "sigmoid")
    with its parameters as `pairwise_kernels` takes them (values already checked finite)."""

    DIAGONAL_BLOCK = 256  # rows whose kernel values with each other give the diagonal at once

    def __init__(self, X, kernel: str, kernel_params: dict):
        self.X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        self.kernel, self.params = kernel, dict(kernel_params)

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.asarray(
            pairwise_kernels(self.X[rows], self.X[cols], metric=self.kernel, **self.params), dtype=np.float64
        )

    def diagonal(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        parts = [
            np.diagonal(self.block(idx[start : start + self.DIAGONAL_BLOCK], idx[start : start + self.DIAGONAL_BLOCK]))
            for start in range(0, idx.size, self.DIAGONAL_BLOCK)
        ]
        return np.concatenate(parts) if parts else np.zeros(0)


def kernel_rows(fit, gram=None):
    """The kernel of `fit`: its (n, n) `gram` if given (or a GramRows, FeatureRows or
    NamedKernelRows, passed through), else the linear path's features fit.X."""
    if isinstance(gram, (GramRows, FeatureRows, NamedKernelRows)):
        return gram
    if gram is not None:
        return GramRows(gram, fit.y.shape[0])
    if getattr(fit, "X", None) is None:
        raise UserError("gram: is required for a fit that was not trained on the linear path")
    return FeatureRows(fit.X)


def _finite(values: np.ndarray, where: str) -> np.ndarray:
    if not np.isfinite(values).all():
        raise UserError(f"gram: contains NaN or inf {where}")
    return values


@njit(cache=True, nogil=True)
def _symmetric(indptr, indices, data, n):
    """(n, n) Gram of the n rows whose transpose (CSC: one column per feature, sorted row indices) is given."""
    gram = np.zeros((n, n))
    for f in range(indptr.shape[0] - 1):
        end = indptr[f + 1]
        for a in range(indptr[f], end):
            i = indices[a]
            value = data[a]
            for b in range(a, end):
                gram[i, indices[b]] += value * data[b]
    for i in range(n):
        for j in range(i):
            gram[i, j] = gram[j, i]
    return gram


@njit(cache=True, nogil=True)
def _rectangular(r_indptr, r_indices, r_data, c_indptr, c_indices, c_data, n_cols):
    """(n_rows, n_cols) block: rows as CSR (feature indices), cols as CSC over the same features."""
    n_rows = r_indptr.shape[0] - 1
    block = np.zeros((n_rows, n_cols))
    for i in range(n_rows):
        for p in range(r_indptr[i], r_indptr[i + 1]):
            f = r_indices[p]
            value = r_data[p]
            for q in range(c_indptr[f], c_indptr[f + 1]):
                block[i, c_indices[q]] += value * c_data[q]
    return block


def gram_block(X, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """X[rows] X[cols]^T as a new float64 (len(rows), len(cols)) array; X: (n, d) CSR features."""
    if rows is cols or (rows.shape == cols.shape and np.array_equal(rows, cols)):
        csc = _csc(X[rows])
        return _symmetric(csc.indptr, csc.indices, csc.data, rows.shape[0])
    part = X[rows]
    csc = _csc(X[cols])
    return _rectangular(
        part.indptr,
        part.indices,
        np.asarray(part.data, dtype=np.float64),
        csc.indptr,
        csc.indices,
        csc.data,
        cols.shape[0],
    )


def _csc(part) -> sp.csc_matrix:
    csc = sp.csc_matrix(part, dtype=np.float64)
    if not csc.has_sorted_indices:
        csc.sort_indices()
    return csc
