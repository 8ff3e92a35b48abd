"""Span calls S^2 >= t decided by certified bounds from an iterative solve, through products with K_UU.

For a point x (kernel column k = K_{U,x}, k_xx = K(x, x)) and the unbounded support vectors U
(without x itself when x is one of them: its entry of lambda is fixed at 0), the ridged squared span
is the value of the convex quadratic programme

    S^2 = min_lambda f(lambda),  f(lambda) = ||x - sum_j lambda_j x_j||^2 + eps ||lambda||^2
        = k_xx - 2 k^T lambda + lambda^T A lambda,  A = K_UU + eps I,  subject to 1^T lambda = 1

over the free entries (`xialpha.estimators.span` computes the same value by a Cholesky factorisation).

Upper bound: every feasible lambda gives S^2 <= f(lambda).
Lower bound (weak duality): with r = x - sum_j lambda_j x_j the Lagrangian of the programme, with
multipliers u (of r's definition) and m (of 1^T lambda = 1), minimised over r and lambda gives the dual
function g(u, m) = 2 u.x + 2m - ||u||^2 - ||X_U u + m 1||^2 / eps (the norm over the free entries),
and S^2 >= g(u, m) for every u, m. Taking u = s r (s a scalar) keeps g computable from products with
K_UU only: with a = r.x = k_xx - k^T lambda, b = ||r||^2 = f(lambda) - eps ||lambda||^2 and
h = X_U r = k - K_UU lambda (free entries, n_f of them, mean h_bar), the maximum over s and m is

    S^2 >= L(lambda) = (a - h_bar)^2 / (b + ||h - h_bar||^2 / eps) + eps / n_f.

At the minimiser h - h_bar = eps (lambda - lambda_bar), and L equals f: the gap f - L closes as the
projected gradient P(A lambda - k) goes to 0 (P: the projection onto 1^T v = 0 over the free entries).

The solve is projected conjugate gradients on the free entries, started from the uniform lambda (the
hull's centroid), for a block of points at once (one product K_UU V per iteration for the whole block:
O(nnz_U) per column on the linear path). After every iteration, where the bounds (from the recursively
updated A lambda) look decisive, A lambda is recomputed by a fresh product and the bounds are evaluated
again; a call is made only on the fresh ones:
  - f(lambda) + slack < t (1 - BOUND_RTOL): S^2 < t (value reported: f(lambda));
  - L(lambda) - slack >= t (1 + BOUND_RTOL): S^2 >= t (value reported: L(lambda));
  - f - L <= 2 slack + BOUND_RTOL t (converged to rounding level, undecided): the call is f(lambda) >= t,
    as the full computation decides such a tie by its own rounded value;
with slack = ROUNDING_RTOL x (k_xx + 2 |k|.|lambda| + |lambda|.|A lambda|), a bound on the rounding of
the sums. Points not decided after max_iterations are returned as undecided (the caller computes them
otherwise). A non-positive curvature (an indefinite kernel) also leaves the point undecided.

Measured at 10^5 documents (bench/overhead.py's fits at C = 5, n_U 2,300-3,100): calls "S^2 < t" take
3-4 products per point on average (p90 7-9), calls "S^2 >= t" 52-74 (p90 57-82): the dual bound's gap
is ||P(A lambda - k)||^2 / eps, so these need the projected residual below sqrt(eps (S^2 - t)); they
are ~90% of the work. No preconditioner: on unit-norm features (TF-IDF rows) diag(K_UU) = 1, so a
Jacobi one is the identity, and the ridge (1e-8 mean K_ii) is too small to precondition with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

MAX_ITERATIONS = 500
BOUND_RTOL = 1e-9  # a bound decides a call only when beyond the threshold by more than this (relative)
ROUNDING_RTOL = 1e-12  # rounding of a bound's sums, relative to the sum of their terms' magnitudes

UNDECIDED, BELOW, ABOVE, TIE = 0, 1, 2, 3


@dataclass(frozen=True)
class SolvedCalls:
    """Per point (m,): value (an upper bound below t, a lower bound at or above t, or the converged
    value at a tie; NaN where undecided), outcome (UNDECIDED, BELOW, ABOVE, TIE), iterations (products)."""

    value: np.ndarray
    outcome: np.ndarray
    iterations: np.ndarray


def solve_calls(
    product: Callable[[np.ndarray], np.ndarray],
    columns: np.ndarray,
    k_xx: np.ndarray,
    own: np.ndarray,
    thresholds: np.ndarray,
    ridge: float,
    max_iterations: int = MAX_ITERATIONS,
) -> SolvedCalls:
    """Decide S^2 >= t for m points by the bounds of the module doc.

    product: V (n_U, j) -> K_UU V (no ridge); columns: (n_U, m) K_{U,x} of the points; k_xx: (m,);
    own: (m,) the point's position in U (its lambda entry is fixed at 0), -1 for a point outside U;
    thresholds: (m,) t > 0; ridge: eps > 0. Needs n_U >= 2.
    """
    n_u, m = columns.shape
    value, outcome, iterations = np.full(m, np.nan), np.zeros(m, dtype=np.int8), np.zeros(m, dtype=np.int64)
    columns, own = np.ascontiguousarray(columns, dtype=np.float64), np.asarray(own, dtype=np.int64)
    n_free = np.where(own >= 0, n_u - 1, n_u).astype(np.float64)
    active = np.arange(m)
    lam = np.full((n_u, m), 1.0) / n_free
    lam[own[own >= 0], np.flatnonzero(own >= 0)] = 0.0
    a_lam = _ridged(product, lam, ridge)
    grad = columns - a_lam
    _project(grad, own)
    direction = grad.copy()
    gg = np.einsum("ij,ij->j", grad, grad)
    for step in range(max_iterations + 1):
        # decide on bounds from the recursive A lambda first; confirm with a fresh product
        candidates = _bounds_outcome(columns, k_xx, lam, a_lam, own, thresholds[active], ridge)[0] != UNDECIDED
        if step == max_iterations:
            candidates[:] = True
        if candidates.any():
            sub = np.flatnonzero(candidates)
            fresh = _ridged(product, lam[:, sub], ridge)
            out, val = _bounds_outcome(
                np.ascontiguousarray(columns[:, sub]),
                k_xx[sub],
                lam[:, sub],
                fresh,
                own[sub],
                thresholds[active[sub]],
                ridge,
            )
            done = sub[out != UNDECIDED]
            value[active[done]], outcome[active[done]] = val[out != UNDECIDED], out[out != UNDECIDED]
            iterations[active[sub]] = step
            a_lam[:, sub] = fresh
            if step == max_iterations:
                break
            keep = np.ones(active.size, dtype=bool)
            keep[done] = False
            if not keep.all():
                active, columns, k_xx, lam, a_lam, own, grad, direction, gg = _points(
                    keep, active, columns, k_xx, lam, a_lam, own, grad, direction, gg
                )
        if active.size == 0:
            break
        iterations[active] = step + 1
        q = _ridged(product, direction, ridge)
        curvature = np.einsum("ij,ij->j", direction, q)
        flat = gg == 0.0  # converged exactly: the bounds above decide at the next check
        bad = (curvature <= 0.0) & ~flat
        if bad.any():  # an indefinite kernel: these points stay undecided
            keep = ~bad
            active, columns, k_xx, lam, a_lam, own, grad, direction, gg, q, curvature, flat = _points(
                keep, active, columns, k_xx, lam, a_lam, own, grad, direction, gg, q, curvature, flat
            )
            if active.size == 0:
                break
        step_size = np.where(flat, 0.0, gg / np.where(flat, 1.0, curvature))
        gg = _cg_update(lam, a_lam, grad, direction, q, own, step_size, gg)
    return SolvedCalls(value, outcome, iterations)


def _ridged(product, v: np.ndarray, ridge: float) -> np.ndarray:
    """A v = K_UU v + eps v, C-ordered."""
    result = np.ascontiguousarray(product(v), dtype=np.float64)
    result += ridge * v
    return result


@njit(cache=True, nogil=True)
def _project(v, own):
    """P v in place per column: the free entries minus their mean, 0 on the fixed entry own[j] (-1: none)."""
    n, m = v.shape
    total = np.zeros(m)
    for i in range(n):
        for j in range(m):
            total[j] += v[i, j]
    for j in range(m):
        if own[j] >= 0:
            total[j] = (total[j] - v[own[j], j]) / (n - 1)
        else:
            total[j] /= n
    for i in range(n):
        for j in range(m):
            v[i, j] -= total[j]
    for j in range(m):
        if own[j] >= 0:
            v[own[j], j] = 0.0


@njit(cache=True, nogil=True)
def _cg_update(lam, a_lam, grad, direction, q, own, step, gg):
    """One conjugate-gradient step in place: lambda += s d, A lambda += s q, g -= s P q, d = g + beta d
    (beta = new g.g / old g.g, 0 where the old one is 0); returns the new g.g per column."""
    n, m = q.shape
    mean = np.zeros(m)
    for i in range(n):
        for j in range(m):
            mean[j] += q[i, j]
    for j in range(m):
        mean[j] = (mean[j] - q[own[j], j]) / (n - 1) if own[j] >= 0 else mean[j] / n
    gg_next = np.zeros(m)
    for i in range(n):
        for j in range(m):
            lam[i, j] += step[j] * direction[i, j]
            a_lam[i, j] += step[j] * q[i, j]
            if i != own[j]:
                grad[i, j] -= step[j] * (q[i, j] - mean[j])
                gg_next[j] += grad[i, j] * grad[i, j]
    beta = np.zeros(m)
    for j in range(m):
        if gg[j] > 0.0:
            beta[j] = gg_next[j] / gg[j]
    for i in range(n):
        for j in range(m):
            direction[i, j] = grad[i, j] + beta[j] * direction[i, j]
    return gg_next


@njit(cache=True, nogil=True)
def certified_bounds(columns, k_xx, lam, a_lam, own, ridge):
    """(upper, lower, slack) per column: f(lambda) >= S^2 >= L(lambda) (module doc) for feasible lambda
    (n_U, m) (entry own[j] of column j fixed at 0; -1: none) given A lambda (n_U, m), and the
    rounding allowance of their sums."""
    n, m = columns.shape
    k_lam, lam_a_lam, lam_sq = np.zeros(m), np.zeros(m), np.zeros(m)
    abs_k_lam, abs_lam_a_lam, h_sum = np.zeros(m), np.zeros(m), np.zeros(m)
    for i in range(n):
        for j in range(m):
            k_lam[j] += columns[i, j] * lam[i, j]
            lam_a_lam[j] += lam[i, j] * a_lam[i, j]
            lam_sq[j] += lam[i, j] * lam[i, j]
            abs_k_lam[j] += abs(columns[i, j] * lam[i, j])
            abs_lam_a_lam[j] += abs(lam[i, j] * a_lam[i, j])
            if i != own[j]:
                h_sum[j] += columns[i, j] - a_lam[i, j] + ridge * lam[i, j]  # h = X_U r
    n_free = np.where(own >= 0, n - 1.0, float(n))
    h_bar = h_sum / n_free
    spread = np.zeros(m)
    for i in range(n):
        for j in range(m):
            if i != own[j]:
                centred = columns[i, j] - a_lam[i, j] + ridge * lam[i, j] - h_bar[j]
                spread[j] += centred * centred
    upper = k_xx - 2.0 * k_lam + lam_a_lam
    slack = ROUNDING_RTOL * (np.abs(k_xx) + 2.0 * abs_k_lam + abs_lam_a_lam)
    denominator = np.maximum(upper - ridge * lam_sq, 0.0) + spread / ridge  # ||r||^2 + ||h - h_bar||^2 / eps
    lower = ridge / n_free
    for j in range(m):
        if denominator[j] > 0.0:
            lower[j] += (k_xx[j] - k_lam[j] - h_bar[j]) ** 2 / denominator[j]
    return upper, lower, slack


def _bounds_outcome(columns, k_xx, lam, a_lam, own, thresholds, ridge):
    """(outcome, value) per column from `certified_bounds` and the thresholds (module doc)."""
    upper, lower, slack = certified_bounds(columns, k_xx, lam, a_lam, own, ridge)
    outcome = np.full(upper.shape, UNDECIDED, dtype=np.int8)
    below = upper + slack < thresholds * (1.0 - BOUND_RTOL)
    above = ~below & (lower - slack >= thresholds * (1.0 + BOUND_RTOL))
    tie = ~below & ~above & (upper - lower <= 2.0 * slack + BOUND_RTOL * thresholds)
    outcome[below], outcome[above], outcome[tie] = BELOW, ABOVE, TIE
    return outcome, np.where(above, lower, upper)


def _points(keep: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The block's per-point arrays (points on the last axis: (m,) vectors, (n_U, m) columns) of
    the points `keep` (bool (m,)) only."""
    return tuple(array[..., keep] for array in arrays)
