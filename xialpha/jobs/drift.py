"""Concept-drift checks: choose the training window by the xi-alpha estimate on the newest batch.

Klinkenberg & Joachims (ICML 2000): for the newest batch t and each candidate window h (the h
most recent batches, always including t), train the SVM on the window and count the xi-alpha
indicator rho * alpha_i * R_delta^2 + xi_i >= 1 over the examples of batch t only; the window
with the smallest estimated error wins (ties: the larger window). DRIFT means the chosen window
drops older batches, the full-memory estimate is worse by more than `margin` percentage points,
and the exact one-sided McNemar (sign) test on the paired indicators of batch t gives p < alpha.

The corpus is read and vectorised part by part on the workers as a sweep's is
(`xialpha.jobs.data`); the driver gets the batches' sizes, not the documents. One preprocessing
is fitted on the full memory (the dated documents of the training split), its features are
stacked once on a worker in stream order and each kernel's training data (sparse features for
linear kernels, a Gram for the others) prepared there; every window's fit reuses it with sample
weights 0 outside the window. A check's rows (columns: `xialpha.storage.schema.DRIFT_COLUMNS`) go to the store's
"drift" dataset in one write, so a stored check is always complete.
"""

from __future__ import annotations

import datetime
import hashlib
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from distributed import as_completed
from scipy.stats import binomtest

from xialpha.corpora.corpus import choose_categories
from xialpha.errors import UserError
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import fit_svm
from xialpha.estimators.xialpha import xi_alpha_indicator
from xialpha.jobs import tasks
from xialpha.jobs.cluster import connect
from xialpha.jobs.data import load_spec_corpus, submit_features
from xialpha.jobs.graph import RETRIES, error_line
from xialpha.jobs.worker_processes import start_local_workers_early
from xialpha.spec.drift import UNKNOWN_BATCH, DriftSpec, Stream, StreamLayout, batch_keys, split_ranks, stream_layout
from xialpha.storage.keys import config_key
from xialpha.storage.schema import estimate_values
from xialpha.storage.store import ResultStore

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


def check_stream(spec: DriftSpec, stream: Stream, categories: list[str]) -> list[GroupCheck]:
    """Check the newest batch of `stream` (a corpus in memory) for every config and category, in
    this process; a drift check on a cluster (`run_drift_check`) fans the same fits out."""
    jobs = window_jobs(spec, categories, stream.n_batches - 1)
    data = {}
    results = []
    for job in jobs:
        if (job.preprocessing, job.kernel) not in data:
            data[job.preprocessing, job.kernel] = stream_data(spec, stream, categories, job.preprocessing, job.kernel)
        results.append(fit_window(data[job.preprocessing, job.kernel], stream.starts, job, spec.rho, spec.tol))
    return group_checks(results, spec.margin_points, spec.alpha)


def stream_data(spec: DriftSpec, stream: Stream, categories: list[str], preprocessing: int, kernel: int) -> tasks.TrainingData:
    """In this process: the preprocessing fitted on the whole stream and the kernel's training data over it."""
    features = tasks.vectorize(stream.corpus, spec.preprocessings[preprocessing], None, None, categories)
    return tasks.training_data(features, spec.kernels[kernel], False, spec.gram_memory_limit)


@dataclass(frozen=True, eq=False)
class PartKeys:
    """A part's batch keys (n,) int64 over its documents of the training split (UNKNOWN_BATCH without
    a time), {key: documents} and {category: documents} over those with a batch."""

    keys: np.ndarray
    key_counts: dict
    category_counts: dict


def part_batch_keys(corpus, batches, train_split: str | None, ranks: dict | None) -> PartKeys:
    """The `PartKeys` of one final chunk (a task's work)."""
    if train_split is not None:
        corpus = corpus.subset(corpus.splits == train_split)
    keys = batch_keys(corpus, batches, ranks)
    known = keys != UNKNOWN_BATCH
    distinct, counts = np.unique(keys[known], return_counts=True)
    categories = Counter(category for labels, dated in zip(corpus.labels, known) if dated for category in labels)
    return PartKeys(keys, dict(zip(distinct.tolist(), counts.tolist())), dict(categories))


