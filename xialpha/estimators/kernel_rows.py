"""Blocks of a training kernel matrix, read from a Gram matrix or computed from sparse features.

The span and extended xi-alpha estimators read only some rows and columns of the kernel matrix
(support vectors, flagged examples). On the Gram path those are slices of the stored (n, n)
matrix; on the linear path they are products X[rows] X[cols]^T of the CSR training features; for
features under a named non-linear kernel (`NamedKernelRows`) they are computed by scikit-learn's
`pairwise_kernels`. Apart from a Gram matrix, no n x n matrix ever exists.

The linear path's dense blocks (`gram_block`, the span's and xa_ext's blocks) are the sum of two
products. Text features are skewed: on the support vectors of Reuters and of a 10^5-document corpus
the 50 most frequent features carry 70-89% of the pairs of rows that share a feature. Those frequent
features (`dense_features`) go to one BLAS product of their dense columns (dsyrk / dgemm: about
0.1 ns per multiply-add on one core); the others to compiled sparse kernels that add the products
straight into the dense (len(rows), len(cols)) float64 block (about 4-8 ns per pair: every pair
touches a scattered entry of the block), never building scipy's sparse result first:

- symmetric (rows is cols): per feature, every pair of rows that share it, the upper triangle only,
  then mirrored: sum over features of m_f (m_f + 1) / 2 multiply-adds, m_f = rows having feature f;
- rectangular: rows in CSR, cols in CSC (per feature the cols having it); for each row's feature,
  every col having it: sum over features of m_f(rows) x m_f(cols) multiply-adds.

A feature is dense when its pairs m_f(rows) m_f(cols) cost more in the sparse kernel than its
column costs in the dense product, len(rows) len(cols) multiply-adds (DENSE_PAIR_RATIO: the measured
ratio of the two costs per entry). Each entry is the exact dot product up to rounding; which
features are summed in which order depends on the rows and cols, so a block agrees with another
block's copy of an entry to rounding, not bit for bit. Indexes in the kernels are unsigned (numba
wraps signed ones around on every access: see `xialpha.estimators.dcd`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg.blas
import scipy.sparse as sp
from numba import njit

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
        from sklearn.metrics.pairwise import pairwise_kernels  # here: a linear sweep's workers never import it

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


# A feature goes to the dense product when its sparse pairs cost more than its dense column:
# m_f(rows) m_f(cols) >= DENSE_PAIR_RATIO len(rows) len(cols). The ratio of the two costs per entry
# (dense multiply-add / sparse pair), measured on the span's blocks of Reuters and of 10^5 documents
# (bench/overhead.py), one core: 0.1-0.2 ns against 4-8 ns.
DENSE_PAIR_RATIO = 0.03


def dense_features(row_counts: np.ndarray, col_counts: np.ndarray, n_rows: int, n_cols: int) -> np.ndarray:
    """(k,) the features (ascending) whose pairs cost more in the sparse kernels than in the dense
    product; row_counts, col_counts: (d,) the rows and the cols having each feature. None when their
    pairs are fewer than the nonzeros of rows and cols, which forming the dense columns reads."""
    pairs = row_counts.astype(np.float64) * col_counts
    dense = (pairs > 0) & (pairs >= DENSE_PAIR_RATIO * float(n_rows) * float(n_cols))
    if pairs[dense].sum() < float(row_counts.sum()) + float(col_counts.sum()):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(dense)


def gram_block(X, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """X[rows] X[cols]^T as a new float64 (len(rows), len(cols)) array; X: (n, d) CSR features."""
    d = X.shape[1]
    if rows is cols or (rows.shape == cols.shape and np.array_equal(rows, cols)):
        csc = _csc(X[rows])
        counts = np.diff(csc.indptr)
        dense = dense_features(counts, counts, rows.size, rows.size)
        if dense.size:  # dsyrk on D^T (Fortran (k, n)): D D^T, its upper triangle in C order
            gram = scipy.linalg.blas.dsyrk(1.0, _dense_columns(csc, dense).T, trans=1, lower=1).T
        else:
            gram = np.zeros((rows.size, rows.size))
        _symmetric(csc.indptr, csc.indices, csc.data, _mask(dense, d), gram)
        return gram
    part = X[rows]
    csc = _csc(X[cols])
    dense = dense_features(np.bincount(part.indices, minlength=d), np.diff(csc.indptr), rows.size, cols.size)
    if dense.size:
        block = _row_columns(part, dense) @ _dense_columns(csc, dense).T
    else:
        block = np.zeros((rows.size, cols.size))
    _rectangular(
        part.indptr,
        part.indices,
        np.asarray(part.data, dtype=np.float64),
        csc.indptr,
        csc.indices,
        csc.data,
        _mask(dense, d),
        block,
    )
    return block


def _dense_columns(csc: sp.csc_matrix, features: np.ndarray) -> np.ndarray:
    """(n, k) C-ordered: the columns `features` of the (n, d) CSC matrix, dense."""
    return np.ascontiguousarray(csc[:, features].toarray())


def _row_columns(csr: sp.csr_matrix, features: np.ndarray) -> np.ndarray:
    """(n, k) C-ordered: the columns `features` of the (n, d) CSR matrix, dense."""
    position = np.full(csr.shape[1], -1, dtype=np.int64)
    position[features] = np.arange(features.size)
    out = np.zeros((csr.shape[0], features.size))
    _scatter_columns(csr.indptr, csr.indices, np.asarray(csr.data, dtype=np.float64), position, out)
    return out


def _mask(features: np.ndarray, d: int) -> np.ndarray:
    mask = np.zeros(d, dtype=np.bool_)
    mask[features] = True
    return mask


@njit(cache=True, nogil=True)
def _symmetric(indptr, indices, data, skip, gram):
    """Add to the (n, n) gram the products of the features not in skip ((d,) bool), upper triangle,
    then mirror the upper triangle onto the lower; the n rows are given by their transpose (CSC: one
    column per feature, sorted row indices)."""
    n = gram.shape[0]
    for f in range(np.uintp(indptr.shape[0] - 1)):
        if skip[f]:
            continue
        end = np.uintp(indptr[f + np.uintp(1)])
        for a in range(np.uintp(indptr[f]), end):
            i = np.uintp(indices[a])
            value = data[a]
            for b in range(a, end):
                gram[i, np.uintp(indices[b])] += value * data[b]
    for i in range(np.uintp(n)):
        for j in range(i):
            gram[i, j] = gram[j, i]


@njit(cache=True, nogil=True)
def _rectangular(r_indptr, r_indices, r_data, c_indptr, c_indices, c_data, skip, block):
    """Add to the (n_rows, n_cols) block the products of the features not in skip ((d,) bool): rows as
    CSR (feature indices), cols as CSC over the same features."""
    for i in range(np.uintp(block.shape[0])):
        for p in range(np.uintp(r_indptr[i]), np.uintp(r_indptr[i + np.uintp(1)])):
            f = np.uintp(r_indices[p])
            if skip[f]:
                continue
            value = r_data[p]
            for q in range(np.uintp(c_indptr[f]), np.uintp(c_indptr[f + np.uintp(1)])):
                block[i, np.uintp(c_indices[q])] += value * c_data[q]


@njit(cache=True, nogil=True)
def _scatter_columns(indptr, indices, data, position, out):
    """out[i, position[f]] = the CSR rows' value of feature f wherever position[f] >= 0."""
    for i in range(np.uintp(out.shape[0])):
        for p in range(np.uintp(indptr[i]), np.uintp(indptr[i + np.uintp(1)])):
            column = position[np.uintp(indices[p])]
            if column >= 0:
                out[i, np.uintp(column)] = data[p]


def _csc(part) -> sp.csc_matrix:
    csc = sp.csc_matrix(part, dtype=np.float64)
    if not csc.has_sorted_indices:
        csc.sort_indices()
    return csc
