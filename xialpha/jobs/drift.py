"""Concept-drift checks: choose the training window by the xi-alpha estimate on the newest batch.

Klinkenberg & Joachims (ICML 2000): for the newest batch t and each candidate window h (the h
most recent batches, always including t), train the SVM on the window and count the xi-alpha
indicator rho * alpha_i * R_delta^2 + xi_i >= 1 over the examples of batch t only; the window
with the smallest estimated error wins (ties: the larger window). DRIFT means the chosen window
drops older batches, the full-memory estimate is worse by more than `margin` percentage points,
and the exact one-sided McNemar (sign) test on the paired indicators of batch t gives p < alpha.

One preprocessing is fitted on the full memory and its training data over all documents (sparse
features for linear kernels, a Gram for the others) is prepared once on a worker by the sweep's
own graph code (`xialpha.jobs.graph`); every window's fit reuses it with sample weights 0 outside
the window. A check's rows (columns: `xialpha.storage.schema.DRIFT_COLUMNS`) go to the store's
"drift" dataset in one write, so a stored check is always complete.
"""

from __future__ import annotations

import datetime
import hashlib
import time
import uuid
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import binomtest

from xialpha.errors import UserError
from xialpha.estimators import Estimate, fit_svm, xi_alpha_indicator
from xialpha.jobs import tasks
from xialpha.spec.drift import DriftSpec, Stream, split_batches
from xialpha.jobs.graph import RETRIES, submit_corpus, submit_training_data
from xialpha.storage import ResultStore, config_key, estimate_values, typed_table

EXIT_NO_DRIFT, EXIT_FAILED, EXIT_DRIFT = 0, 1, 3

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

    status: "ok"; "skipped" (the window holds a single class); "failed" (the fit raised).
    n, n_pos: training examples and positives in the window; next_estimate: real errors of the
    classifier on batch `evaluate_on` when `fit_window` was asked for it (evaluation only).
    """

    job: WindowJob
    status: str
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
    return [WindowJob(p, k, category, C, j, newest, h)
            for p in range(len(spec.preprocessings)) for k in range(len(spec.kernels))
            for category in categories for C in spec.C for j in spec.j for h in sizes]


def fit_window(data: tasks.TrainingData, starts: np.ndarray, job: WindowJob, rho: float, tol: float,
               evaluate_on: int | None = None) -> WindowResult:
    """Train on the window's batches of `data` (all documents in batch order) and count the
    xi-alpha indicator over batch `job.newest`; R_delta^2 is the window's.

    starts: (T + 1,) document offsets of the batches. A data problem (ValueError) gives status
    "failed" with its message instead of raising.
    """
    begin, first_new, end = (int(starts[b]) for b in (job.newest + 1 - job.window, job.newest, job.newest + 1))
    y = data.y_train[job.category]
    n_pos = int((y[begin:end] > 0).sum())
    counts = {"n": end - begin, "n_pos": n_pos}
    if n_pos in (0, end - begin):
        return WindowResult(job, "skipped", "the window holds a single class", **counts)
    weights = np.zeros(y.shape[0])
    weights[begin:end] = 1.0
    try:
        r_delta2 = data.window_r_delta2(begin, end)
        fit = fit_svm(y, job.C, j=job.j, sample_weight=weights, tol=tol, check_input=False, **data.svm_args())
    except ValueError as exc:
        return WindowResult(job, "failed", " ".join(str(exc).split()), **counts)
    indicator = xi_alpha_indicator(fit.alpha[first_new:end], fit.xi[first_new:end], r_delta2, rho)
    next_estimate = None
    if evaluate_on is not None:
        lo, hi = int(starts[evaluate_on]), int(starts[evaluate_on + 1])
        wrong = (fit.decision_function(data.train_rows(lo, hi)) > 0) != (y[lo:hi] > 0)
        next_estimate = Estimate.from_indicator("holdout", y[lo:hi], wrong)
    return WindowResult(job, "ok", None, **counts, r_delta2=r_delta2, n_sv=fit.n_sv,
                        estimate=Estimate.from_indicator("xa", y[first_new:end], indicator),
                        next_estimate=next_estimate)


def decide(results: list[WindowResult], margin_points: float, alpha: float) -> Decision:
    """Choose the window with the smallest estimate (ties: larger) and test it against the full memory.

    Raises ValueError when the full-memory fit has no estimate.
    """
    full = max(results, key=lambda r: r.job.window)
    if full.status != "ok":
        raise ValueError(f"full memory ({full.job.window} batches): {full.message}")
    chosen = min((r for r in results if r.status == "ok"), key=lambda r: (r.estimate.error, -r.job.window))
    ours, theirs = chosen.estimate.indicator, full.estimate.indicator
    full_worse, chosen_worse = int((theirs & ~ours).sum()), int((ours & ~theirs).sum())
    discordant = full_worse + chosen_worse
    p_value = float(binomtest(full_worse, discordant, 0.5, alternative="greater").pvalue) if discordant else 1.0
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
        except ValueError as exc:
            checks.append(GroupCheck(windows, None, str(exc)))
    return checks


def check_stream(spec: DriftSpec, stream: Stream, categories: list[str], client=None,
                 run_id: str = "local") -> list[GroupCheck]:
    """Check the newest batch of `stream` for every config and category.

    client: a Dask client to fan the fits out on; None runs the same functions in this process.
    """
    jobs = window_jobs(spec, categories, stream.n_batches - 1)
    if client is None:
        data = {}
        results = []
        for job in jobs:
            if (job.preprocessing, job.kernel) not in data:
                data[job.preprocessing, job.kernel] = stream_data(spec, stream, categories, job.preprocessing, job.kernel)
            results.append(fit_window(data[job.preprocessing, job.kernel], stream.starts, job, spec.rho, spec.tol))
    else:
        results = _fit_on_cluster(client, spec, stream, categories, jobs, run_id)
    return group_checks(results, spec.margin_points, spec.alpha)


def stream_data(spec: DriftSpec, stream: Stream, categories: list[str], preprocessing: int, kernel: int) -> tasks.TrainingData:
    """In this process: the preprocessing fitted on the whole stream and the kernel's training data over it."""
    features = tasks.vectorize(stream.corpus, spec.preprocessings[preprocessing], None, None, categories)
    return tasks.training_data(features, spec.kernels[kernel], False, spec.gram_memory_limit)


