"""Leave-one-out retrainings on the linear path: a small working set and a certificate, no full passes.

Leaving example t out of an SVM moves its solution only a little, so most examples keep their
place: those far outside the margin stay non-support vectors. A retraining therefore solves the
dual on the working set S = {i : y_i f(x_i) < 1 + WORKING_SET_SLACK} of the full solution (every
support vector is in S), warm-started from the full solution with alpha_t = 0, and never touches
the other examples. Its solution (w', b'), extended by alpha_i = 0 outside S, solves the whole
problem without t iff every example outside S meets its KKT condition y_i f'(x_i) >= 1 - tol.

Certificate, without a pass over the data: for i outside S,

    y_i f'(x_i) = y_i f(x_i) + y_i x_i . (w' - w) + y_i (b' - b)
               >= y_i f(x_i) - ||x_i|| ||w' - w|| - |b' - b|     (Cauchy-Schwarz),

so only the examples where that lower bound falls below 1 - tol get their margin computed
exactly; violators join the working set and the retraining is solved again (rare: the slack
leaves room). The result equals a retraining on all examples within the solver's tolerance,
which tests/estimators/test_estimators_loo_linear.py checks against full retrainings.

Cost per retraining: a warm-started solve on |S| examples plus O(d + n - |S|) for the
certificate, against several passes over all n examples for a full warm-started retraining.
"""

from __future__ import annotations

import numpy as np

from xialpha.estimators.linear import solve_linear
from xialpha.estimators.svm import SVMFit

WORKING_SET_SLACK = 0.5  # margin above 1 that keeps an example in the working set


class WorkingSet:
    """The examples of a linear-path fit that leave-one-out retrainings solve on, and the certificate's data.

    fit: an SVMFit of the linear path (fit.w and fit.X set); extra: (k,) indices that must be in
    the working set too (the examples to be left out). Arrays over S are in ascending index order.
    """

    def __init__(self, fit: SVMFit, extra: np.ndarray, slack: float = WORKING_SET_SLACK):
        if fit.w is None or fit.X is None:
            raise ValueError(
                "fit: working-set retrainings need a fit of the linear path (features X with the linear kernel)"
            )
        self.fit = fit
        margin = fit.y * fit.decision
        active = fit.c_i > 0
        self._active = active
        self._class_sizes = {1: int(np.sum(active & (fit.y > 0))), -1: int(np.sum(active & (fit.y < 0)))}
        near = active & (margin < 1.0 + slack)
        near[extra] = True
        self.members = np.flatnonzero(near)
        self.outside = np.flatnonzero(active & ~near)
        self._outside_margin = margin[self.outside]
        X_out = fit.X[self.outside]
        self._outside_norm = np.sqrt(np.asarray(X_out.multiply(X_out).sum(axis=1), dtype=np.float64).ravel())
        self._refresh()

    def _refresh(self) -> None:
        """The working set's rows, labels, bounds and starting alphas, and where each member sits."""
        self.X = self.fit.X[self.members]
        self._y, self._c, self._alpha = (
            self.fit.y[self.members],
            self.fit.c_i[self.members],
            self.fit.alpha[self.members],
        )
        self.position = {int(i): k for k, i in enumerate(self.members)}

    def left_out_margin(self, t: int, tol: float) -> float:
        """y_t f^{-t}(x_t): the margin of example t under the SVM trained without it (t in the working set)."""
        fit = self.fit
        own_class = self._class_sizes[int(fit.y[t])] - int(self._active[t])
        if own_class == 0 or self._class_sizes[-int(fit.y[t])] == 0:
            return -1.0  # without t only one class is left: t is always misclassified
        while True:
            c = self._c.copy()
            c[self.position[t]] = 0.0
            solution = solve_linear(self.X, self._y, c, tol=tol, warm_start=(self._alpha, fit.b), check_input=False)
            w, b = solution.w, solution.b
            if not solution.converged:
                return _full_retrain_margin(fit, t, tol)
            violators = self._violators(w, b, tol)
            if violators.size == 0:
                return float(fit.y[t] * (solution.wx[self.position[t]] + b))
            self._admit(violators)

    def _violators(self, w: np.ndarray, b: float, tol: float) -> np.ndarray:
        """Indices outside S whose KKT condition fails for (w, b); the certificate spares most of them."""
        shift = float(np.linalg.norm(w - self.fit.w)) * self._outside_norm + abs(b - self.fit.b)
        doubtful = np.flatnonzero(self._outside_margin - shift < 1.0 - tol)
        if doubtful.size == 0:
            return doubtful
        rows = self.outside[doubtful]
        exact = self.fit.y[rows] * (np.asarray(self.fit.X[rows] @ w, dtype=np.float64).ravel() + b)
        return rows[exact < 1.0 - tol]

    def _admit(self, rows: np.ndarray) -> None:
        """Move examples from outside into the working set."""
        keep = ~np.isin(self.outside, rows)
        self.outside, self._outside_margin, self._outside_norm = (
            self.outside[keep],
            self._outside_margin[keep],
            self._outside_norm[keep],
        )
        self.members = np.union1d(self.members, rows)
        self._refresh()


def _full_retrain_margin(fit: SVMFit, t: int, tol: float) -> float:
    """The margin of t from a warm-started retraining on all examples (when the working set's solve stalls)."""
    c = fit.c_i.copy()
    c[t] = 0.0
    solution = solve_linear(fit.X, fit.y, c, tol=tol, warm_start=(fit.alpha, fit.b), check_input=False)
    return float(fit.y[t] * (solution.wx[t] + solution.b))
