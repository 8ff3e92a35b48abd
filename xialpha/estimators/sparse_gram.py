"""Dense linear-kernel blocks X[rows] X[cols]^T of CSR features, compiled (the span's and xa_ext's blocks).

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