def _fit_on_cluster(client, spec: DriftSpec, stream: Stream, categories: list[str], jobs: list[WindowJob],
                    run_id: str) -> list[WindowResult]:
    """Prepare each training data once on a worker (the sweep's graph code), fan the window fits out, collect results."""
    from distributed import as_completed

    pairs = list(dict.fromkeys((job.preprocessing, job.kernel) for job in jobs))
    corpus_future = submit_corpus(client, stream.corpus, f"drift-{run_id}")
    data = submit_training_data(client, pairs, spec, categories, corpus_future, None, None, False, f"drift-{run_id}")
    futures = {client.submit(fit_window, data[job.preprocessing, job.kernel], stream.starts, job, spec.rho, spec.tol,
                             key=f"drift-fit-{i}-{run_id}", retries=RETRIES, pure=False): i
               for i, job in enumerate(jobs)}
    results: list[WindowResult | None] = [None] * len(jobs)
    for future in as_completed(list(futures)):
        i = futures[future]
        try:
            results[i] = future.result()
        except UserError:
            raise
        except Exception as exc:  # a task error after its retries: the window failed, the check goes on
            message = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
            results[i] = WindowResult(jobs[i], "failed", message)
        future.release()
    return results


@dataclass
class DriftReport:
    """One `xialpha drift` run: the check's identity and its stored rows (one per config x category x window).

    skipped: the newest batch was already checked with this spec and data, `rows` are the stored ones.
    """

    drift_id: str
    check_key: str
    newest_batch: str
    n_batches: int
    n_documents: int
    n_dropped: int
    rows: list[dict] = field(default_factory=list)
    skipped: bool = False
    run_id: str | None = None
    wall_seconds: float = 0.0

    def verdicts(self) -> dict[tuple, dict]:
        """{(category, preprocessing_id, kernel_id, C, j): the row of the chosen window, or any row if failed}."""
        out: dict[tuple, dict] = {}
        for row in self.rows:
            key = (row["category"], row["preprocessing_id"], row["kernel_id"], row["C"], row["j"])
            if key not in out or row["chosen"]:
                out[key] = row
        return out

    @property
    def n_drift(self) -> int:
        return sum(row["verdict"] == "drift" for row in self.verdicts().values())

    @property
    def n_failed(self) -> int:
        return sum(row["verdict"] == "failed" for row in self.verdicts().values())

    @property
    def exit_code(self) -> int:
        """1 if any check failed, else 3 if any drift, else 0."""
        return EXIT_FAILED if self.n_failed else EXIT_DRIFT if self.n_drift else EXIT_NO_DRIFT


