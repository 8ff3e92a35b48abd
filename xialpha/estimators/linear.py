"""The linear path: the biased soft-margin SVM solved on sparse features, no Gram matrix.

`solve_linear` solves the problem `fit_svm` solves on the Gram matrix, `TrainingProblem(y, gram=X X^T)`
(the SVM with threshold b, per-example bounds C_i = C * j**[y_i = +1] * w_i), by dual coordinate
descent through the weight vector w = sum_i alpha_i y_i x_i (`xialpha.estimators.dcd`). Memory is
O(nnz(X) + n + d); time per pass is O(nnz(X)). A warm start from a previous solution (a smaller C,
or the full training set when one example is left out) usually needs a few passes only.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

import xialpha.estimators.dcd as dcd
from xialpha.estimators.validation import check_features, check_vector

MAX_EPOCHS = 20_000  # passes over the data, summed over the multiplier steps
SEED = 0
FIRST_MU_SHARE = 0.1  # the first subproblem's multiplier weight, as a share of mu (see `xialpha.estimators.dcd`)


class ConvergenceWarning(UserWarning):
    """The linear solver stopped at max_epochs before reaching its tolerance."""


class RowStatistics(NamedTuple):
    """What every fit on the same CSR features X (n, d) with the same examples taking part needs:
    the centre m (d,) of the active rows, x_m = X m (n,), centered_sq = ||x_i - m||^2 (n,) and
    their spread = mean ||x_i - m||^2 over the active rows. A C path computes them once
    (`solve_linear(statistics=)`): O(nnz) work and three n-vectors saved per fit."""

    X: object
    active: np.ndarray  # (n,) bool, C_i > 0
    mean: np.ndarray
    x_m: np.ndarray
    centered_sq: np.ndarray
    spread: float

    def fits(self, X, active: np.ndarray) -> bool:
        """Whether these are the statistics of X (the same object) with these active examples."""
        return self.X is X and np.array_equal(self.active, active)


def row_statistics(X, active: np.ndarray) -> RowStatistics:
    """The `RowStatistics` of CSR features X (n, d) over the examples where active (n,) bool."""
    sq_norm = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    weights = active.astype(np.float64)
    n_active = max(float(weights.sum()), 1.0)
    mean = np.asarray(X.T @ weights, dtype=np.float64).ravel() / n_active
    mm = float(mean @ mean)
    x_m = np.asarray(X @ mean, dtype=np.float64).ravel()
    centered_sq = np.maximum(sq_norm - 2.0 * x_m + mm, 0.0)
    spread = float(weights @ sq_norm) / n_active - mm
    return RowStatistics(X, active.copy(), mean, x_m, centered_sq, spread)


class LinearSolution(NamedTuple):
    """What `solve_linear` returns: alpha (n,), w (d,), threshold b, wx = X w (n,) without b, the
    solver's seconds, whether it met its tolerance, X as the CSR matrix it solved on, and the
    `RowStatistics` it used (for the next fit on X)."""

    alpha: np.ndarray
    w: np.ndarray
    b: float
    wx: np.ndarray
    seconds: float
    converged: bool
    X: object
    statistics: RowStatistics


def solve_linear(
    X,
    y: np.ndarray,
    c_i: np.ndarray,
    *,
    tol: float,
    warm_start=None,
    max_epochs: int = MAX_EPOCHS,
    check_input: bool = True,
    statistics: RowStatistics | None = None,
) -> LinearSolution:
    """Dual solution of the biased SVM on CSR features X (n, d), labels y (n,) -1/+1, bounds c_i (n,).

    warm_start: None, or (alpha0 (n,), b0) from a related problem; alpha0 is clipped to [0, c_i].
    statistics: a previous solution's `RowStatistics`, used when they are X's with the same
    examples active (else computed). seconds covers the compiled solver and the O(nnz) products
    around it, not the threshold.
    """
    n = y.shape[0]
    X = check_features(X, n) if check_input else X
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    X = X.tocsr()
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    if warm_start is None:
        alpha, b = np.zeros(n), 0.0
    else:
        alpha0, b = warm_start
        alpha = balance(np.clip(check_vector(alpha0, n, "warm_start"), 0.0, c_i), y)
        b = float(b)
        if not np.isfinite(b):
            raise ValueError("warm_start: its threshold b is not finite")
    start = time.perf_counter()
    active = c_i > 0
    if statistics is None or not statistics.fits(X, active):
        statistics = row_statistics(X, active)
    yf = y.astype(np.float64)
    mu = statistics.spread if statistics.spread > 0 else 1.0
    w = np.zeros(X.shape[1])
    b, _epochs, _outer, _visits, _visits_nnz, converged = dcd.solve_biased(
        X.indptr,
        X.indices,
        X.data,
        yf,
        np.asarray(c_i, dtype=np.float64),
        statistics.mean,
        statistics.x_m,
        statistics.centered_sq,
        alpha,
        b,
        FIRST_MU_SHARE * mu,
        mu,
        float(tol),
        int(max_epochs),
        SEED,
        w,
    )
    solved, w_solved = alpha.copy(), w
    snapped = snap_to_bounds(alpha, c_i, float(alpha @ yf))
    if snapped:
        moved = np.flatnonzero(alpha != solved)
        w = w + np.asarray(X[moved].T @ ((alpha - solved)[moved] * yf[moved]), dtype=np.float64).ravel()
    seconds = time.perf_counter() - start
    wx = np.asarray(X @ w, dtype=np.float64).ravel()
    b_out = float(threshold(yf, alpha, c_i, wx, b))
    if snapped and not meets_tolerance(alpha, c_i, yf * (wx + b_out), tol):
        # snapping moved more weight than the tolerance allows: the solver's own alpha, if it meets it
        wx_solved = np.asarray(X @ w_solved, dtype=np.float64).ravel()
        b_solved = float(threshold(yf, solved, c_i, wx_solved, b))
        if meets_tolerance(solved, c_i, yf * (wx_solved + b_solved), tol):
            alpha, w, wx, b_out = solved, w_solved, wx_solved, b_solved
    return LinearSolution(alpha, w, b_out, wx, seconds, bool(converged), X, statistics)


def meets_tolerance(alpha: np.ndarray, c_i: np.ndarray, margins: np.ndarray, tol: float) -> bool:
    """Whether alpha (n,) with training margins y_i f(x_i) (n,) already meets the solver's stopping
    rule for bounds c_i (n,): the projected gradients g_i = margin_i - 1 (0 < alpha_i < C_i),
    min(g_i, 0) (alpha_i = 0), max(g_i, 0) (alpha_i = C_i) spread by at most tol over the examples
    with C_i > 0, and no alpha_i above its bound.

    An ascending C path keeps its solution once no support vector is at its bound (the hard-margin
    solution, optimal for every larger C): the next C's fit is then the same, with no pass of the
    solver.
    """
    active = c_i > 0
    if (alpha > c_i).any() or (alpha[~active] > 0).any() or not active.any():
        return False
    g = margins[active] - 1.0
    a, c = alpha[active], c_i[active]
    projected = np.where(a == 0.0, np.minimum(g, 0.0), np.where(a == c, np.maximum(g, 0.0), g))
    return float(projected.max() - projected.min()) <= tol


def balance(alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """alpha (n,) with y^T alpha = 0 restored by scaling down the heavier class; in place.

    Clipping a warm start to new bounds (an example left out, a smaller C) breaks the equality
    constraint; scaling keeps 0 <= alpha_i <= C_i, and the solver starts near a feasible point
    instead of spending its first subproblem on moving that mass back.
    """
    positive = y > 0
    pos, neg = float(alpha[positive].sum()), float(alpha[~positive].sum())
    if pos > neg > 0 or (pos > 0 and neg == 0):
        alpha[positive] *= neg / pos
    elif neg > pos:
        alpha[~positive] *= pos / neg
    return alpha


def snap_to_bounds(alpha: np.ndarray, c_i: np.ndarray, residual: float) -> bool:
    """Set alphas within 2 |y^T alpha| of a bound onto it, in place; True if any moved.

    The solver meets y^T alpha = 0 only within `residual`; an alpha that close to 0 or C_i is
    that residual, not an unbounded support vector, and would otherwise decide the threshold.
    Where many alphas move, the decision values can move by more than the tolerance:
    `solve_linear` then keeps the solver's alpha.
    """
    slack = 2.0 * abs(residual)
    low = (alpha > 0) & (alpha <= slack)
    high = (alpha < c_i) & (alpha >= c_i - slack) & ~low
    alpha[low] = 0.0
    alpha[high] = c_i[high]
    return bool(low.any() or high.any())


def threshold(y: np.ndarray, alpha: np.ndarray, c_i: np.ndarray, wx: np.ndarray, b: float) -> float:
    """The threshold as libsvm sets it, so both paths agree where b is not unique.

    With unbounded support vectors (0 < alpha_i < C_i) it is the mean of y_i - w . x_i over them
    (the solver's b agrees within tol); without any, every b in the interval the KKT conditions
    allow is optimal and libsvm takes its midpoint. y, alpha, c_i, wx = X w: (n,) arrays.
    """
    active = c_i > 0
    free = active & (alpha > 0) & (alpha < c_i)
    if free.any():
        return float(np.mean(y[free] - wx[free]))
    # y_i (w . x_i + b) >= 1 where alpha_i = 0, <= 1 where alpha_i = C_i
    at_zero, at_bound = active & (alpha == 0), active & (alpha > 0)
    low = np.concatenate([(1 - wx)[at_zero & (y > 0)], (-1 - wx)[at_bound & (y < 0)]])
    high = np.concatenate([(1 - wx)[at_bound & (y > 0)], (-1 - wx)[at_zero & (y < 0)]])
    if low.size and high.size:
        return float(0.5 * (low.max() + high.min()))
    return b