def keys_digest(parts: list[PartKeys]) -> str:
    """sha256 hex of every document's batch key in corpus order (a drift check's data depends on them)."""
    digest = hashlib.sha256(b"xialpha-batch-keys-v1:")
    for part in parts:
        digest.update(np.ascontiguousarray(part.keys, dtype="<i8").tobytes())
    return digest.hexdigest()


def dated(part: PartKeys) -> np.ndarray:
    """(n,) bool over a part's training documents: those with a batch."""
    return part.keys != UNKNOWN_BATCH


def stack_stream(blocks: list, parts: list[PartKeys]):
    """A preprocessing's feature blocks of the dated training documents stacked in stream order:
    by batch, stably (corpus order within a batch)."""
    stacked = tasks.stack_blocks(blocks)
    keys = np.concatenate([part.keys[dated(part)] for part in parts])
    order = np.argsort(keys, kind="stable")
    return replace(stacked, X_train=stacked.X_train[order], y_train=stacked.y_train[order])


def newest_positives(data: tasks.TrainingData, starts: np.ndarray, categories: list[str]) -> dict[str, int]:
    """{category: positive documents of the newest batch}."""
    newest = slice(int(starts[-2]), int(starts[-1]))
    return {category: int((data.y_train[category][newest] > 0).sum()) for category in categories}


@dataclass
class ClusterStream:
    """A stream whose documents stay on the workers: its layout, the parts' batch keys (futures),
    the category counts of its documents and its fingerprint (documents and batch keys)."""

    corpus: object
    layout: StreamLayout
    keys: list
    category_counts: dict
    fingerprint: str


def load_stream(client, spec: DriftSpec, run_id: str) -> ClusterStream:
    """Read the spec's corpus on the cluster and order its training split into batches there."""
    train_split = spec.corpus.train_split
    corpus = load_spec_corpus(client, spec.corpus, run_id, {"corpus.train_split": train_split})
    summary = corpus.summary
    if spec.batches.by == "split" and not summary.split_names:
        raise UserError(f'batches.by: "split" needs split labels, and corpus {summary.name!r} has none')
    ranks = split_ranks([train_split] if train_split else summary.split_names) if spec.batches.by == "split" else None
    keys = [client.submit(part_batch_keys, chunk, spec.batches, train_split, ranks, key=f"batch-keys-{i}-{run_id}",
                          pure=False) for i, chunk in enumerate(corpus.chunks)]
    found = [future.result() for future in keys]  # small: counts only (the keys stay on the workers)
    key_counts, categories = Counter(), Counter()
    for part in found:
        key_counts.update(part.key_counts)
        categories.update(part.category_counts)
    n_dropped = summary.size(train_split) - sum(key_counts.values())
    layout = stream_layout(dict(key_counts), n_dropped, spec.batches, ranks, summary.name)
    digest = client.submit(keys_digest, keys, key=f"batch-keys-digest-{run_id}", pure=False).result()
    fingerprint = hashlib.sha256(f"{corpus.fingerprint(train_split)}:{digest}".encode()).hexdigest()
    return ClusterStream(corpus, layout, keys, dict(categories), fingerprint)


