"""Every estimate a caller asks for from one SVM training: the one scoring function of xialpha.

`one_fit_estimates` is what the sweep's tasks (`xialpha.jobs.tasks`) compute next to each fit and
what `xialpha.XiAlphaSearchCV` scores its candidates by, so a candidate of the search and the same
configuration in a sweep get the same numbers. Given the fit and the data it was trained on it
returns `Estimate` objects: the training errors ("apparent"), and as asked the span estimate,
exact leave-one-out, k-fold, bootstrap and held-out errors (independent of rho), and xi-alpha and
SVMlight's extended xi-alpha at each requested rho. Turning them into stored columns is
`xialpha.storage`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

from xialpha.estimators.baselines import apparent, bootstrap, holdout, kfold
from xialpha.estimators.extended import xi_alpha_extended
from xialpha.estimators.kernel_rows import NamedKernelRows
from xialpha.estimators.loo import loo_exact
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMFit
from xialpha.estimators.validation import check_kernel
from xialpha.estimators.xialpha import xi_alpha


@dataclass(frozen=True, eq=False)
class OneFitEstimates:
    """The estimates of one fit. shared: those independent of rho, in the order apparent, span,
    loo, kfold, bootstrap, holdout (each only when asked for); per_rho: {rho: (xa, [xa_ext])}."""

    shared: tuple[Estimate, ...]
    per_rho: dict[float, tuple[Estimate, ...]]

    def at(self, rho: float) -> tuple[Estimate, ...]:
        """Every estimate of a results row at `rho`: the shared ones, then xa (and xa_ext)."""
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
    C: float,
    svm_args: dict,
    r_delta2: float,
    *,
    rhos=(1.0,),
    span: bool = True,
    xa_ext_depth: int = 0,
    exact_loo: bool = False,
    loo_prune: str = "support",
    kfold_k: int = 0,
    bootstrap_n: int = 0,
    holdout_data: tuple | None = None,
) -> OneFitEstimates:
    """The estimates of `fit`, trained by `fit_svm(fit.y, C, **svm_args)`.

    svm_args: the training data and settings as `fit_svm` takes them: gram= (n, n), or X= (n, d)
        with kernel= and kernel_params= (explicit gamma), plus j= and tol=; no sample_weight (the
        resampling estimators set weights themselves). The span and extended xi-alpha estimates
        read kernel blocks of the support vectors only: from the Gram matrix, the linear path's
        features, or the features under the named kernel (`NamedKernelRows`), never an n x n matrix
        that was not given.
    r_delta2: R_delta^2 of the training set (or an upper bound), for xi-alpha.
    rhos: the xi-alpha rhos; span: the span estimate; xa_ext_depth: > 0 adds the extended xi-alpha
        at that search depth per rho; exact_loo with loo_prune ("support" or "xi_alpha"); kfold_k: k
        > 0 adds k-fold CV; bootstrap_n: B > 0 adds the .632 bootstrap over B replicates;
        holdout_data: (y_test (m,), test data) adds the held-out errors (test data: (m, d) features
        or the (m, n) cross-Gram, as `SVMFit.decision_function` takes it).
    Estimates count errors over fit.y (+1 = positive); a caller with another positive class
    recounts from the indicators.
    """
    y = fit.y
    kernel = _kernel_blocks(svm_args)
    shared = [apparent(fit)]
    if span:
        shared.append(span_estimate(fit, kernel))
    if exact_loo:
        shared.append(loo_exact(y, C, fit=fit, prune=loo_prune, r_delta2=r_delta2, **svm_args))
    if kfold_k:
        shared.append(kfold(y, C, k=kfold_k, fit=fit, **svm_args))
    if bootstrap_n:
        shared.append(bootstrap(y, C, n_boot=bootstrap_n, fit=fit, **svm_args))
    if holdout_data is not None:
        shared.append(holdout(fit, *holdout_data))
    per_rho = {}
    for rho in rhos:
        per_rho[rho] = (xi_alpha(fit.alpha, fit.xi, y, r_delta2, rho),)
        if xa_ext_depth:
            per_rho[rho] += (xi_alpha_extended(fit, kernel, r_delta2, rho=rho, depth=xa_ext_depth),)
    return OneFitEstimates(tuple(shared), per_rho)


def _kernel_blocks(svm_args: dict):
    """What the span and extended estimators read kernel blocks from: the Gram matrix, None on the
    linear path (the fit's own features), or the features under a named non-linear kernel."""
    if svm_args.get("gram") is not None:
        return svm_args["gram"]
    kernel = svm_args.get("kernel", "linear")
    if kernel == "linear":
        return None
    return NamedKernelRows(svm_args["X"], kernel, check_kernel(kernel, svm_args.get("kernel_params")))
