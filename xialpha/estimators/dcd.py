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
Illinois variant of regula falsi replaces the multiplier steps (see `solve_biased`).

The weight mu. The term mu y y^T is a rank-one part of eigenvalue mu n that every coordinate step
feels, like a large bias feature; the first subproblem, which takes most of a fit's epochs (the
later ones start near their solution), converges in far fewer of them under a small weight. So
it runs with mu_first = mu / 10 (`xialpha.estimators.linear.FIRST_MU_SHARE`), and the rest with mu:
the first one's alpha, with the same decision values, also solves the subproblem of weight mu at
the shift b_1 + v(mu_first) - v(mu), which the multiplier steps continue from. On Reuters' C
paths this halves the epochs per fit (bench/c_path.py). A small weight throughout would not do:
v = mu y^T a then locates the root only as precisely as the subproblems, solved within tol, give
v, too coarsely for y^T a.

Centering. The biased SVM does not change when every x_i moves by the same vector m (w stays, b
absorbs w . m): on y^T a = 0 the objective is the same. Coordinate descent, however, crawls when
all rows share a large common component (all TF-IDF rows are non-negative; data far from the
origin), because that component acts like a huge bias feature. So the solver works on x_i - m,
with m the mean of the rows, without ever forming them: it keeps u = sum a_i y_i x_i (sparse
updates), s = y^T a and u . m, and w . (x_j - m) = u . x_j - s (x_j . m) - u . m + s ||m||^2.

Stopping (per subproblem, as LIBLINEAR): the spread of the projected gradients
max PG - min PG <= tol over all examples, after shrinking (examples at a bound whose gradient
pushes them outward are skipped until the active set converges, then all are checked again).
The outer loop stops when |v| <= tol / 2, so the threshold is known within tol / 2 and every
example's KKT violation stays within tol, comparable to libsvm's stopping rule m(a) - M(a) <= tol.