def check_on_cluster(client, spec: DriftSpec, stream: ClusterStream, categories: list[str],
                     run_id: str) -> tuple[list[GroupCheck], dict[str, int]]:
    """The window fits of the newest batch fanned out on the cluster: each preprocessing's stream
    features stacked once on a worker, each kernel's training data prepared there; returns the
    checks and the positives of the newest batch per category."""
    jobs = window_jobs(spec, categories, stream.layout.n_batches - 1)
    starts = stream.layout.starts
    within = [client.submit(dated, keys, key=f"dated-{i}-{run_id}", pure=False) for i, keys in enumerate(stream.keys)]
    data, stacked, counted = {}, {}, {}
    for p, k in dict.fromkeys((job.preprocessing, job.kernel) for job in jobs):
        pre, kernel = spec.preprocessings[p], spec.kernels[k]
        if p not in stacked:
            features = submit_features(client, stream.corpus, pre, spec.corpus.train_split, None, categories, run_id,
                                       within, counted)
            stacked[p] = client.submit(stack_stream, features.blocks, stream.keys, key=f"stream-features-{pre.id}-{run_id}",
                                       retries=RETRIES, pure=False)
        data[p, k] = client.submit(tasks.training_data, stacked[p], kernel, False, spec.gram_memory_limit,
                                   key=f"stream-data-{pre.id}-{kernel.id}-{run_id}", retries=RETRIES, pure=False)
    positives = client.submit(newest_positives, next(iter(data.values())), starts, categories,
                              key=f"newest-positives-{run_id}", pure=False)
    futures = {client.submit(fit_window, data[job.preprocessing, job.kernel], starts, job, spec.rho, spec.tol,
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
            results[i] = WindowResult(jobs[i], "failed", error_line(exc))
        future.release()
    return group_checks(results, spec.margin_points, spec.alpha), positives.result()


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
    open), the corpus read by its tasks, and append the rows to the store.

    A newest batch already checked with the same spec and data is not refitted unless `force`.
    """
    start = time.monotonic()
    start_local_workers_early(spec.cluster, address=address, client=client)  # imports meanwhile
    run_id = uuid.uuid4().hex[:12]
    with connect(spec.cluster, address=address, workers=workers, client=client) as client:
        if on_dashboard:
            on_dashboard(client.dashboard_link)
        stream = load_stream(client, spec, f"drift-{run_id}")
        layout, cats = stream.layout, spec.corpus.categories
        categories = choose_categories(stream.category_counts, stream.corpus.summary.name, top_k=cats.top_k,
                                       names=list(cats.names) or None, min_positives=cats.min_positives)
        check_key = config_key(spec=spec.identity(), data=stream.fingerprint, newest_batch=layout.batch_ids[-1])
        report = DriftReport(spec.id, check_key, layout.batch_ids[-1], layout.n_batches,
                             int(layout.starts[-1]), layout.n_dropped)
        stored = [] if force else store.drift_check(spec.id, check_key)
        if stored and all(row["verdict"] != "failed" for row in stored):
            report.rows, report.skipped = stored, True
            return report
        report.run_id = run_id
        checks, positives = check_on_cluster(client, spec, stream, categories, f"drift-{run_id}")
    checked_at = datetime.datetime.now(datetime.timezone.utc)
    report.rows = check_rows(spec, layout, checks, positives, check_key=check_key, run_id=report.run_id,
                             fingerprint=stream.fingerprint, checked_at=checked_at)
    store.add_drift_check(report.rows)
    report.wall_seconds = time.monotonic() - start
    return report


def check_rows(spec: DriftSpec, layout: StreamLayout, checks: list[GroupCheck], positives: dict[str, int], *,
               check_key: str, run_id: str, fingerprint: str, checked_at: datetime.datetime) -> list[dict]:
    """Rows of the drift dataset: one per config x category x window, the verdict repeated on each.
    positives: {category: positive documents of the newest batch}."""
    rows = []
    n_newest = int(layout.starts[-1] - layout.starts[-2])
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
                "data_fingerprint": fingerprint, "newest_batch": layout.batch_ids[job.newest],
                "n_batches": job.newest + 1, "category": job.category, "preprocessing_id": pre.id,
                "kernel": kernel.name, "kernel_id": kernel.id, "C": job.C, "j": job.j, "rho": spec.rho,
                "window": job.window, "window_first_batch": layout.batch_ids[job.newest + 1 - job.window],
                "full_memory": job.window == job.newest + 1, "status": result.status, "error_message": result.message,
                "n": result.n, "n_pos": result.n_pos, "n_sv": result.n_sv, "r_delta2": result.r_delta2,
                "n_newest": n_newest, "n_newest_pos": positives[job.category],
                **estimate_values(result.estimate, "xa"),
                "chosen": decision is not None and result is decision.chosen,
                **summary, "margin_points": spec.margin_points, "alpha": spec.alpha,
            })
    return rows

