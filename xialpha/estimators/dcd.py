"""The compiled inner loop of the linear solver: dual coordinate descent for the biased soft-margin SVM.

The dual of the SVM with bias b is

    min_a  1/2 a^T Q a - 1^T a    s.t.  0 <= a_i <= C_i,  y^T a = 0,     Q_ij = y_i y_j x_i . x_j.

Dual coordinate descent (Hsieh et al. 2008, LIBLINEAR's L1-loss solver) updates one a_i at a
time through the explicit weight vector w = sum_i a_i y_i x_i, in O(nnz(x_i)), but it cannot keep
the equality constraint. We keep it with the method of multipliers: for a multiplier b_k solve

    min_a  1/2 a^T (Q + mu y y^T) a - 1^T a + b_k y^T a    s.t.  0 <= a_i <= C_i,

which is DCD on the features with one extra constant feature sqrt(mu) (its weight v = mu y^T a is
the term mu y y^T) and the margins shifted by b_k; then b_{k+1} = b_k + v. The decision function
of the subproblem is w . x + b_k + v, and at the fixed point v = 0: y^T a = 0 and a is the exact
biased SVM's dual solution with threshold b = b_k. Once two shifts bracket the root of v, the
Illinois variant of regula falsi replaces the multiplier steps (see `solve_biased`). The first subproblem (b_0 = 0) is LIBLINEAR's
SVM with a bias feature, so each further step only corrects how its bias was regularised.

Stopping (per subproblem, as LIBLINEAR): the spread of the projected gradients
max PG - min PG <= tol over all examples, after shrinking (examples at a bound whose gradient
pushes them outward are skipped until the active set converges, then all are checked again).
The outer loop stops when |v| <= tol / 2, so the threshold is known within tol / 2 and every
example's KKT violation stays within tol, comparable to libsvm's stopping rule m(a) - M(a) <= tol.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_OUTER = 200  # subproblems per solve at most (each is warm-started from the last)


@njit(cache=True, nogil=True)
def _row_dot(indptr, indices, data, i, w):
    s = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        s += data[p] * w[indices[p]]
    return s


@njit(cache=True, nogil=True)
def _subproblem(indptr, indices, data, y, c, sq_norm, alpha, w, v, mu, shift, order, n_active, tol,
                max_epochs, epochs_done):
    """DCD with shrinking on the subproblem with threshold shift + v; updates alpha, w in place.

    order[:n_active]: the examples that may move (C_i > 0), permuted in place each epoch.
    Returns (v, epochs used, converged).
    """
    active = n_active
    pg_max_old = np.inf
    pg_min_old = -np.inf
    epochs = 0
    while epochs_done + epochs < max_epochs:
        epochs += 1
        pg_max = -np.inf
        pg_min = np.inf
        for s in range(active - 1, 0, -1):  # Fisher-Yates over the active part
            r = np.random.randint(0, s + 1)
            order[s], order[r] = order[r], order[s]
        s = 0
        while s < active:
            i = order[s]
            yi = y[i]
            g = yi * (_row_dot(indptr, indices, data, i, w) + shift + v) - 1.0
            pg = 0.0
            a = alpha[i]
            if a == 0.0:
                if g > pg_max_old:
                    active -= 1
                    order[s], order[active] = order[active], order[s]
                    continue
                if g < 0.0:
                    pg = g
            elif a == c[i]:
                if g < pg_min_old:
                    active -= 1
                    order[s], order[active] = order[active], order[s]
                    continue
                if g > 0.0:
                    pg = g
            else:
                pg = g
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if pg > 1e-12 or pg < -1e-12:
                new = a - g / (sq_norm[i] + mu)
                if new < 0.0:
                    new = 0.0
                elif new > c[i]:
                    new = c[i]
                delta = (new - a) * yi
                if delta != 0.0:
                    alpha[i] = new
                    for p in range(indptr[i], indptr[i + 1]):
                        w[indices[p]] += delta * data[p]
                    v += mu * delta
            s += 1
        if pg_max - pg_min <= tol:
            if active == n_active:
                return v, epochs, True
            active = n_active  # converged on the shrunk set: check every example once more
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    return v, epochs, False


@njit(cache=True, nogil=True)
def solve_biased(indptr, indices, data, y, c, sq_norm, alpha, w, b, mu, tol, max_epochs, seed):
    """The biased SVM from a feasible start (alpha, w = X^T (alpha y), threshold b); alpha, w in place.

    indptr, indices, data: the CSR arrays of X (n, d); y (n,) float64 -1/+1; c (n,) upper bounds
    C_i (0 removes an example); sq_norm (n,) ||x_i||^2; mu > 0 the multiplier weight; tol the
    stopping tolerance; max_epochs a cap on passes over the data, summed over subproblems.
    Returns (b, epochs, subproblems solved, converged).

    v(shift) = mu y^T a(shift), the constraint's residual at the subproblem's solution, is
    continuous and non-increasing in the shift (the mu term makes y^T a unique), so its root is
    found by multiplier steps shift += v until the root is bracketed, then by the Illinois
    variant of regula falsi inside the bracket.
    """
    np.random.seed(seed)
    n = y.shape[0]
    order = np.empty(n, dtype=np.int64)
    n_active = 0
    for i in range(n):
        if c[i] > 0.0:
            order[n_active] = i
            n_active += 1
    v = 0.0
    for i in range(n):
        v += alpha[i] * y[i]
    v *= mu
    shift = b - v  # the start's decision function is w . x + b
    epochs = 0
    lo_s, lo_v = -np.inf, 0.0  # a shift with v > 0 (the root lies above it)
    hi_s, hi_v = np.inf, 0.0  # a shift with v < 0 (the root lies below it)
    side = 0  # which end moved last, for Illinois' halving
    for outer in range(1, MAX_OUTER + 1):
        v, used, converged = _subproblem(indptr, indices, data, y, c, sq_norm, alpha, w, v, mu, shift, order,
                                         n_active, tol, max_epochs, epochs)
        epochs += used
        if not converged:
            return shift + v, epochs, outer, False
        if abs(v) <= 0.5 * tol:
            return shift + v, epochs, outer, True
        if v > 0.0:
            lo_s, lo_v = shift, v
            if side == 1:
                hi_v *= 0.5
            side = 1
        else:
            hi_s, hi_v = shift, v
            if side == -1:
                lo_v *= 0.5
            side = -1
        if np.isfinite(lo_s) and np.isfinite(hi_s):
            new = lo_s + (hi_s - lo_s) * lo_v / (lo_v - hi_v)
            if not lo_s < new < hi_s:
                new = 0.5 * (lo_s + hi_s)
            if hi_s - lo_s <= 1e-14 * (1.0 + abs(shift)):
                return shift + v, epochs, outer, False
        else:
            new = shift + v  # the method of multipliers' step: b_{k+1} = b_k + mu y^T a
        shift = new
    return shift + v, epochs, MAX_OUTER, False


def ensure_compiled() -> None:
    """Compile (or load from numba's cache) the solver on a tiny problem."""
    indptr = np.array([0, 1, 2], dtype=np.int32)
    indices = np.array([0, 0], dtype=np.int32)
    data = np.array([1.0, -1.0])
    y = np.array([1.0, -1.0])
    alpha = np.zeros(2)
    w = np.zeros(1)
    solve_biased(indptr, indices, data, y, np.ones(2), np.ones(2), alpha, w, 0.0, 1.0, 1e-3, 100, 0)