Indexes. Every array index in the loops is an unsigned np.uintp (cast where it is read: CSR offsets,
feature indices, example numbers). numba wraps a negative signed index around (a sign test and a
conditional add on every access that LLVM cannot prove non-negative); an unsigned one has nothing
to wrap. On Reuters' C paths that is 0.55x the seconds per fit, with
the same arithmetic in the same order (bench/c_path.py, tests/estimators/test_estimators_unchanged.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_OUTER = 200  # subproblems per solve at most (each is warm-started from the last)


@njit(cache=True, nogil=True)
def _row_dot(indptr, indices, data, i, w):
    s = 0.0
    for p in range(np.uintp(indptr[i]), np.uintp(indptr[i + np.uintp(1)])):
        s += data[p] * w[np.uintp(indices[p])]
    return s


@njit(cache=True, nogil=True)
def _subproblem(
    indptr,
    indices,
    data,
    y,
    c,
    q_diag,
    x_m,
    mm,
    alpha,
    u,
    state,
    mu,
    shift,
    order,
    n_active,
    tol,
    max_epochs,
    epochs_done,
):
    """DCD with shrinking on the centered subproblem with threshold shift + v; alpha, u, state in place.

    state: [s = y^T a, u . m, v = mu s]; q_diag (n,) ||x_i - m||^2 + mu; x_m (n,) x_i . m; mm ||m||^2.
    order[:n_active]: the examples that may move (C_i > 0), permuted in place each epoch.
    state[3:6]: the shrinking carried from subproblem to subproblem (the size of the active part of
    order, and the last epoch's largest positive and smallest negative projected gradients), so a
    subproblem after the first starts on the examples the last one left active.
    An example is only ever shrunk while its own condition holds (alpha_i = 0 with a gradient
    above a positive bound, or alpha_i = C_i below a negative one: projected gradient 0), so an
    epoch that starts with every example active checks them all even if it shrinks some.
    Returns (epochs used, examples visited over them, their nonzeros (the row products and updates
    read each visited row once or twice), converged).
    """
    s, um, v = state[0], state[1], state[2]
    active = int(state[3])
    pg_max_old = state[4]
    pg_min_old = state[5]
    epochs = 0
    visited = 0
    visited_nnz = 0
    converged = False
    while epochs_done + epochs < max_epochs:
        epochs += 1
        visited += active
        every = active == n_active  # this epoch checks every example
        pg_max = -np.inf
        pg_min = np.inf
        for k in range(active - 1, 0, -1):  # Fisher-Yates over the active part
            r = np.uintp(np.random.randint(0, k + 1))
            ku = np.uintp(k)
            order[ku], order[r] = order[r], order[ku]
        k = 0
        while k < active:
            i = np.uintp(order[np.uintp(k)])
            visited_nnz += indptr[i + np.uintp(1)] - indptr[i]
            yi = y[i]
            wx = _row_dot(indptr, indices, data, i, u) - s * x_m[i] - um + s * mm
            g = yi * (wx + shift + v) - 1.0
            pg = 0.0
            a = alpha[i]
            if a == 0.0:
                if g > pg_max_old:
                    active -= 1
                    ku, au = np.uintp(k), np.uintp(active)
                    order[ku], order[au] = order[au], order[ku]
                    continue
                if g < 0.0:
                    pg = g
            elif a == c[i]:
                if g < pg_min_old:
                    active -= 1
                    ku, au = np.uintp(k), np.uintp(active)
                    order[ku], order[au] = order[au], order[ku]
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
                new = a - g / q_diag[i]
                if new < 0.0:
                    new = 0.0
                elif new > c[i]:
                    new = c[i]
                delta = (new - a) * yi
                if delta != 0.0:
                    alpha[i] = new
                    for p in range(np.uintp(indptr[i]), np.uintp(indptr[i + np.uintp(1)])):
                        u[np.uintp(indices[p])] += delta * data[p]
                    s += delta
                    um += delta * x_m[i]
                    v += mu * delta
            k += 1
        if active < n_active:  # the shrunk examples' projected gradients are 0
            pg_max = max(pg_max, 0.0)
            pg_min = min(pg_min, 0.0)
        if pg_max - pg_min <= tol:
            if every:
                converged = True
                break
            active = n_active  # converged on the shrunk set: check every example once more
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    state[0], state[1], state[2] = s, um, v
    state[3], state[4], state[5] = active, pg_max_old, pg_min_old
    return epochs, visited, visited_nnz, converged


@njit(cache=True, nogil=True)
def solve_biased(indptr, indices, data, y, c, mean, x_m, centered_sq, alpha, b, mu_first, mu, tol, max_epochs, seed, w):
    """The biased SVM from a feasible start alpha with threshold b; alpha and w in place.

    indptr, indices, data: the CSR arrays of X (n, d); y (n,) float64 -1/+1; c (n,) upper bounds
    C_i (0 removes an example); mean (d,) the centre m; x_m (n,) x_i . m; centered_sq (n,)
    ||x_i - m||^2 (the last three are the same for every fit on X: `linear.RowStatistics`); mu > 0
    the multiplier weight, mu_first in (0, mu] the first subproblem's; tol the stopping tolerance;
    max_epochs a cap on passes over the data, summed over subproblems; w (d,) zeros, out: the
    weight vector X^T (alpha y). Returns (b, epochs, subproblems solved, examples visited, their
    nonzeros, converged): b for the original (uncentered) rows; visited / (epochs n) is the share of the
    examples that shrinking left to visit (counted as the active set at each epoch's start).

    v(shift) = mu y^T a(shift), the constraint's residual at the subproblem's solution, is
    continuous and non-increasing in the shift (the mu term makes y^T a unique), so its root is
    found by multiplier steps shift += v until the root is bracketed, then by the Illinois
    variant of regula falsi inside the bracket.
    """
    np.random.seed(seed)
    n = y.shape[0]
    d = mean.shape[0]
    mm = 0.0
    for f in range(d):
        mm += mean[f] * mean[f]
    q_diag = np.empty(n)
    u = w  # sum_i alpha_i y_i x_i, kept up to date by every step
    s = 0.0
    order = np.empty(n, dtype=np.int64)
    n_active = 0
    for i in range(np.uintp(n)):
        q_diag[i] = centered_sq[i] + mu_first
        if alpha[i] != 0.0:
            delta = alpha[i] * y[i]
            for p in range(np.uintp(indptr[i]), np.uintp(indptr[i + np.uintp(1)])):
                u[np.uintp(indices[p])] += delta * data[p]
            s += delta
        if c[i] > 0.0:
            order[n_active] = i
            n_active += 1
    um = 0.0
    for f in range(d):
        um += u[f] * mean[f]
    w_m = um - s * mm  # w . m with w = u - s m
    weight = mu_first
    state = np.array([s, um, weight * s, n_active, np.inf, -np.inf])
    shift = b + w_m - state[2]  # the start's centered threshold b + w . m, as shift + v
    epochs = 0
    visits = 0
    visits_nnz = 0
    lo_s, lo_v = -np.inf, 0.0  # a shift with v > 0 (the root lies above it)
    hi_s, hi_v = np.inf, 0.0  # a shift with v < 0 (the root lies below it)
    side = 0  # which end moved last, for Illinois' halving
    outer = 0
    converged = False
    while outer < MAX_OUTER:
        outer += 1
        used, visited, visited_nnz, inner_converged = _subproblem(
            indptr,
            indices,
            data,
            y,
            c,
            q_diag,
            x_m,
            mm,
            alpha,
            u,
            state,
            weight,
            shift,
            order,
            n_active,
            tol,
            max_epochs,
            epochs,
        )
        epochs += used
        visits += visited
        visits_nnz += visited_nnz
        if not inner_converged:
            break
        if weight < mu:  # the same alpha and decision values solve the subproblem of weight mu at this shift
            for i in range(n):
                q_diag[i] += mu - weight
            shift += state[2] - mu * state[0]
            state[2] = mu * state[0]
            weight = mu
        v = state[2]
        if abs(v) <= 0.5 * tol:
            converged = True
            break
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
            if hi_s - lo_s <= 1e-14 * (1.0 + abs(shift)):
                break
            new = lo_s + (hi_s - lo_s) * lo_v / (lo_v - hi_v)
            if not lo_s < new < hi_s:
                new = 0.5 * (lo_s + hi_s)
        else:
            new = shift + v  # the method of multipliers' step: b_{k+1} = b_k + mu y^T a
        shift = new
    s, um, v = state[0], state[1], state[2]
    return shift + v - (um - s * mm), epochs, outer, visits, visits_nnz, converged
