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

The estimate needs only each call, S_i^2 >= t_i = margin_i / alpha_i, and `span_calls` decides each
one as the full computation (`span_squared` with thresholds=None: the dense path below for every
S_i^2) decides it, cheapest means first:
  1. sign: margin_i <= 0 (t_i <= 0 <= S_i^2): an error;
  2. the hull's centroid: lambda uniform over U (without i) is feasible, so S_i^2 <= its objective,
     from x_i . sum_U x_j and ||sum_U x_j||^2: one sparse product, O(nnz), for all SVs at once;
     below t_i: no error;
  3. either the dense or the iterative path (method="auto": the cheaper by the cost model below):
     - dense: K_UU + eps I is Cholesky-factorised (n_U^3 / 3 flops, n_U^2 floats); the nearest
       unbounded SV q != i (lambda = e_q: S_i^2 <= ||x_i - x_q||^2 + eps), read off the kernel blocks,
       decides more calls; the triangular factor is inverted only on the trailing block of the
       undecided unbounded SVs (ordered last), solves run only for the undecided bounded ones;
     - iterative (`xialpha.estimators.span_iterative`): per block of SOLVE_BLOCK undecided points
       their kernel columns K_{U,i} give the nearest-SV bound, then projected conjugate gradients on
       the ridged, constrained least-squares problem above, through products K_UU V (on the linear
       path X_U (X_U^T V): O(nnz_U) per point and iteration, memory O(nnz_U + n_U * SOLVE_BLOCK)).
       Every iterate gives a certified upper bound (its objective) and a certified lower bound
       (the Lagrange dual at a scaled residual); the call is made when one of them is beyond t_i by
       more than BOUND_RTOL and the sums' rounding allowance. Points still undecided after
       MAX_ITERATIONS (none measured) or hitting non-positive curvature are computed by the dense path.
       The bounds assume a positive semi-definite kernel (a Gram of feature vectors: linear, RBF,
       polynomial); a sigmoid kernel by name always takes the dense path.
