"""The span estimate of the leave-one-out error (Vapnik & Chapelle 2000; Chapelle et al. 2002).

When example p is left out and the sets of unbounded and bounded support vectors stay the same,
the left-out margin is exactly y_p f^p(x_p) = y_p f(x_p) - alpha_p S_p^2, where S_p^2 is the
squared distance from x_p to the affine hull {sum_j lambda_j x_j : sum_j lambda_j = 1} of the
unbounded support vectors U (without p itself). With the bordered matrix
M = [[K_UU, 1], [1^T, 0]]:

    unbounded p:  S_p^2 = 1 / (M^{-1})_pp
    bounded i:    S_i^2 = K_ii - v^T M^{-1} v,   v = (K_{i,U}, 1)

Computation: K_UU + eps I (eps = RIDGE_RTOL * mean K_ii over the SVs) is Cholesky-factorised; one
multi-right-hand-side triangular solve and the inverse of the triangular factor (for the diagonal)
give both formulas through the Schur complement of the border, without forming M or M^{-1}.
The ridge makes duplicate or linearly dependent support vectors harmless: every S^2 becomes min_lambda ||x - sum lambda_j x_j||^2 + eps ||lambda||^2 (for
unbounded p the eps of p's own diagonal entry is subtracted again). If the Cholesky factorisation
still fails (an indefinite kernel), the pseudo-inverse of the ridged bordered matrix is used.

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

from xialpha.estimators.kernel_rows import kernel_rows
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import SVMFit

RIDGE_RTOL = 1e-8
DIAMETER_BLOCK_ROWS = 1024
BOUNDED_BLOCK = 2048
MAX_UNBOUNDED = 4000  # n_U beyond this: a sample of this many spans the hull (see the module doc)
SAMPLE_SEED = 0


def span_estimate(fit: SVMFit, gram=None, *, max_unbounded: int = MAX_UNBOUNDED) -> Estimate:
    """The span estimate (method "span") of the LOO error of `fit`.

    gram: the (n, n) kernel matrix the fit was trained on, rows in the order of fit.y (only the
    support vectors' rows and columns are read); None for a fit of the linear path, whose sparse
    features give those blocks. max_unbounded: the largest hull factorised exactly (module doc).
    Support vector i counts as a LOO error iff y_i f(x_i) - alpha_i S_i^2 <= 0; non-support
    vectors never do.
    """
    margins = span_loo_margins(fit, gram, max_unbounded=max_unbounded)
    return Estimate.from_indicator("span", fit.y, margins <= 0)


def span_loo_margins(fit: SVMFit, gram=None, *, max_unbounded: int = MAX_UNBOUNDED) -> np.ndarray:
    """(n,) estimated left-out margins y_i f(x_i) - alpha_i S_i^2 (plain y_i f(x_i) for non-SVs)."""
    spans = span_squared(fit, gram, max_unbounded=max_unbounded)
    margins = fit.y * fit.decision
    sv = fit.alpha > 0
    margins[sv] -= fit.alpha[sv] * spans[sv]
    return margins


def span_squared(fit: SVMFit, gram=None, *, max_unbounded: int = MAX_UNBOUNDED) -> np.ndarray:
    """(n,) S_i^2 of every support vector (squared kernel-space distance); NaN for non-SVs."""
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
    scale = float(np.mean(kernel.diagonal(sv)))
    ridge = RIDGE_RTOL * (scale if scale > 0 else 1.0)
    ridged = kernel.block(unbounded, unbounded)
    ridged.flat[:: unbounded.size + 1] += ridge  # K_UU + eps I, in place
    try:
        inv_diag, quad = _bordered_terms_cholesky(ridged, kernel, unbounded, outside)
    except np.linalg.LinAlgError:
        inv_diag, quad = _bordered_terms_pinv(ridged, kernel, unbounded, outside)
    # (M^{-1})_pp is 0 when p is the only unbounded SV: its affine hull is empty.
    defined = (inv_diag > 0) & (unbounded.size > 1)
    spans[unbounded[defined]] = 1.0 / inv_diag[defined] - ridge
    spans[outside] = kernel.diagonal(outside) - quad
    if not defined.all():
        spans[unbounded[~defined]] = sv_diameter_squared(kernel, sv)
    spans[sv] = np.maximum(spans[sv], 0.0)
    return spans


def _bordered_terms_cholesky(ridged: np.ndarray, kernel, unbounded: np.ndarray,
                             outside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M^{-1})_pp for p in U (n_u,) and v_i^T M^{-1} v_i for i outside U (n_o,), M bordering A = K_UU + eps I.

    With L L^T = A, z1 = L^{-1} 1, Z = L^{-1} K_U,outside (triangular solves, BOUNDED_BLOCK columns
    at a time) and s = ||z1||^2 (the border's Schur complement is -s):
    (M^{-1})_pp = ||(L^{-1})_p||^2 - ((L^{-1})_p . z1)^2 / s, using columns p of the triangular
    inverse L^{-1} (a third of the work of a solve against the identity), and
    v^T M^{-1} v = ||z_v||^2 - (z1 . z_v - 1)^2 / s.
    """
    n_u = ridged.shape[0]
    factor = np.linalg.cholesky(ridged)
    inverse_factor = scipy.linalg.lapack.dtrtri(factor, lower=1)[0]  # its diagonal is > 0: invertible
    z_one = scipy.linalg.solve_triangular(factor, np.ones(n_u), lower=True, check_finite=False)
    s = float(z_one @ z_one)
    inv_diag = np.einsum("ij,ij->j", inverse_factor, inverse_factor) - (z_one @ inverse_factor) ** 2 / s
    quad = np.empty(outside.size)
    for start in range(0, outside.size, BOUNDED_BLOCK):
        part = slice(start, start + BOUNDED_BLOCK)
        z_b = scipy.linalg.solve_triangular(factor, kernel.block(unbounded, outside[part]), lower=True,
                                            check_finite=False)
        quad[part] = np.einsum("ij,ij->j", z_b, z_b) - (z_one @ z_b - 1.0) ** 2 / s
    return inv_diag, quad


def _bordered_terms_pinv(ridged: np.ndarray, kernel, unbounded: np.ndarray,
                         outside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same terms from the pseudo-inverse of the bordered matrix M (indefinite kernels)."""
    n_u = ridged.shape[0]
    bordered = np.zeros((n_u + 1, n_u + 1))
    bordered[:n_u, :n_u] = ridged
    bordered[:n_u, n_u] = bordered[n_u, :n_u] = 1.0
    inverse = scipy.linalg.pinvh(bordered, check_finite=False)
    quad = np.empty(outside.size)
    for start in range(0, outside.size, BOUNDED_BLOCK):
        part = slice(start, start + BOUNDED_BLOCK)
        v = np.vstack([kernel.block(unbounded, outside[part]), np.ones((1, outside[part].size))])
        quad[part] = np.einsum("ij,ij->j", v, inverse @ v)
    return np.diagonal(inverse)[:n_u].copy(), quad


def sv_diameter_squared(kernel, sv: np.ndarray) -> float:
    """max_ij K_ii + K_jj - 2 K_ij over support vectors sv, in blocks of DIAMETER_BLOCK_ROWS rows."""
    diag = kernel.diagonal(sv)
    largest = 0.0
    for start in range(0, sv.size, DIAMETER_BLOCK_ROWS):
        rows = slice(start, start + DIAMETER_BLOCK_ROWS)
        block = kernel.block(sv[rows], sv)
        largest = max(largest, float(np.max(diag[rows, None] + diag[None, :] - 2.0 * block)))
    return largest
