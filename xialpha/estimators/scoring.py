"""Every estimate a caller asks for from one SVM training: the one scoring function of xialpha.

`one_fit_estimates` is what the sweep's tasks (`xialpha.jobs.tasks`) compute next to each fit and
what `xialpha.XiAlphaSearchCV` scores its candidates by, so a candidate of the search and the same
configuration in a sweep get the same numbers. Given the fit, the data it was trained on and the
[estimators] settings, it computes every estimator of the registry (`xialpha.estimators.registry`)
that the settings switch on: those independent of rho once, the per-rho ones (xi-alpha and
SVMlight's extended xi-alpha) at each requested rho. Turning them into stored columns is
`xialpha.storage`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

from xialpha.estimators import DEFAULT_RHO
from xialpha.estimators.kernel_rows import NamedKernelRows
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.registry import DEFAULT_SETTINGS, FitData, switched_on
from xialpha.estimators.svm import SVMFit, SVMParameters, TrainingProblem
from xialpha.estimators.validation import check_kernel


@dataclass(frozen=True, eq=False)
class OneFitEstimates:
    """The estimates of one fit. shared: those independent of rho, in registry order (each only
    when switched on); per_rho: {rho: the per-rho ones, in registry order}."""

    shared: tuple[Estimate, ...]
    per_rho: dict[float, tuple[Estimate, ...]]

    def at(self, rho: float) -> tuple[Estimate, ...]:
        """Every estimate of a results row at `rho`: the shared ones, then the per-rho ones."""
        return self.shared + self.per_rho[rho]

    def get(self, method: str, rho: float | None = None) -> Estimate:
        """The estimate of `method` ("span", "xa", ...); rho picks the xi-alpha ones (default: the only rho)."""
        if rho is None and len(self.per_rho) == 1:
            rho = next(iter(self.per_rho))
        for estimate in self.shared + self.per_rho.get(rho, ()):
            if estimate.method == method:
                return estimate
        raise KeyError(f"method: {method!r} was not computed (at rho={rho})")


def one_fit_estimates(
    fit: SVMFit,
    problem: TrainingProblem,
    parameters: SVMParameters,
    r_delta2: float,
    *,
    rhos=(DEFAULT_RHO,),
    held_out: tuple | None = None,
    **settings,
) -> OneFitEstimates:
    """The estimates of `fit`, trained by `fit_svm(problem, parameters)`.

    problem: without weights (the resampling estimators set weights themselves). The span and
        extended xi-alpha estimates read kernel blocks of the support vectors only: from the Gram
        matrix, the linear path's features, or the features under the named kernel
        (`NamedKernelRows`), never an n x n matrix that was not given.
    r_delta2: R_delta^2 of the training set (or an upper bound), for xi-alpha.
    rhos: the xi-alpha rhos; held_out: (y_test (m,), test data: (m, d) features or the (m, n)
        cross-Gram, as `SVMFit.decision_function` takes it) for the holdout estimator.
    settings: [estimators] settings by key (span=, xa_ext_depth=, exact_loo=, loo_prune=, holdout=,
        kfold=, bootstrap=, ...), the registry's defaults for the others.
    Estimates count errors over fit.y (+1 = positive); a caller with another positive class
    recounts from the indicators.
    """
    unknown = sorted(set(settings) - set(DEFAULT_SETTINGS))
    if unknown:
        raise TypeError(f"one_fit_estimates: unknown estimator setting(s) {', '.join(unknown)}")
    data = FitData(problem, parameters, r_delta2, {**DEFAULT_SETTINGS, **settings}, kernel_blocks(problem), held_out)
    estimators = switched_on(data.settings)
    shared = tuple(e.compute(fit, data) for e in estimators if not e.per_rho)
    per_rho = {rho: tuple(e.compute(fit, data.at(rho)) for e in estimators if e.per_rho) for rho in rhos}
    return OneFitEstimates(shared, per_rho)


def kernel_blocks(problem: TrainingProblem):
    """What the span and extended estimators read kernel blocks from: the Gram matrix, None on the
    linear path (the fit's own features), or the features under a named non-linear kernel."""
    if problem.gram is not None:
        return problem.gram
    if problem.linear:
        return None
    return NamedKernelRows(problem.X, problem.kernel, check_kernel(problem.kernel, problem.kernel_params))
