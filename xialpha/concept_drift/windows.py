"""Concept-drift checks: choose the training window by the xi-alpha estimate on the newest batch.

Klinkenberg & Joachims (ICML 2000): for the newest batch t and each candidate window h (the h
most recent batches, always including t), train the SVM on the window and count the xi-alpha
indicator rho * alpha_i * R_delta^2 + xi_i >= 1 over the examples of batch t only; the window
with the smallest estimated error wins (ties: the larger window). DRIFT means the chosen window
drops older batches, the full-memory estimate is worse by more than `margin` percentage points,
and the exact one-sided sign test (`xialpha.stats.micro_sign_test`) on the paired indicators of
batch t gives p < alpha.

This module fits one window and decides, without Dask: `xialpha.jobs.drift_check` reads the stream
and fans the fits out on a cluster (or runs them in this process: `check_stream`). A fit's
`data` is a `xialpha.jobs.tasks.TrainingData` over every document of the stream in batch order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xialpha.errors import DataFailure
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import SVMParameters, fit_svm
from xialpha.estimators.xi_alpha import xi_alpha_indicator
from xialpha.spec.drift import DriftSpec
from xialpha.stats import micro_sign_test
from xialpha.storage.schema import ResultColumn, WindowStatus


@dataclass(frozen=True)
class WindowJob:
    """One fit: preprocessing and kernel indices into the spec, category, C, j, newest batch t, window h."""

    preprocessing: int
    kernel: int
    category: str
    C: float
    j: float
    newest: int
    window: int

    @property
    def group(self) -> tuple:
        """The (config, category) this window is a candidate for."""
        return self.preprocessing, self.kernel, self.category, self.C, self.j


@dataclass(frozen=True, eq=False)
class WindowResult:
    """A window's fit: the xi-alpha `estimate` over batch t's examples (indicator (n_t,)), or why not.

    status: OK; SKIPPED (the window holds a single class); FAILED (the fit raised).
    n, n_pos: training examples and positives in the window; next_estimate: real errors of the
    classifier on batch `evaluate_on` when `fit_window` was asked for it (evaluation only).
    """

    job: WindowJob
    status: WindowStatus
    message: str | None = None
    n: int = 0
    n_pos: int = 0
    r_delta2: float | None = None
    n_sv: int | None = None
    estimate: Estimate | None = None
    next_estimate: Estimate | None = None


@dataclass(frozen=True, eq=False)
class Decision:
    """The verdict for one (config, category): the chosen window against the full memory.

    full_worse / chosen_worse: examples of batch t counted as errors by one estimate only;
    p_value: exact one-sided sign test that the full memory errs more often on them.
    """

    chosen: WindowResult
    full: WindowResult
    full_worse: int
    chosen_worse: int
    p_value: float
    drift: bool


@dataclass(frozen=True, eq=False)
class GroupCheck:
    """Every window of one (config, category) and the decision, or the error that prevented it."""

    windows: list[WindowResult]
    decision: Decision | None
    error: str | None = None


def window_jobs(spec: DriftSpec, categories: list[str], newest: int) -> list[WindowJob]:
    """Fits of a check at batch index `newest`: config x category x candidate window."""
    sizes = spec.window_sizes(newest + 1)
    return [
        WindowJob(p, k, category, C, j, newest, h)
        for p in range(len(spec.preprocessings))
        for k in range(len(spec.kernels))
        for category in categories
        for C in spec.C
        for j in spec.j
        for h in sizes
    ]


def fit_window(
    data, starts: np.ndarray, job: WindowJob, rho: float, tol: float, evaluate_on: int | None = None
) -> WindowResult:
    """Train on the window's batches of `data` (all documents in batch order) and count the
    xi-alpha indicator over batch `job.newest`; R_delta^2 is the window's.

    starts: (T + 1,) document offsets of the batches. A data problem (`DataFailure`) gives status
    "failed" with its message instead of raising; any other error is a bug and is raised.
    """
    begin, first_new, end = (int(starts[b]) for b in (job.newest + 1 - job.window, job.newest, job.newest + 1))
    y = data.y_train[job.category]
    n_pos = int((y[begin:end] > 0).sum())
    counts = {ResultColumn.N: end - begin, ResultColumn.N_POS: n_pos}
    if n_pos in (0, end - begin):
        return WindowResult(job, WindowStatus.SKIPPED, "the window holds a single class", **counts)
    weights = np.zeros(y.shape[0])
    weights[begin:end] = 1.0
    try:
        r_delta2 = data.window_r_delta2(begin, end)
        fit = fit_svm(data.problem(y, weights), SVMParameters(job.C, j=job.j, tol=tol), check_input=False)
    except DataFailure as exc:
        return WindowResult(job, WindowStatus.FAILED, " ".join(str(exc).split()), **counts)
    indicator = xi_alpha_indicator(fit.alpha[first_new:end], fit.xi[first_new:end], r_delta2, rho)
    next_estimate = None
    if evaluate_on is not None:
        lo, hi = int(starts[evaluate_on]), int(starts[evaluate_on + 1])
        wrong = (fit.decision_function(data.train_rows(lo, hi)) > 0) != (y[lo:hi] > 0)
        next_estimate = Estimate.from_indicator("holdout", y[lo:hi], wrong)
    return WindowResult(
        job,
        WindowStatus.OK,
        None,
        **counts,
        r_delta2=r_delta2,
        n_sv=fit.n_sv,
        estimate=Estimate.from_indicator("xa", y[first_new:end], indicator),
        next_estimate=next_estimate,
    )


def decide(results: list[WindowResult], margin_points: float, alpha: float) -> Decision:
    """Choose the window with the smallest estimate (ties: larger) and test it against the full memory.

    Raises DataFailure when the full-memory fit has no estimate.
    """
    full = max(results, key=lambda r: r.job.window)
    if full.status != WindowStatus.OK:
        raise DataFailure(f"full memory ({full.job.window} batches): {full.message}")
    chosen = min((r for r in results if r.status == WindowStatus.OK), key=lambda r: (r.estimate.error, -r.job.window))
    ours, theirs = chosen.estimate.indicator, full.estimate.indicator
    full_worse, chosen_worse = int((theirs & ~ours).sum()), int((ours & ~theirs).sum())
    p_value = micro_sign_test(~ours, ~theirs).p_value  # k = full_worse of the discordant examples
    gap_points = 100.0 * (full.estimate.error - chosen.estimate.error)
    drift = chosen.job.window < full.job.window and gap_points > margin_points and p_value < alpha
    return Decision(chosen, full, full_worse, chosen_worse, p_value, bool(drift))


def group_checks(results: list[WindowResult], margin_points: float, alpha: float) -> list[GroupCheck]:
    """The window results grouped by (config, category), in job order, each with its decision."""
    groups: dict[tuple, list[WindowResult]] = {}
    for result in results:
        groups.setdefault(result.job.group, []).append(result)
    checks = []
    for windows in groups.values():
        try:
            checks.append(GroupCheck(windows, decide(windows, margin_points, alpha)))
        except DataFailure as exc:
            checks.append(GroupCheck(windows, None, str(exc)))
    return checks
