"""The span estimate of the leave-one-out error (Vapnik & Chapelle 2000; Chapelle et al. 2002).

When example p is left out and the sets of unbounded and bounded support vectors stay the same,
the left-out margin is exactly y_p f^p(x_p) = y_p f(x_p) - alpha_p S_p^2, where S_p^2 is the
squared distance from x_p to the affine hull {sum_j lambda_j x_j : sum_j lambda_j = 1} of the
unbounded support vectors U (without p itself). With the bordered matrix
M = [[K_UU, 1], [1^T, 0]]:

    unbounded p:  S_p^2 = 1 / (M^{-1})_pp
    bounded i:    S_i^2 = K_ii - v^T M^{-1} v,   v = (K_{i,U}, 1)

Computation: K_UU + eps I (eps = RIDGE_RTOL * mean K_ii over the SVs) is Cholesky-factorised;
triangular solves and the inverse of (part of) the triangular factor give both formulas through
the Schur complement of the border, without forming M or M^{-1}. The ridge makes duplicate or
linearly dependent support vectors harmless: every S^2 becomes
min_lambda ||x - sum lambda_j x_j||^2 + eps ||lambda||^2 (for unbounded p the eps of p's own
diagonal entry is subtracted again). If the Cholesky factorisation still fails (an indefinite
kernel), the pseudo-inverse of the ridged bordered matrix is used.

The estimate needs only each call, S_i^2 >= margin_i / alpha_i, and most calls are decided
without S_i^2: where margin_i <= 0 (S_i^2 >= 0), and where an upper bound is below the threshold.
Taking lambda = e_q in the minimum above gives S_i^2 <= ||x_i - x_q||^2 + eps for every unbounded
SV q other than i, and the nearest one is read off the kernel blocks the factorisation needs
anyway. So `span_estimate` factorises K_UU once (n_U^3 / 3), inverts the triangular factor only on
the trailing block of the undecided unbounded SVs (ordered last), and solves only for the
undecided bounded ones; on Reuters that leaves 0-45% of the unbounded and 5-100% of the bounded
SVs, most of them at large C, with exactly the calls of the full computation (`span_squared` with
thresholds=None computes every S_i^2).

Too many unbounded support vectors: the factorisation costs O(n_U^3) time and n_U^2 floats. Above
`max_unbounded` (default MAX_UNBOUNDED) a seeded random sample of that many unbounded SVs spans the
hull, and every other support vector (the unbounded ones left out of the sample too) is measured
against it with the bounded formula. The affine hull of a subset is contained in the full one, so
every S_p^2 can only grow: the estimate stays a (more) pessimistic one, never an optimistic one.
Bounded SVs are processed BOUNDED_BLOCK at a time, so memory stays O(n_U^2 + n_U * BOUNDED_BLOCK).

The kernel comes from a Gram matrix, or on the linear path from the fit's sparse features
(`xialpha.estimators.kernel_rows`): only the support vectors' blocks are ever formed.

Where the affine hull is empty (no unbounded support vector, or p is the only one) the span is
undefined (so is a non-positive (M^{-1})_pp, which only an indefinite kernel can give); it is
replaced by the upper bound S <= D_SV (Vapnik & Chapelle 2000), with D_SV^2 taken as the
largest squared distance between two support vectors.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from numba import njit

from xialpha.estimators.kernel_rows import kernel_rows
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import SVMFit

RIDGE_RTOL = 1e-8
DIAMETER_BLOCK_ROWS = 1024
BOUNDED_BLOCK = 2048
MAX_UNBOUNDED = 4000  # n_U beyond this: a sample of this many spans the hull (see the module doc)
SAMPLE_SEED = 0
BOUND_RTOL = 1e-9  # an upper bound decides a call only when below the threshold by more than this


def span_estimate(fit: SVMFit, gram=None, *, max_unbounded: int = MAX_UNBOUNDED) -> Estimate:
    """The span estimate (method "span") of the LOO error of `fit`.

    gram: the (n, n) kernel matrix the fit was trained on, rows in the order of fit.y (only the
    support vectors' rows and columns are read); None for a fit of the linear path, whose sparse
    features give those blocks. max_unbounded: the largest hull factorised exactly (module doc).
    Support vector i counts as a LOO error iff y_i f(x_i) - alpha_i S_i^2 <= 0; non-support
    vectors never do. Each S_i^2 is computed only as far as it decides that call (`span_squared`'s
    thresholds), so the calls are those of the exact spans.
    """
    margins = span_loo_margins(fit, gram, max_unbounded=max_unbounded, exact=False)
    return Estimate.from_indicator("span", fit.y, margins <= 0)


def span_loo_margins(fit: SVMFit, gram=None, *, max_unbounded: int = MAX_UNBOUNDED, exact: bool = True) -> np.ndarray:
    """(n,) estimated left-out margins y_i f(x_i) - alpha_i S_i^2 (plain y_i f(x_i) for non-SVs).

    exact=False: only each margin's sign (whether it is <= 0) is exact; S_i^2 is then taken at the
    threshold margin_i / alpha_i that decides it (see `span_squared`).
    """
    margins = fit.y * fit.decision
    sv = fit.alpha > 0
    thresholds = None
    if not exact:
        thresholds = np.full(margins.shape, np.nan)
        thresholds[sv] = margins[sv] / fit.alpha[sv]
    spans = span_squared(fit, gram, max_unbounded=max_unbounded, thresholds=thresholds)
    margins[sv] -= fit.alpha[sv] * spans[sv]
    return margins


def span_squared(fit: SVMFit, gram=None, *, max_unbounded: int = MAX_UNBOUNDED, thresholds=None) -> np.ndarray:
    """(n,) S_i^2 of every support vector (squared kernel-space distance); NaN for non-SVs.

    thresholds: None (every S_i^2 exact), or (n,) values t_i of which only "S_i^2 >= t_i" matters
    (the span's call). Then S_i^2 is reported as 0 where t_i <= 0, as its upper bound
    nearest_i + eps (the squared distance to the nearest unbounded SV other than i, plus the
    ridge; module doc) where that bound is below t_i, and exactly elsewhere: the calls are those
    of the exact spans, and the triangular inverse and the solves run for the undecided SVs only.
    """
    kernel = kernel_rows(fit, gram)
    sv = np.flatnonzero(fit.alpha > 0)
    at_bound = fit.bounded[sv]
    unbounded, outside = sv[~at_bound], sv[at_bound]
    if unbounded.size > max_unbounded:
        chosen = np.zeros(unbounded.size, dtype=bool)
        chosen[np.random.default_rng(SAMPLE_SEED).choice(unbounded.size, max_unbounded, replace=False)] = True
        unbounded, outside = unbounded[chosen], np.sort(np.concatenate([outside, unbounded[~chosen]]))
    spans = np.full(fit.y.shape[0], np.nan)
    if unbounded.size == 0:
        spans[sv] = sv_diameter_squared(kernel, sv)
        return spans
    k_uu = kernel.block(unbounded, unbounded)
    diag_u, diag_o = np.diagonal(k_uu).copy(), kernel.diagonal(outside)
    scale = float(np.mean(np.concatenate([diag_u, diag_o])))
    ridge = RIDGE_RTOL * (scale if scale > 0 else 1.0)
    wanted = np.ones(unbounded.size, dtype=bool)
    if thresholds is not None:
        wanted = _decide(spans, unbounded, thresholds[unbounded], _nearest(k_uu, diag_u, diag_u, exclude_self=True) + ridge)
    order = np.concatenate([np.flatnonzero(~wanted), np.flatnonzero(wanted)])  # the undecided last
    unbounded, diag_u = unbounded[order], diag_u[order]
    ridged = k_uu if np.array_equal(order, np.arange(order.size)) else k_uu[np.ix_(order, order)]
    del k_uu
    ridged.flat[:: unbounded.size + 1] += ridge  # K_UU + eps I
    try:
        hull = _CholeskyHull(ridged)
    except np.linalg.LinAlgError:
        hull = _PinvHull(ridged)
    del ridged
    members = unbounded[unbounded.size - int(wanted.sum()):]
    inv_diag = hull.member_inverse_diagonal(members.size)
    # (M^{-1})_pp is 0 when p is the only unbounded SV: its affine hull is empty.
    defined = (inv_diag > 0) & (unbounded.size > 1)
    spans[members[defined]] = 1.0 / inv_diag[defined] - ridge
    if not defined.all():
        spans[members[~defined]] = sv_diameter_squared(kernel, sv)
    if thresholds is not None:
        low = thresholds[outside] <= 0
        spans[outside[low]] = 0.0
        outside, diag_o = outside[~low], diag_o[~low]
    for start in range(0, outside.size, BOUNDED_BLOCK):
        part = slice(start, start + BOUNDED_BLOCK)
        block = kernel.block(unbounded, outside[part])
        todo = np.ones(block.shape[1], dtype=bool)
        if thresholds is not None:
            upper = _nearest(block, diag_u, diag_o[part], exclude_self=False) + ridge
            todo = _decide(spans, outside[part], thresholds[outside[part]], upper)
        spans[outside[part][todo]] = diag_o[part][todo] - hull.quadratic(block[:, todo])
    spans[sv] = np.maximum(spans[sv], 0.0)
    return spans


def _decide(spans: np.ndarray, idx: np.ndarray, thresholds: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Fill spans[idx] where thresholds (|idx|,) decide without the exact S^2: 0 where t <= 0, the
    upper bound where it is below t (by more than rounding); return the undecided ones (bool)."""
    low = thresholds <= 0
    high = ~low & (upper < thresholds * (1.0 - BOUND_RTOL))
    spans[idx[low]] = 0.0
    spans[idx[high]] = upper[high]
    return ~(low | high)


def _nearest(block: np.ndarray, diag_rows: np.ndarray, diag_cols: np.ndarray, *, exclude_self: bool) -> np.ndarray:
    """(cols,) min over rows r of the squared distance K_rr + K_cc - 2 K_rc (the diagonal left out
    when the block is square and exclude_self; inf where no row is left)."""
    return _nearest_rows(np.ascontiguousarray(block), diag_rows, exclude_self) + diag_cols


@njit(cache=True, nogil=True)
def _nearest_rows(block, diag_rows, exclude_self):
    """(cols,) min over rows r (r != c when exclude_self) of diag_rows[r] - 2 block[r, c], row by row."""
    n_rows, n_cols = block.shape
    nearest = np.full(n_cols, np.inf)
    for r in range(n_rows):
        for c in range(n_cols):
            value = diag_rows[r] - 2.0 * block[r, c]
            if value < nearest[c] and not (exclude_self and r == c):
                nearest[c] = value
    return nearest


class _CholeskyHull:
    """The bordered matrix M = [[A, 1], [1^T, 0]] of A = K_UU + eps I through L L^T = A.

    With z1 = L^{-1} 1 and s = ||z1||^2 (the border's Schur complement is -s):
    (M^{-1})_pp = ||(L^{-1})_p||^2 - ((L^{-1})_p . z1)^2 / s, from columns p of the triangular
    inverse (column p of L^{-1} is zero above row p, so the last k columns are those of the inverse
    of L's trailing k x k block: k^3 / 3 work instead of n_U^3 / 3), and for v = (k, 1)
    v^T M^{-1} v = ||z||^2 - (z1 . z - 1)^2 / s with z = L^{-1} k.
    """

    def __init__(self, ridged: np.ndarray):
        self.factor = np.linalg.cholesky(ridged)
        self.z_one = scipy.linalg.solve_triangular(self.factor, np.ones(ridged.shape[0]), lower=True,
                                                   check_finite=False)
        self.s = float(self.z_one @ self.z_one)

    def member_inverse_diagonal(self, k: int) -> np.ndarray:
        """(k,) (M^{-1})_pp of the last k members."""
        if k == 0:
            return np.zeros(0)
        n = self.factor.shape[0]
        trailing = np.ascontiguousarray(self.factor[n - k:, n - k:])
        inverse = scipy.linalg.lapack.dtrtri(trailing, lower=1)[0]  # its diagonal is > 0: invertible
        return np.einsum("ij,ij->j", inverse, inverse) - (self.z_one[n - k:] @ inverse) ** 2 / self.s

    def quadratic(self, block: np.ndarray) -> np.ndarray:
        """(m,) v^T M^{-1} v for the columns k of block (n_U, m), v = (k, 1)."""
        if block.shape[1] == 0:
            return np.zeros(0)
        z = scipy.linalg.solve_triangular(self.factor, block, lower=True, check_finite=False)
        return np.einsum("ij,ij->j", z, z) - (self.z_one @ z - 1.0) ** 2 / self.s


class _PinvHull:
    """The same terms from the pseudo-inverse of the bordered matrix M (indefinite kernels)."""

    def __init__(self, ridged: np.ndarray):
        n_u = ridged.shape[0]
        bordered = np.zeros((n_u + 1, n_u + 1))
        bordered[:n_u, :n_u] = ridged
        bordered[:n_u, n_u] = bordered[n_u, :n_u] = 1.0
        self.inverse = scipy.linalg.pinvh(bordered, check_finite=False)

    def member_inverse_diagonal(self, k: int) -> np.ndarray:
        n_u = self.inverse.shape[0] - 1
        return np.diagonal(self.inverse)[n_u - k:n_u].copy()

    def quadratic(self, block: np.ndarray) -> np.ndarray:
        v = np.vstack([block, np.ones((1, block.shape[1]))])
        return np.einsum("ij,ij->j", v, self.inverse @ v)


def sv_diameter_squared(kernel, sv: np.ndarray) -> float:
    """max_ij K_ii + K_jj - 2 K_ij over support vectors sv, in blocks of DIAMETER_BLOCK_ROWS rows."""
    diag = kernel.diagonal(sv)
    largest = 0.0
    for start in range(0, sv.size, DIAMETER_BLOCK_ROWS):
        rows = slice(start, start + DIAMETER_BLOCK_ROWS)
        block = kernel.block(sv[rows], sv)
        largest = max(largest, float(np.max(diag[rows, None] + diag[None, :] - 2.0 * block)))
    return largest
