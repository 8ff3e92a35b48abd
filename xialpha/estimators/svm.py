"""Training a biased soft-margin SVM and extracting (alpha, xi, b) for the estimators.

As in LIBLINEAR's linear.h (`problem`, `parameter`, `train`): a `TrainingProblem` says what is
trained on (labels, features or a Gram matrix, the kernel, example weights), `SVMParameters` how
(C, the cost factor j, the tolerance, the solver's limits), and `fit_svm(problem, parameters)`
trains. Two paths solve the same problem. Linear kernels on a feature matrix take the linear path
(`xialpha.estimators.linear`: dual coordinate descent through the weight vector w on sparse
features, no Gram matrix, warm-startable); a precomputed Gram matrix (non-linear kernels derived
from one linear Gram) or features with a named non-linear kernel go to libsvm (scikit-learn's SVC).
Per-example upper bounds are C_i = C * j**[y_i = +1] * w_i, with j the SVMlight cost factor
and w_i optional sample weights (w_i = 0 removes example i from training without copying
the Gram matrix; integer w_i act as w_i copies of the example).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from xialpha.estimators import LINEAR
from xialpha.estimators.linear import MAX_EPOCHS, ConvergenceWarning, RowStatistics, meets_tolerance, solve_linear
from xialpha.estimators.validation import (
    check_features,
    check_gram,
    check_kernel,
    check_labels,
    check_positive,
    check_tolerance,
    check_vector,
)
from xialpha.estimators.xi_alpha import r_delta_squared

if TYPE_CHECKING:
    from sklearn.svm import SVC

# alpha_i counts as "at the bound C_i" within this relative tolerance (libsvm clips exactly).
BOUND_RTOL = 1e-8
LIBSVM_MAX_ITER = 10_000_000  # libsvm's own cap on iterations (at least 100 per example)
DEFAULT_TOL = 1e-3  # libsvm's default stopping tolerance
LIBSVM_FALLBACK_ROWS = 20_000  # an unconverged linear-path fit on at most this many examples is redone by libsvm


@dataclass(frozen=True, eq=False)
class TrainingProblem:
    """What an SVM is trained on (LIBLINEAR's `problem`): n examples with labels y (n,) in {-1, +1},
    given either as features X (n, d) (dense or scipy.sparse) under a named `kernel` ("linear",
    "rbf", "poly", "sigmoid"; `kernel_params`: gamma, degree, coef0, an explicit gamma for the
    non-linear ones) or as a precomputed Gram matrix (n, n) (the kernel then unused), and optional
    weights (n,) >= 0 (None: all 1) that scale each example's bound C_i.

    Made, it holds checked labels (int8) and weights (float64); its data and kernel are checked
    when trained on (`fit_svm(check_input=True)`), the data also once by `checked`. ValueError
    naming the field otherwise (DataFailure for labels of one class)."""

    y: np.ndarray
    X: object | None = None
    gram: np.ndarray | None = None
    kernel: str = LINEAR
    kernel_params: Mapping | None = None
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        y = check_labels(self.y)
        object.__setattr__(self, "y", y)
        if (self.gram is None) == (self.X is None):
            raise ValueError("gram, X: give exactly one of a Gram matrix or a feature matrix")
        if self.weights is not None:
            weights = check_vector(self.weights, y.shape[0], "weights")
            if (weights < 0).any():
                raise ValueError("weights: must be >= 0")
            if np.unique(y[weights > 0]).size < 2:
                raise ValueError("weights: the examples with weight > 0 have a single class or none")
            object.__setattr__(self, "weights", weights)

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def linear(self) -> bool:
        """Features under the linear kernel: the linear path, whose fits can start from another fit."""
        return self.X is not None and self.kernel == LINEAR

    def weighted(self, weights) -> TrainingProblem:
        """The same problem with example weights `weights` (n,) (0: the example is left out)."""
        return replace(self, weights=weights)

    def checked(self) -> TrainingProblem:
        """The problem with its data checked once (float64, finite, n rows), for an estimator that
        then retrains many times with check_input=False, setting the weights itself."""
        if self.weights is not None:
            raise ValueError("weights: not accepted here; this estimator sets the weights itself")
        if self.gram is not None:
            return replace(self, gram=check_gram(self.gram, self.n))
        return replace(self, X=check_features(self.X, self.n))

    def rows(self, idx):
        """What `SVMFit.decision_function` takes for training examples `idx`: their Gram rows, or their features."""
        return np.asarray(self.gram)[idx] if self.gram is not None else self.X[idx]

    def r_delta2(self) -> float:
        """R_delta^2 of the examples (`xialpha.estimators.xi_alpha.r_delta_squared`): of the Gram, or of
        the features under the kernel (an upper bound where a closed form gives one)."""
        if self.gram is not None:
            return r_delta_squared(gram=self.gram)
        return r_delta_squared(X=self.X, kernel=self.kernel, kernel_params=self.kernel_params)


@dataclass(frozen=True)
class SVMParameters:
    """How an SVM is trained (LIBLINEAR's `parameter`): the soft-margin cost C > 0, SVMlight's cost
    factor j > 0 of the positive examples (C_i = C j for y_i = +1), the stopping tolerance tol (of
    the KKT conditions, in margin units, within TOL_RANGE), and the solver's limits: max_iter
    (passes over the data on the linear path, libsvm's iterations otherwise; < 0: the solver's
    own cap) and cache_mb (libsvm's kernel cache; unused on the linear path). Checked when made."""

    C: float
    j: float = 1.0
    tol: float = DEFAULT_TOL
    max_iter: int = -1
    cache_mb: float = 200.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "C", check_positive(self.C, "C"))
        object.__setattr__(self, "j", check_positive(self.j, "j"))
        object.__setattr__(self, "tol", check_tolerance(self.tol))

    def at(self, C: float) -> SVMParameters:
        """The same parameters at another C."""
        return replace(self, C=C)


@dataclass(frozen=True, eq=False)
class SVMFit:
    """The solution of one SVM training on n examples.

    alpha: (n,) dual variables, 0 for non-support vectors; xi: (n,) slacks max(0, 1 - y f(x));
    decision: (n,) training decision values f(x_i); c_i: (n,) per-example bounds; y: (n,) labels.
    w: (d,) the weight vector on the linear path (then model is None and f(x) = x . w + b);
    model: the scikit-learn SVC on the libsvm path; precomputed: that SVC was trained on a Gram.
    X: the (n, d) CSR training features of the linear path (for estimators that need kernel rows);
    statistics: the linear path's per-training-set `RowStatistics`, reused by a fit warm-started
    from this one.
    """

    y: np.ndarray
    alpha: np.ndarray
    xi: np.ndarray
    b: float
    c_i: np.ndarray
    decision: np.ndarray
    support: np.ndarray
    fit_seconds: float
    model: SVC | None = None
    precomputed: bool = False
    w: np.ndarray | None = None
    X: object | None = None
    converged: bool = True
    statistics: RowStatistics | None = None

    @property
    def n_sv(self) -> int:
        return int(self.support.size)

    @property
    def bounded(self) -> np.ndarray:
        """(n,) bool: support vectors with alpha_i = C_i."""
        return (self.alpha > 0) & (self.alpha >= self.c_i * (1 - BOUND_RTOL))

    @property
    def n_bounded_sv(self) -> int:
        return int(self.bounded.sum())

    @property
    def stable(self) -> bool:
        """Seed section 4: stable iff at least one unbounded SV (0 < alpha_i < C_i)."""
        return bool(((self.alpha > 0) & ~self.bounded).any())

    def decision_function(self, data) -> np.ndarray:
        """Decision values f(x) for new examples, shape (m,).

        data: the (m, n) kernel values between the new examples and the n training examples
        when the fit used a Gram matrix, else the (m, d) feature matrix of the new examples.
        """
        if self.w is not None:
            features = check_features(data, name="data")
            if features.shape[1] != self.w.shape[0]:
                raise ValueError(f"data: must have {self.w.shape[0]} features (columns), got {features.shape[1]}")
            return np.asarray(features @ self.w, dtype=np.float64).ravel() + self.b
        if not self.precomputed:
            return self.model.decision_function(check_features(data, name="data"))
        cross = np.asarray(data, dtype=np.float64)
        if cross.ndim != 2 or cross.shape[1] != self.alpha.shape[0]:
            raise ValueError(f"data: must have shape (m, {self.alpha.shape[0]}), got {cross.shape}")
        if not np.all(np.isfinite(cross)):
            raise ValueError("data: contains NaN or inf")
        return cross @ (self.alpha * self.y) + self.b


def fit_svm(
    problem: TrainingProblem,
    parameters: SVMParameters,
    *,
    warm_start: SVMFit | None = None,
    check_input: bool = True,
) -> SVMFit:
    """Train a soft-margin SVM with bias on `problem` as `parameters` say (LIBLINEAR's `train`).

    Features with the linear kernel take the linear path (no Gram); a Gram matrix or features under
    a non-linear kernel take libsvm. warm_start: a fit on the same n examples to start from (the
    linear path only, e.g. the previous C of an ascending path, or the full fit for a
    leave-one-out retraining; alphas above the new bounds are clipped).
    check_input=False skips the O(n^2) finiteness scans of the data (here and in scikit-learn)
    for callers that already checked it (`TrainingProblem.checked`), e.g. many fits on one Gram.
    """
    y, n, C, j, tol, max_iter = problem.y, problem.n, parameters.C, parameters.j, parameters.tol, parameters.max_iter
    weights = np.ones(n) if problem.weights is None else problem.weights
    c_i = C * np.where(y > 0, j, 1.0) * weights
    if problem.linear:
        check_kernel(problem.kernel, problem.kernel_params)
        return _fit_linear(y, problem.X, c_i, (C, j, problem.weights), tol, max_iter, check_input, warm_start)
    if warm_start is not None:
        raise ValueError("warm_start: only the linear kernel on features (X=) can be warm-started")
    gram = problem.gram
    if gram is not None:
        data = check_gram(gram, n) if check_input else gram
        svc_kernel = {"kernel": "precomputed"}
    else:
        data = check_features(problem.X, n) if check_input else problem.X
        svc_kernel = {"kernel": problem.kernel, **check_kernel(problem.kernel, problem.kernel_params)}
    model, alpha, b, support, fit_seconds, converged = _libsvm(
        y,
        data,
        (C, j, problem.weights),
        tol,
        max_iter,
        check_input,
        cache_size=parameters.cache_mb,
        **svc_kernel,
    )
    if gram is not None:
        # a full matrix-vector product: far faster than gathering the support columns
        decision = data @ (alpha * y) + b
    else:
        decision = model.decision_function(data)
    return SVMFit(
        y=y,
        alpha=alpha,
        xi=np.maximum(0.0, 1.0 - y * decision),
        b=b,
        c_i=c_i,
        decision=decision,
        support=support,
        fit_seconds=fit_seconds,
        model=model,
        precomputed=gram is not None,
        converged=converged,
    )


def _libsvm(
    y: np.ndarray, data, bounds: tuple, tol: float, max_iter: int, check_input: bool, **svc_args
) -> tuple[SVC, np.ndarray, float, np.ndarray, float, bool]:
    """libsvm (scikit-learn's SVC) on data: (model, alpha (n,), b, support, seconds, converged).

    bounds: (C, j, sample weights or None), i.e. C_i = C * j**[y_i = +1] * w_i. max_iter < 0
    caps the iterations at max(10^7, 100 n) as libsvm itself does (scikit-learn's -1 never stops).
    scikit-learn is imported here: a linear sweep's workers, which fit on the linear path, never
    import it (about 1 s of their fork server's start, issue 47.2).
    """
    import sklearn
    from sklearn.svm import SVC

    C, j, weights = bounds
    active = np.ones(y.shape[0], dtype=bool) if weights is None else weights > 0
    if max_iter is None or max_iter < 0:
        max_iter = max(LIBSVM_MAX_ITER, 100 * y.shape[0])
    model = SVC(C=C, class_weight={1: j, -1: 1.0}, tol=tol, max_iter=max_iter, **svc_args)
    start = time.perf_counter()
    with sklearn.config_context(assume_finite=not check_input):
        model.fit(data, y, sample_weight=weights)
    seconds = time.perf_counter() - start
    # With zero weights scikit-learn drops those rows first: support_ indexes the active rows.
    support = np.flatnonzero(active)[model.support_]
    alpha = np.zeros(y.shape[0])
    dual = model.dual_coef_.toarray() if sp.issparse(model.dual_coef_) else model.dual_coef_  # sparse X gives sparse
    alpha[support] = np.abs(dual[0])
    return model, alpha, float(model.intercept_[0]), support, seconds, model.fit_status_ == 0


def _fit_linear(
    y: np.ndarray,
    X,
    c_i: np.ndarray,
    bounds: tuple,
    tol: float,
    max_iter: int,
    check_input: bool,
    warm_start: SVMFit | None,
) -> SVMFit:
    """The linear path of `fit_svm` (see `xialpha.estimators.linear`).

    Coordinate descent can stall where a few dense dimensions carry many examples at a large C;
    if it stops unconverged on at most LIBSVM_FALLBACK_ROWS examples, libsvm solves the same
    problem on X instead (kernel rows computed on demand, no Gram kept), so small dense problems
    are exact too. Larger ones keep the approximate solution with a ConvergenceWarning.
    """
    start = statistics = None
    if warm_start is not None:
        if warm_start.alpha.shape != y.shape:
            raise ValueError(f"warm_start: was fitted on {warm_start.alpha.shape[0]} examples, y has {y.shape[0]}")
        reused = _still_optimal(warm_start, y, X, c_i, tol)
        if reused is not None:
            return reused
        start, statistics = (carried_alpha(warm_start, c_i), warm_start.b), warm_start.statistics
    kwargs = {} if max_iter is None or max_iter < 0 else {"max_epochs": int(max_iter)}
    solution = solve_linear(
        X, y, c_i, tol=tol, warm_start=start, check_input=check_input, statistics=statistics, **kwargs
    )
    alpha, w, b, wx, seconds, converged, X = solution[:7]
    if not converged and int((c_i > 0).sum()) <= LIBSVM_FALLBACK_ROWS:
        _, alpha, b, _, more, converged = _libsvm(y, X, bounds, tol, max_iter, False, kernel=LINEAR)
        w, seconds = np.asarray(X.T @ (alpha * y), dtype=np.float64).ravel(), seconds + more
        wx = np.asarray(X @ w, dtype=np.float64).ravel()
    elif not converged:
        warnings.warn(
            f"linear SVM solver stopped after {kwargs.get('max_epochs', MAX_EPOCHS)} passes without "
            f"reaching tol={tol:g}; the solution is approximate",
            ConvergenceWarning,
            stacklevel=3,
        )
    decision = wx + b
    return SVMFit(
        y=y,
        alpha=alpha,
        xi=np.maximum(0.0, 1.0 - y * decision),
        b=b,
        c_i=c_i,
        decision=decision,
        support=np.flatnonzero(alpha > 0),
        fit_seconds=seconds,
        w=w,
        X=X,
        converged=converged,
        statistics=solution.statistics,
    )


def carried_alpha(warm: SVMFit, c_i: np.ndarray) -> np.ndarray:
    """The warm start's alphas (n,) for new bounds c_i (n,): those at their old bound move to the new
    bound, the others stay (`solve_linear` clips them to [0, c_i] and restores y^T alpha = 0).

    Along a C path most bounded support vectors stay bounded at the next C; moving them there at
    once spares coordinate descent raising them one by one (bench/c_path.py: fewer epochs per fit).
    """
    return np.where(warm.bounded, c_i, warm.alpha)


def _still_optimal(warm: SVMFit, y: np.ndarray, X, c_i: np.ndarray, tol: float) -> SVMFit | None:
    """The warm start itself as the fit for bounds c_i when it was trained on the same features and
    labels, converged, and already meets the stopping rule there (`meets_tolerance`); else None."""
    start = time.perf_counter()
    if not (warm.converged and warm.X is X and warm.w is not None and np.array_equal(warm.y, y)):
        return None
    if not meets_tolerance(warm.alpha, c_i, y * warm.decision, tol):
        return None
    return replace(warm, c_i=c_i, fit_seconds=time.perf_counter() - start)
