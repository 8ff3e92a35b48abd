"""Exact leave-one-out error, retraining only the examples the full solution cannot decide.

Training errors with xi_t > 1 (y_t f(x_t) < 0) stay errors when left out: dropping an example
from training can only increase its hinge loss. On a stable solution (one unbounded support
vector at least) non-support vectors (alpha_t = 0) stay correct: the solution without t is the
same, and b stays pinned by an unbounded support vector. Every other example is retrained with
sample weight 0 on it, so the shared Gram matrix is never copied; on the linear path the
retraining starts from the full solution and solves on a working set of the examples near the
margin, certified to equal a retraining on all (`xialpha.estimators.loo_linear`). A
leave-one-out error is y_t f^{\\t}(x_t) <= 0.

prune="xi_alpha" also skips support vectors with 2 alpha_t R_delta^2 + xi_t < 1 (Joachims 2000, Lemma 1):
far fewer retrains, but not exact. The lemma's proof moves alpha_t onto unbounded support vectors
of the full AND of the leave-one-out solution, and stability does not promise room for that.
It can miss errors with a cost factor j != 1, or where the solution without t has no unbounded
support vector (its b is then any point of an interval). tests/estimators/test_estimators_loo.py has a
five-example case; on 1,200 Reuters documents no pruned support vector was an error.
"""

from __future__ import annotations

import numpy as np

from xialpha.errors import one_of
from xialpha.estimators.loo_linear import WorkingSet
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import SVMFit, SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.validation import check_positive
from xialpha.estimators.xi_alpha import xi_alpha_indicator

# xi_t > 1 + this margin is a certain LOO error; closer calls are retrained.
CERTAIN_ERROR_MARGIN = 1e-6
PRUNE_RULES = ("support", "xi_alpha")


def loo_exact(
    problem: TrainingProblem,
    parameters: SVMParameters,
    *,
    fit: SVMFit | None = None,
    prune: str = "support",
    r_delta2: float | None = None,
) -> Estimate:
    """The exact leave-one-out estimate (method "loo") of the SVM trained by fit_svm(problem, parameters).

    problem: without weights (the retrainings set them); fit: the SVM already trained on all n
    examples so (trained here if None); prune: "support" (exact) or "xi_alpha" (fewer retrains,
    can miss errors: see the module doc); r_delta2: R_delta^2 or an upper bound, used by
    prune="xi_alpha" (computed from the data if None).
    Returns counts over the n examples, the per-example LOO-error indicator, and `retrains`.
    """
    if prune not in PRUNE_RULES:
        raise ValueError(f"prune: {one_of(prune, PRUNE_RULES)}")
    if r_delta2 is not None:
        r_delta2 = check_positive(r_delta2, "r_delta2")
    problem = problem.checked()
    y = problem.y
    if fit is None:
        fit = fit_svm(problem, parameters)
    elif not np.array_equal(fit.y, y):
        raise ValueError("fit: was trained on other labels than y")
    certain = fit.xi > 1.0 + CERTAIN_ERROR_MARGIN
    if not fit.stable:
        candidates = ~certain  # b is not unique: even non-support vectors may flip, retrain all
    elif prune == "support":
        candidates = (fit.alpha > 0) & ~certain
    else:
        if r_delta2 is None:
            r_delta2 = problem.r_delta2()
        candidates = xi_alpha_indicator(fit.alpha, fit.xi, r_delta2, rho=2.0) & ~certain
    errors = certain.copy()
    retrain = np.flatnonzero(candidates)
    if problem.linear and fit.w is not None:
        working = WorkingSet(fit, retrain)
        for t in retrain:
            errors[t] = working.left_out_margin(int(t), parameters.tol) <= 0
    else:
        for t in retrain:
            errors[t] = _left_out_margin(problem, parameters, t) <= 0
    return Estimate.from_indicator("loo", y, errors, retrains=int(candidates.sum()))


def _left_out_margin(problem: TrainingProblem, parameters: SVMParameters, t: int) -> float:
    """y_t f(x_t) for the SVM trained without example t, from scratch (the kernel path)."""
    y = problem.y
    weights = np.ones(y.shape[0])
    weights[t] = 0.0
    rest = np.delete(y, t)
    if np.all(rest == rest[0]):
        return -1.0  # without t only one class is left: t is always misclassified
    fit = fit_svm(problem.weighted(weights), parameters, check_input=False)
    return float(y[t] * fit.decision_function(problem.rows([t]))[0])
