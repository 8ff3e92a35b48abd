"""The extended xi-alpha estimate: SVMlight's search depth (option -k) for examples xi-alpha flags.

This follows SVMlight's `compute_xa_estimates` and `distribute_alpha_t_greedily` (svm_learn.c).
An example t that the plain criterion flags (rho alpha_t R_delta^2 + xi_t >= 1) gets a second,
finer test in which R_delta^2 is replaced by the squared distance from x_t to the mean m of a set
of up to `depth` unbounded support vectors (t itself excluded, both classes allowed):

    t is counted as an error iff  alpha_t ||x_t - m||^2 + xi_t >= 1   (no rho here, as in SVMlight)

with ||x_t - m||^2 = K_tt + 2 sim and sim = ||m||^2 / 2 - <x_t, m> minimised greedily: depth
d = 1, 2, ... adds the unbounded SV that gives the smallest sim for the mean of the d chosen ones
(first in training order on ties), and sim is the smallest value met along that path. As in
SVMlight, a depth stops at the first candidate whose value falls below
(1 - xi_t - alpha_t R_delta^2) / (2 alpha_t), and the search ends there; it also ends when no
candidate is left. Without any candidate sim = 0, i.e. the distance of x_t to the origin.
SVMlight calls this rule experimental ("makes assumptions"): it is an estimate, not a bound.
"""

from __future__ import annotations

import numbers

import numpy as np

from xialpha.errors import UserError
from xialpha.estimators import DEFAULT_RHO
from xialpha.estimators.kernel_rows import kernel_rows
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import SVMFit
from xialpha.estimators.validation import check_positive
from xialpha.estimators.xi_alpha import xi_alpha_indicator

DEFAULT_DEPTH = 10
MAX_DEPTH = 100  # SVMlight's limit for -k
TARGET_BLOCK = 1024  # flagged examples searched at once


def xi_alpha_extended(
    fit: SVMFit, gram, r_delta2: float, rho: float = DEFAULT_RHO, depth: int = DEFAULT_DEPTH
) -> Estimate:
    """The extended xi-alpha estimate (method "xa_ext") of the LOO error of `fit`.

    gram: the (n, n) kernel matrix of the fit, rows in the order of fit.y (read only at the
    flagged examples and the unbounded SVs), or None for a fit of the linear path (its sparse
    features give those blocks); r_delta2: R_delta^2 or an upper bound; rho: as for `xi_alpha`;
    depth: 0..100, the number of unbounded SVs a mean may combine (0 = plain xi-alpha).
    Memory: O(n_unbounded_SV x (n_unbounded_SV + TARGET_BLOCK)) kernel values.
    """
    kernel = kernel_rows(fit, gram)
    r_delta2 = check_positive(r_delta2, "r_delta2")
    rho = check_positive(rho, "rho")
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or not 0 <= depth <= MAX_DEPTH:
        raise UserError(f"depth: must be an integer from 0 to {MAX_DEPTH}, got {depth!r}")
    flagged = xi_alpha_indicator(fit.alpha, fit.xi, r_delta2, rho)
    if depth == 0 or not flagged.any():
        return Estimate.from_indicator("xa_ext", fit.y, flagged)
    targets = np.flatnonzero(flagged)
    candidates = np.flatnonzero((fit.alpha > 0) & ~fit.bounded)
    alpha, xi = fit.alpha[targets], fit.xi[targets]
    with np.errstate(divide="ignore", invalid="ignore"):
        early_stop = np.where(alpha > 0, (1.0 - xi - alpha * r_delta2) / (2.0 * alpha), -np.inf)
    sim = np.zeros(targets.size)
    if candidates.size:
        k_cc = kernel.block(candidates, candidates)
        for start in range(0, targets.size, TARGET_BLOCK):
            part = slice(start, start + TARGET_BLOCK)
            sim[part] = _greedy_similarity(
                kernel.block(targets[part], candidates), k_cc, targets[part], candidates, int(depth), early_stop[part]
            )
    errors = flagged.copy()
    errors[targets] = alpha * kernel.diagonal(targets) + 2.0 * alpha * sim + xi >= 1.0
    return Estimate.from_indicator("xa_ext", fit.y, errors)


def _greedy_similarity(
    k_tc: np.ndarray, k_cc: np.ndarray, targets: np.ndarray, candidates: np.ndarray, depth: int, early_stop: np.ndarray
) -> np.ndarray:
    """(n_targets,) the smallest ||m||^2 / 2 - <x_t, m> along each target's greedy path of means m.

    k_tc: (n_targets, n_candidates) and k_cc: (n_candidates, n_candidates) kernel blocks.
    """
    n_t = targets.size
    sim = np.zeros(n_t)
    k_cc_diag = np.diagonal(k_cc)
    taken = targets[:, None] == candidates[None, :]  # t itself, then the chosen SVs
    chosen_cross = np.zeros((n_t, candidates.size))  # sum over chosen j of K(c, x_j)
    chosen_sq = np.zeros(n_t)  # ||sum over chosen x_j||^2
    chosen_lin = np.zeros(n_t)  # <x_t, sum over chosen x_j>
    searching = np.ones(n_t, dtype=bool)
    for d in range(1, depth + 1):
        rows = np.flatnonzero(searching & ~taken.all(axis=1))
        searching[:] = False
        if rows.size == 0:
            break
        values = (chosen_sq[rows, None] + k_cc_diag + 2.0 * chosen_cross[rows]) / (2.0 * d * d)
        values -= (chosen_lin[rows, None] + k_tc[rows]) / d
        values[taken[rows]] = np.inf
        below = values < early_stop[rows, None]
        pick = np.where(below.any(axis=1), below.argmax(axis=1), values.argmin(axis=1))
        picked = values[np.arange(rows.size), pick]
        sim[rows] = picked if d == 1 else np.minimum(sim[rows], picked)
        chosen_sq[rows] += k_cc_diag[pick] + 2.0 * chosen_cross[rows, pick]
        chosen_cross[rows] += k_cc[pick]
        chosen_lin[rows] += k_tc[rows, pick]
        taken[rows, pick] = True
        searching[rows] = sim[rows] >= early_stop[rows]
    return sim