def run_drift_check(spec: DriftSpec, store: ResultStore, *, address: str | None = None, workers: int | None = None,
                    force: bool = False, on_dashboard=None, client=None) -> DriftReport:
    """Check the newest batch on the spec's cluster (or `address`, or a running `client`, left
    open) and append the rows to the store.

    A newest batch already checked with the same spec and data is not recomputed unless `force`.
    """
    from xialpha.jobs.cluster import connect
    from xialpha.jobs.worker_processes import start_local_workers_early

    start = time.monotonic()
    start_local_workers_early(spec.cluster, address=address, client=client)  # imports meanwhile
    stream = split_batches(spec.corpus.load(), spec.batches, spec.corpus.train_split)
    cats = spec.corpus.categories
    categories = stream.corpus.choose_categories(top_k=cats.top_k, names=list(cats.names) or None,
                                                 min_positives=cats.min_positives)
    fingerprint = stream_fingerprint(stream)
    check_key = config_key(spec=spec.identity(), data=fingerprint, newest_batch=stream.batch_ids[-1])
    report = DriftReport(spec.id, check_key, stream.batch_ids[-1], stream.n_batches, len(stream.corpus), stream.n_dropped)
    stored = [] if force else stored_check(store, spec.id, check_key)
    if stored and all(row["verdict"] != "failed" for row in stored):
        report.rows, report.skipped = stored, True
        return report
    report.run_id = uuid.uuid4().hex[:12]
    with connect(spec.cluster, address=address, workers=workers, client=client) as client:
        if on_dashboard:
            on_dashboard(client.dashboard_link)
        checks = check_stream(spec, stream, categories, client=client, run_id=report.run_id)
    checked_at = datetime.datetime.now(datetime.timezone.utc)
    report.rows = check_rows(spec, stream, checks, check_key=check_key, run_id=report.run_id,
                             fingerprint=fingerprint, checked_at=checked_at)
    store.append("drift", typed_table("drift", report.rows))
    report.wall_seconds = time.monotonic() - start
    return report


def stream_fingerprint(stream: Stream) -> str:
    """sha256 over the documents, labels and batch ids of the stream."""
    digest = hashlib.sha256(stream.corpus.fingerprint().encode())
    digest.update("\x1f".join(stream.batch_labels().tolist()).encode("utf-8"))
    return digest.hexdigest()


def stored_check(store: ResultStore, drift_id: str, check_key: str) -> list[dict]:
    """The stored rows of check `check_key` ([] if none)."""
    return store.read("drift", filters=[("check_key", "=", check_key)], sweep_id=drift_id).to_pylist()


def check_rows(spec: DriftSpec, stream: Stream, checks: list[GroupCheck], *, check_key: str, run_id: str,
               fingerprint: str, checked_at: datetime.datetime) -> list[dict]:
    """Rows of the drift dataset: one per config x category x window, the verdict repeated on each."""
    rows = []
    newest = slice(int(stream.starts[-2]), int(stream.starts[-1]))
    positives = {category: int((stream.corpus.y(category)[newest] > 0).sum())
                 for category in dict.fromkeys(check.windows[0].job.category for check in checks)}
    for check in checks:
        decision = check.decision
        summary = {
            "verdict": "failed" if decision is None else "drift" if decision.drift else "no drift",
            "check_error": check.error,
            "chosen_window": None if decision is None else decision.chosen.job.window,
            "chosen_error": None if decision is None else decision.chosen.estimate.error,
            "full_error": None if decision is None else decision.full.estimate.error,
            "full_worse": None if decision is None else decision.full_worse,
            "chosen_worse": None if decision is None else decision.chosen_worse,
            "p_value": None if decision is None else decision.p_value,
        }
        for result in check.windows:
            job = result.job
            pre, kernel = spec.preprocessings[job.preprocessing], spec.kernels[job.kernel]
            rows.append({
                "check_id": config_key(check_key=check_key, preprocessing=pre.id, kernel=kernel.id,
                                       category=job.category, C=job.C, j=job.j, window=job.window),
                "check_key": check_key, "sweep_id": spec.id, "run_id": run_id, "checked_at": checked_at,
                "data_fingerprint": fingerprint, "newest_batch": stream.batch_ids[job.newest],
                "n_batches": job.newest + 1, "category": job.category, "preprocessing_id": pre.id,
                "kernel": kernel.name, "kernel_id": kernel.id, "C": job.C, "j": job.j, "rho": spec.rho,
                "window": job.window, "window_first_batch": stream.batch_ids[job.newest + 1 - job.window],
                "full_memory": job.window == job.newest + 1, "status": result.status, "error_message": result.message,
                "n": result.n, "n_pos": result.n_pos, "n_sv": result.n_sv, "r_delta2": result.r_delta2,
                "n_newest": newest.stop - newest.start, "n_newest_pos": positives[job.category],
                **estimate_values(result.estimate, "xa"),
                "chosen": decision is not None and result is decision.chosen,
                **summary, "margin_points": spec.margin_points, "alpha": spec.alpha,
            })
    return rows