So the calls equal the full computation's, except where |S_i^2 - t_i| is at rounding level: within
BOUND_RTOL * t_i + ROUNDING_RTOL * (the magnitudes of the bound's terms) of t_i, where the solve is
converged to that level and the call is its value >= t_i, as the dense path's is its rounded value's
(both are then decided by rounding; the dense path's own error grows with K_UU's condition number,
bounded through the ridge by about n_U mean K_ii / eps). Measured: bench/overhead.py compares every
fit's calls with the full computation (bench/README.md); tests/estimators/test_estimators_span_decisive.py on
hundreds of random fits per method, duplicates, degenerate hulls, Gram and named kernels.

Cost model (method="auto"): dense DENSE_SECONDS_PER_FLOP * (n_U^3 / 3 + n_U^2 * undecided) against
iterative EXPECTED_ITERATIONS * (seconds of one product column) * undecided, with constants measured
on one core (bench/overhead.py --both-methods); above DENSE_MAX_UNBOUNDED unbounded SVs (n_U^2 floats
no longer reasonable per fit) the iterative path is taken whatever the estimate. The ridge makes the
lower bound expensive: its gap is ||P(A lambda - k)||^2 / eps, so a call S_i^2 >= t_i is certified only
once the projected residual is below sqrt(eps (S_i^2 - t_i)); upper bounds (no error) come in a few
iterations. There is no sampling of the hull: every call is that of the full hull.

Each fit factorises its own K_UU. Consecutive fits of a C path share about 74% of U (Reuters, 10
categories x 8 C), but a factor is reusable only up to the first member that leaves U, at 0-25% of U
in every order tried (by index, by alpha_i / C_i); refactoring costs about as much as 15 rank-one
updates of the factor (n_U 1,500-3,000, one core), and a C step moves hundreds of members in and out.

The kernel comes from a Gram matrix, or on the linear path from the fit's sparse features
(`xialpha.estimators.kernel_rows`): only the support vectors' blocks are ever formed.

Where the affine hull is empty (no unbounded support vector, or p is the only one) the span is
undefined (so is a non-positive (M^{-1})_pp, which only an indefinite kernel can give); it is
replaced by the upper bound S <= D_SV (Vapnik & Chapelle 2000), with D_SV^2 taken as the
largest squared distance between two support vectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
from numba import njit

from xialpha.errors import UserError, one_of
from xialpha.estimators import span_iterative
from xialpha.estimators.kernel_rows import FeatureRows, NamedKernelRows, kernel_rows
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.span_iterative import BOUND_RTOL, ROUNDING_RTOL, UNDECIDED
from xialpha.estimators.svm import SVMFit

RIDGE_RTOL = 1e-8
DENSE_MAX_UNBOUNDED = 12_000  # above: always the iterative path (the dense one needs ~3 n_U^2 floats, 3.5 GB here)
DIAMETER_BLOCK_ROWS = 1024
BOUNDED_BLOCK = 2048
SOLVE_BLOCK = 256  # points solved together by the iterative path (one product K_UU V per iteration)
METHODS = ("auto", "dense", "iterative")
# The cost model of method="auto" (module doc), in seconds on one idle core. Measured on the 10^5-document
# fits of bench/overhead.py (n_U 1,900-3,900; machine load ~12, times divided by 5): dense 3.6-5e-10 s
# per n_U^3/3 flop all included (kernel blocks, Cholesky, solves); iterative 3.3-4.4e-9 s per
# point-iteration and nonzero of X_U all included; 14-34 iterations per solved point (mean).
DENSE_SECONDS_PER_FLOP = 8e-11
PRODUCT_SECONDS_PER_NNZ = 7e-10
DENSE_PRODUCT_SECONDS_PER_ENTRY = 1e-10  # the same on the Gram / named-kernel paths, per entry of K_UU
EXPECTED_ITERATIONS = 25


@dataclass(frozen=True)
class SpanCalls:
    """How `span_calls` decided: spans (n,) as `span_squared` returns them; method ("dense",
    "iterative", "bounds": every call made by the sign and the centroid, or "diameter": no hull);
    n_unbounded; per support vector the count decided by the sign of the threshold (by_sign), by a
    closed-form upper bound (by_bound: the hull's centroid or the nearest unbounded SV), by the
    iterative solve's bounds (by_solve), by an exact S^2 (by_exact: the dense path, or the iterative
    path's undecided points); solve_iterations (per point solved iteratively: products with K_UU)."""

    spans: np.ndarray
    method: str
    n_unbounded: int
    by_sign: int = 0
    by_bound: int = 0
    by_solve: int = 0
    by_exact: int = 0
    solve_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass(frozen=True)
class SpanBounds:
    """What the cheap calls alone say of the span estimate of one fit (`span_bounds`): its counts lie in
    d_pos_low..d_pos_high (positives counted as errors) and d_neg_low..d_neg_high (negatives), over n
    examples with n_pos positives. The lows count the calls made (errors by the threshold's sign), the
    highs add every call not made yet. Not an estimate: no count and no per-example vector of it is one."""

    method: str
    n: int
    n_pos: int
    d_pos_low: int
    d_pos_high: int
    d_neg_low: int
    d_neg_high: int

    @property
    def exact(self) -> bool:
        """Whether the interval is one value: every call is made."""
        return self.d_pos_low == self.d_pos_high and self.d_neg_low == self.d_neg_high


def span_bounds(fit: SVMFit, gram=None) -> SpanBounds:
    """The interval of `span_estimate(fit, gram)`'s counts from the calls `span_calls` makes before
    forming any kernel block of the unbounded SVs (the threshold's sign, the hull's centroid: O(nnz)
    on the linear path). gram: as `span_estimate` takes it."""
    kernel = kernel_rows(fit, gram)
    sv = np.flatnonzero(fit.alpha > 0)
    unbounded = sv[~fit.bounded[sv]]
    t = call_thresholds(fit)[sv]
    if unbounded.size == 0:  # the diameter decides: only the sign's calls are cheap
        error, undecided = t <= 0, t > 0
    else:
        own = np.full(sv.size, -1)
        own[~fit.bounded[sv]] = np.arange(unbounded.size)
        diag_sv = kernel.diagonal(sv)
        error, undecided = _cheap_calls(kernel, sv, unbounded, own, diag_sv, t, _ridge(diag_sv), np.zeros(fit.y.size))
    positive = fit.y[sv] > 0
    d_pos, d_neg = int((error & positive).sum()), int((error & ~positive).sum())
    return SpanBounds(
        "span",
        int(fit.y.size),
        int((fit.y > 0).sum()),
        d_pos,
        d_pos + int((undecided & positive).sum()),
        d_neg,
        d_neg + int((undecided & ~positive).sum()),
    )


def _ridge(diag_sv: np.ndarray) -> float:
    """eps = RIDGE_RTOL * mean K_ii over the SVs (RIDGE_RTOL where that mean is not positive)."""
    scale = float(np.mean(diag_sv))
    return RIDGE_RTOL * (scale if scale > 0 else 1.0)


def span_estimate(fit: SVMFit, gram=None, *, method: str = "auto") -> Estimate:
    """The span estimate (method "span") of the LOO error of `fit`.

    gram: the (n, n) kernel matrix the fit was trained on, rows in the order of fit.y (only the
    support vectors' rows and columns are read); None for a fit of the linear path, whose sparse
    features give those blocks. method: how the undecided S_i^2 are settled ("auto", "dense",
    "iterative"; module doc): the calls are the same.
    Support vector i counts as a LOO error iff y_i f(x_i) - alpha_i S_i^2 <= 0; non-support
    vectors never do. Each S_i^2 is computed only as far as it decides that call (`span_squared`'s
    thresholds), so the calls are those of the exact spans.
    """
    margins = span_loo_margins(fit, gram, method=method, exact=False)
    return Estimate.from_indicator("span", fit.y, margins <= 0)


def span_loo_margins(fit: SVMFit, gram=None, *, method: str = "auto", exact: bool = True) -> np.ndarray:
    """(n,) estimated left-out margins y_i f(x_i) - alpha_i S_i^2 (plain y_i f(x_i) for non-SVs).

    exact=False: only each margin's sign (whether it is <= 0) is exact; S_i^2 is then a bound on
    the right side of the threshold margin_i / alpha_i that decides it (see `span_squared`).
    """
    margins = fit.y * fit.decision
    sv = fit.alpha > 0
    spans = span_squared(fit, gram, method=method, thresholds=call_thresholds(fit) if not exact else None)
    margins[sv] -= fit.alpha[sv] * spans[sv]
    return margins


def call_thresholds(fit: SVMFit) -> np.ndarray:
    """(n,) t_i = y_i f(x_i) / alpha_i of the support vectors (NaN elsewhere): i is a span error iff S_i^2 >= t_i."""
    thresholds = np.full(fit.y.shape[0], np.nan)
    sv = fit.alpha > 0
    thresholds[sv] = fit.y[sv] * fit.decision[sv] / fit.alpha[sv]
    return thresholds


def span_squared(fit: SVMFit, gram=None, *, method: str = "auto", thresholds=None) -> np.ndarray:
    """(n,) S_i^2 of every support vector (squared kernel-space distance); NaN for non-SVs.

    thresholds: None (every S_i^2 exact, by the dense path), or (n,) values t_i of which only
    "S_i^2 >= t_i" matters (the span's call). Then S_i^2 is reported as 0 where t_i <= 0, as an upper
    bound where one is below t_i, as a lower bound where one is at or above t_i (iterative path), and
    exactly elsewhere: the calls are those of the exact spans (module doc).
    """
    return span_calls(fit, gram, method=method, thresholds=thresholds).spans


def span_calls(fit: SVMFit, gram=None, *, method: str = "auto", thresholds=None) -> SpanCalls:
    """`span_squared`'s spans with how each was decided (`SpanCalls`)."""
    if method not in METHODS:
        raise UserError(f"method: {one_of(method, METHODS)}")
    kernel = kernel_rows(fit, gram)
    sv = np.flatnonzero(fit.alpha > 0)
    unbounded = sv[~fit.bounded[sv]]
    spans = np.full(fit.y.shape[0], np.nan)
    if unbounded.size == 0:
        spans[sv] = sv_diameter_squared(kernel, sv)
        return SpanCalls(spans, "diameter", 0)
    diag_sv = kernel.diagonal(sv)
    ridge = _ridge(diag_sv)
    if thresholds is None:
        _dense(kernel, sv, unbounded, ridge, spans, None)
        spans[sv] = np.maximum(spans[sv], 0.0)
        return SpanCalls(spans, "dense", int(unbounded.size), by_exact=int(sv.size))
    t = np.asarray(thresholds, dtype=np.float64)[sv]
    own = np.full(sv.size, -1)
    own[~fit.bounded[sv]] = np.arange(unbounded.size)
    low, todo = _cheap_calls(kernel, sv, unbounded, own, diag_sv, t, ridge, spans)
    n_centroid = int(sv.size - low.sum() - todo.sum())
    if not todo.any():  # every call made by the sign and the centroid: no kernel block of U is needed
        method = "bounds"
    elif unbounded.size < 2 or _indefinite(kernel):  # nothing to iterate on; the bounds need a PSD kernel
        method = "dense"
    elif method == "auto":
        method = _cheaper_method(kernel, unbounded, int(todo.sum()))
    if method == "bounds":
        calls = 0, 0, 0, np.zeros(0, dtype=np.int64)
    elif method == "dense":
        calls = _dense(kernel, sv, unbounded, ridge, spans, np.where(todo, t, 0.0))
    else:
        calls = _iterative(kernel, sv[todo], unbounded, own[todo], diag_sv[todo], t[todo], ridge, spans, sv)
    spans[sv] = np.maximum(spans[sv], 0.0)
    by_bound, by_solve, by_exact, iterations = calls
    return SpanCalls(
        spans,
        method,
        int(unbounded.size),
        by_sign=int(low.sum()),
        by_bound=n_centroid + by_bound,
        by_solve=by_solve,
        by_exact=by_exact,
        solve_iterations=iterations,
    )


def _cheap_calls(kernel, sv, unbounded, own, diag_sv, t, ridge, spans) -> tuple[np.ndarray, np.ndarray]:
    """The calls decided before any kernel block of U is formed (module doc, steps 1 and 2): by the
    threshold's sign (t_i <= 0: an error, S^2 set to 0) and by the hull's centroid (its upper bound
    below t_i: no error, S^2 set to it). sv (m,) support vectors; own (m,) each one's position in
    `unbounded` (-1: bounded); diag_sv, t (m,) their K_ii and thresholds; spans (n,) filled where
    decided. Returns (by_sign, undecided), (m,) masks."""
    low = t <= 0
    spans[sv[low]] = 0.0
    todo = ~low
    if unbounded.size > 1:  # the hull's centroid (of U without the point itself): lambda uniform
        upper, slack = _centroid_bound(kernel, unbounded, sv[todo], own[todo], diag_sv[todo], ridge)
        decided = upper + slack < t[todo] * (1.0 - BOUND_RTOL)
        spans[sv[todo][decided]] = upper[decided]
        todo[np.flatnonzero(todo)[decided]] = False
    return low, todo


def _indefinite(kernel) -> bool:
    """Whether the kernel may be indefinite (the sigmoid kernel): the iterative path's bounds need
    K = a Gram of feature vectors (positive semi-definite), as linear, RBF and polynomial kernels are."""
    return isinstance(kernel, NamedKernelRows) and kernel.kernel == "sigmoid"


def _cheaper_method(kernel, unbounded: np.ndarray, n_undecided: int) -> str:
    """ "dense" or "iterative", whichever the cost model (module doc) expects to take less time."""
    n_u = unbounded.size
    if n_u > DENSE_MAX_UNBOUNDED:
        return "iterative"
    dense = DENSE_SECONDS_PER_FLOP * (n_u**3 / 3.0 + n_u**2 * n_undecided)
    if isinstance(kernel, FeatureRows):
        per_product = PRODUCT_SECONDS_PER_NNZ * float(kernel.X[unbounded].nnz)
    else:
        per_product = DENSE_PRODUCT_SECONDS_PER_ENTRY * n_u**2
    iterative = EXPECTED_ITERATIONS * per_product * n_undecided
    return "dense" if dense <= iterative else "iterative"


def _centroid_bound(
    kernel, unbounded: np.ndarray, points: np.ndarray, own: np.ndarray, diag: np.ndarray, ridge: float
) -> tuple[np.ndarray, np.ndarray]:
    """(upper, slack) per point: f(lambda) at lambda uniform over U (without the point if it is in U),
    an upper bound on S^2, and the rounding allowance of its sums. O(nnz) on the linear path."""
    n_u = unbounded.size
    if isinstance(kernel, FeatureRows):
        total = np.asarray(kernel.X[unbounded].sum(axis=0)).ravel()
        to_total = kernel.X[points] @ total  # x . sum_j x_j
        total_sq = float(total @ total)
    else:
        to_total = np.zeros(points.size)
        total_sq = 0.0
        for start in range(0, n_u, DIAMETER_BLOCK_ROWS):
            rows = unbounded[start : start + DIAMETER_BLOCK_ROWS]
            to_total += kernel.block(points, rows).sum(axis=1) if points.size else 0.0
            total_sq += float(kernel.block(rows, unbounded).sum())
    inside = own >= 0
    n_f = np.where(inside, n_u - 1, n_u).astype(np.float64)
    cross = np.where(inside, to_total - diag, to_total)  # x . (sum over the free members)
    free_sq = np.where(inside, total_sq - 2.0 * to_total + diag, total_sq)
    upper = diag - 2.0 * cross / n_f + free_sq / n_f**2 + ridge / n_f
    slack = (
        ROUNDING_RTOL
        * (np.abs(diag) + 2.0 * np.abs(cross) / n_f + (abs(total_sq) + 2.0 * np.abs(to_total) + np.abs(diag)) / n_f**2)
        * 4.0
    )
    return upper, slack


def _iterative(kernel, points, unbounded, own, diag, t, ridge, spans, sv):
    """Settle `points` (t > 0, not decided yet) by the nearest-SV bound, then `solve_calls` in blocks of
    SOLVE_BLOCK; the few it leaves undecided by the dense path. Returns (by_bound, by_solve, by_exact,
    iterations)."""
    product = _hull_product(kernel, unbounded)
    diag_u = kernel.diagonal(unbounded)
    by_bound, by_solve, iterations, left = 0, 0, [], []
    for start in range(0, points.size, SOLVE_BLOCK):
        part = slice(start, start + SOLVE_BLOCK)
        block = kernel.block(unbounded, points[part])
        nearest = _nearest(block, diag_u, diag[part], own[part]) + ridge
        todo = ~_bound_decides(spans, points[part], t[part], nearest, diag_u, diag[part])
        by_bound += int((~todo).sum())
        if not todo.any():
            continue
        solved = span_iterative.solve_calls(
            product,
            block[:, todo],
            diag[part][todo],
            own[part][todo],
            t[part][todo],
            ridge,
            max_iterations=span_iterative.MAX_ITERATIONS,
        )
        done = solved.outcome != UNDECIDED
        spans[points[part][todo][done]] = solved.value[done]
        by_solve += int(done.sum())
        iterations.append(solved.iterations)
        left.append(points[part][todo][~done])
    left = np.concatenate(left) if left else np.zeros(0, dtype=np.int64)
    if left.size:  # not decided within MAX_ITERATIONS (or an indefinite kernel): exact by the dense path
        thresholds = np.zeros(sv.size)
        thresholds[np.searchsorted(sv, left)] = 1.0
        _dense(kernel, sv, unbounded, ridge, spans, thresholds, bounds=False)
    iterations = np.concatenate(iterations) if iterations else np.zeros(0, dtype=np.int64)
    return by_bound, by_solve, int(left.size), iterations


def _hull_product(kernel, unbounded: np.ndarray):
    """V (n_U, m) -> K_UU V: X_U (X_U^T V) on the linear path (O(nnz_U) per column), else a dense K_UU."""
    if isinstance(kernel, FeatureRows):
        part = kernel.X[unbounded]
        transposed = part.T.tocsr()
        return lambda v: part @ (transposed @ v)
    k_uu = kernel.block(unbounded, unbounded)
    return lambda v: k_uu @ v


def _dense(kernel, sv, unbounded, ridge, spans, wanted_t, *, bounds: bool = True):
    """The dense path: K_UU + eps I Cholesky-factorised (module doc). wanted_t: (|sv|,) None (every S^2
    exact), else the thresholds of the support vectors still to decide (<= 0: nothing to do there),
    first by the nearest-SV bound unless not bounds. Fills spans; returns (by_bound, by_solve,
    by_exact, iterations)."""
    own = np.full(sv.size, -1)
    at_bound = ~np.isin(sv, unbounded)
    own[~at_bound] = np.arange(unbounded.size)
    k_uu = kernel.block(unbounded, unbounded)
    diag_u = np.diagonal(k_uu).copy()
    wanted = np.ones(unbounded.size, dtype=bool)
    by_bound = 0
    if wanted_t is not None:
        t_u = wanted_t[~at_bound]
        wanted = t_u > 0
    if wanted_t is not None and bounds:
        nearest = _nearest(k_uu, diag_u, diag_u, np.arange(unbounded.size)) + ridge
        decided = _bound_decides(spans, unbounded[wanted], t_u[wanted], nearest[wanted], diag_u, diag_u[wanted])
        by_bound += int(decided.sum())
        wanted[np.flatnonzero(wanted)[decided]] = False
    by_exact = int(wanted.sum())
    order = np.concatenate([np.flatnonzero(~wanted), np.flatnonzero(wanted)])  # the undecided last
    ordered, diag_ordered = unbounded[order], diag_u[order]
    ridged = _ridged_in_order(np.ascontiguousarray(k_uu), order, ridge)  # K_UU + eps I, the undecided last
    del k_uu
    try:
        hull: _CholeskyHull | _PinvHull = _CholeskyHull(ridged)
    except np.linalg.LinAlgError:  # not positive definite (an indefinite kernel); ridged was overwritten
        ridged = kernel.block(ordered, ordered)
        ridged.flat[:: unbounded.size + 1] += ridge
        hull = _PinvHull(ridged)
    del ridged
    members = ordered[unbounded.size - by_exact :]
    inv_diag = hull.member_inverse_diagonal(members.size)
    # (M^{-1})_pp is 0 when p is the only unbounded SV: its affine hull is empty.
    defined = (inv_diag > 0) & (unbounded.size > 1)
    spans[members[defined]] = 1.0 / inv_diag[defined] - ridge
    if not defined.all():
        spans[members[~defined]] = sv_diameter_squared(kernel, sv)
    outside = sv[at_bound]
    if wanted_t is not None:
        outside = outside[wanted_t[at_bound] > 0]
    diag_o = kernel.diagonal(outside)
    for start in range(0, outside.size, BOUNDED_BLOCK):
        part = slice(start, start + BOUNDED_BLOCK)
        block = kernel.block(ordered, outside[part])
        todo = np.ones(block.shape[1], dtype=bool)
        if wanted_t is not None and bounds:
            upper = _nearest(block, diag_ordered, diag_o[part], None) + ridge
            t_part = wanted_t[np.searchsorted(sv, outside[part])]
            todo = ~_bound_decides(spans, outside[part], t_part, upper, diag_ordered, diag_o[part])
            by_bound += int((~todo).sum())
        by_exact += int(todo.sum())
        spans[outside[part][todo]] = diag_o[part][todo] - hull.quadratic(block[:, todo])
    return by_bound, 0, by_exact, np.zeros(0, dtype=np.int64)


def _bound_decides(spans, idx, thresholds, upper, diag_rows, diag_cols) -> np.ndarray:
    """Where the nearest-SV bound `upper` is below the thresholds (by more than rounding): set spans[idx]
    to it there; return that mask."""
    slack = ROUNDING_RTOL * 4.0 * (np.abs(diag_cols) + float(np.max(np.abs(diag_rows), initial=0.0)))
    decided = upper + slack < thresholds * (1.0 - BOUND_RTOL)
    spans[idx[decided]] = upper[decided]
    return decided


def _nearest(block: np.ndarray, diag_rows: np.ndarray, diag_cols: np.ndarray, own) -> np.ndarray:
    """(cols,) min over rows r of the squared distance K_rr + K_cc - 2 K_rc, leaving out row own[c]
    (own: (cols,) row indices, -1 for none, or None); inf where no row is left."""
    own = np.full(block.shape[1], -1) if own is None else np.asarray(own, dtype=np.int64)
    return _nearest_rows(np.ascontiguousarray(block), diag_rows, own) + diag_cols


@njit(cache=True, nogil=True)
def _nearest_rows(block, diag_rows, own):
    """(cols,) min over rows r != own[c] of diag_rows[r] - 2 block[r, c], row by row."""
    n_rows, n_cols = block.shape
    nearest = np.full(n_cols, np.inf)
    for r in range(n_rows):
        for c in range(n_cols):
            value = diag_rows[r] - 2.0 * block[r, c]
            if value < nearest[c] and r != own[c]:
                nearest[c] = value
    return nearest


@njit(cache=True, nogil=True)
def _ridged_in_order(k_uu, order, ridge):
    """(n, n) new: the upper triangle (and diagonal) of k_uu[order][:, order] + ridge I, all that
    `_CholeskyHull` reads; below the diagonal it is uninitialised. k_uu (n, n) C-ordered, symmetric;
    order (n,) a permutation."""
    n = order.shape[0]
    out = np.empty((n, n))
    for a in range(np.uintp(n)):
        row = np.uintp(order[a])
        for b in range(a, np.uintp(n)):
            out[a, b] = k_uu[row, np.uintp(order[b])]
        out[a, a] += ridge
    return out


class _CholeskyHull:
    """The bordered matrix M = [[A, 1], [1^T, 0]] of A = K_UU + eps I through L L^T = A.

    With z1 = L^{-1} 1 and s = ||z1||^2 (the border's Schur complement is -s):
    (M^{-1})_pp = ||(L^{-1})_p||^2 - ((L^{-1})_p . z1)^2 / s, from columns p of the triangular
    inverse (column p of L^{-1} is zero above row p, so the last k columns are those of the inverse
    of L's trailing k x k block: k^3 / 3 work instead of n_U^3 / 3), and for v = (k, 1)
    v^T M^{-1} v = ||z||^2 - (z1 . z - 1)^2 / s with z = L^{-1} k.
    """

    def __init__(self, ridged: np.ndarray):
        """ridged: A (n_U, n_U), C-ordered, of which only the upper triangle is read; factorised in
        place (LAPACK's dpotrf of the lower triangle of its transpose, Fortran-ordered): its memory
        holds L afterwards, zeros above the diagonal. LinAlgError if A is not positive definite."""
        factor, info = scipy.linalg.lapack.dpotrf(ridged.T, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"K_UU + eps I is not positive definite (dpotrf info {info})")
        self.factor = factor
        self.z_one = scipy.linalg.solve_triangular(
            self.factor, np.ones(ridged.shape[0]), lower=True, check_finite=False
        )
        self.s = float(self.z_one @ self.z_one)

    def member_inverse_diagonal(self, k: int) -> np.ndarray:
        """(k,) (M^{-1})_pp of the last k members."""
        if k == 0:
            return np.zeros(0)
        n = self.factor.shape[0]
        trailing = np.array(self.factor[n - k :, n - k :], order="F")  # a copy: dtrtri overwrites it
        inverse = scipy.linalg.lapack.dtrtri(trailing, lower=1, overwrite_c=1)[0]  # diagonal > 0: invertible
        return np.einsum("ij,ij->j", inverse, inverse) - (self.z_one[n - k :] @ inverse) ** 2 / self.s

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
        return np.diagonal(self.inverse)[n_u - k : n_u].copy()

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
