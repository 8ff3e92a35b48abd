"""Concept-drift checks on a cluster: the stream read and its window fits fanned out there.

What a check decides (Klinkenberg & Joachims 2000) is `xialpha.concept_drift.windows`; its stored rows
and report, `xialpha.concept_drift.outcome`. The corpus is read and vectorised part by part on the workers
as a sweep's is (`xialpha.jobs.data`); the driver gets the batches' sizes, not the documents. One
preprocessing is fitted on the full memory (the dated documents of the training split), its
features are stacked once on a worker in stream order and each kernel's training data (sparse
features for linear kernels, a Gram for the others) prepared there; every window's fit reuses it
with sample weights 0 outside the window. A check's rows go to the store's "drift" dataset in one
write.
"""

from __future__ import annotations

import datetime
import hashlib
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

import numpy as np
from distributed import as_completed

from xialpha.concept_drift.outcome import DriftReport, check_rows
from xialpha.concept_drift.windows import GroupCheck, WindowResult, fit_window, group_checks, window_jobs
from xialpha.errors import UserError
from xialpha.jobs import tasks
from xialpha.jobs.cluster import connect
from xialpha.jobs.data import load_spec_corpus, submit_features
from xialpha.jobs.graph import RETRIES, TASK_FAILURES, error_line
from xialpha.jobs.worker_processes import start_local_workers_early
from xialpha.spec.drift import UNKNOWN_BATCH, DriftSpec, Stream, StreamLayout, batch_keys, split_ranks, stream_layout
from xialpha.storage.contract import StoreQueries
from xialpha.storage.rows import config_key, drift_row
from xialpha.storage.schema import DriftVerdict, WindowStatus

if TYPE_CHECKING:
    from distributed import Client, Future

    from xialpha.corpora.corpus import Corpus
    from xialpha.features.blocks import FeatureBlock
    from xialpha.jobs.data import ClusterCorpus
    from xialpha.spec.drift import BatchSpec


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


def stream_data(
    spec: DriftSpec, stream: Stream, categories: list[str], preprocessing: int, kernel: int
) -> tasks.TrainingData:
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


def part_batch_keys(
    corpus: Corpus, batches: BatchSpec, train_split: str | None, ranks: dict[str, int] | None
) -> PartKeys:
    """The `PartKeys` of one final chunk (a task's work)."""
    if train_split is not None:
        assert corpus.splits is not None  # the corpus was checked to have the train split
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


def stack_stream(blocks: list[FeatureBlock], parts: list[PartKeys]) -> FeatureBlock:
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

    corpus: ClusterCorpus
    layout: StreamLayout
    keys: list[Future]
    category_counts: dict
    fingerprint: str


def load_stream(client: Client, spec: DriftSpec, run_id: str) -> ClusterStream:
    """Read the spec's corpus on the cluster and order its training split into batches there."""
    train_split = spec.corpus.train_split
    corpus = load_spec_corpus(client, spec.corpus, run_id, {"corpus.train_split": train_split})
    summary = corpus.summary
    if spec.batches.by == "split" and not summary.split_names:
        raise UserError(f'batches.by: "split" needs split labels, and corpus {summary.name!r} has none')
    ranks = split_ranks([train_split] if train_split else summary.split_names) if spec.batches.by == "split" else None
    keys = [
        client.submit(
            part_batch_keys, chunk, spec.batches, train_split, ranks, key=f"batch-keys-{i}-{run_id}", pure=False
        )
        for i, chunk in enumerate(corpus.chunks)
    ]
    found = [future.result() for future in keys]  # small: counts only (the keys stay on the workers)
    key_counts: Counter[int] = Counter()
    categories: Counter[str] = Counter()
    for part in found:
        key_counts.update(part.key_counts)
        categories.update(part.category_counts)
    n_dropped = summary.size(train_split) - sum(key_counts.values())
    layout = stream_layout(dict(key_counts), n_dropped, spec.batches, ranks, summary.name)
    digest = client.submit(keys_digest, keys, key=f"batch-keys-digest-{run_id}", pure=False).result()
    fingerprint = hashlib.sha256(f"{corpus.fingerprint(train_split)}:{digest}".encode()).hexdigest()
    return ClusterStream(corpus, layout, keys, dict(categories), fingerprint)


def check_on_cluster(
    client: Client, spec: DriftSpec, stream: ClusterStream, categories: list[str], run_id: str
) -> tuple[list[GroupCheck], dict[str, int]]:
    """The window fits of the newest batch fanned out on the cluster: each preprocessing's stream
    features stacked once on a worker, each kernel's training data prepared there; returns the
    checks and the positives of the newest batch per category."""
    jobs = window_jobs(spec, categories, stream.layout.n_batches - 1)
    starts = stream.layout.starts
    within = [client.submit(dated, keys, key=f"dated-{i}-{run_id}", pure=False) for i, keys in enumerate(stream.keys)]
    data: dict[tuple[int, int], Future] = {}  # (preprocessing, kernel) -> its training data on a worker
    stacked: dict[int, Future] = {}  # preprocessing -> its stream features on a worker
    counted: dict = {}
    for p, k in dict.fromkeys((job.preprocessing, job.kernel) for job in jobs):
        pre, kernel = spec.preprocessings[p], spec.kernels[k]
        if p not in stacked:
            features = submit_features(
                client, stream.corpus, pre, spec.corpus.train_split, None, categories, run_id, within, counted
            )
            stacked[p] = client.submit(
                stack_stream,
                features.blocks,
                stream.keys,
                key=f"stream-features-{pre.id}-{run_id}",
                retries=RETRIES,
                pure=False,
            )
        data[p, k] = client.submit(
            tasks.training_data,
            stacked[p],
            kernel,
            False,
            spec.gram_memory_limit,
            key=f"stream-data-{pre.id}-{kernel.id}-{run_id}",
            retries=RETRIES,
            pure=False,
        )
    positives = client.submit(
        newest_positives, next(iter(data.values())), starts, categories, key=f"newest-positives-{run_id}", pure=False
    )
    futures = {
        client.submit(
            fit_window,
            data[job.preprocessing, job.kernel],
            starts,
            job,
            spec.rho,
            spec.tol,
            key=f"drift-fit-{i}-{run_id}",
            retries=RETRIES,
            pure=False,
        ): i
        for i, job in enumerate(jobs)
    }
    results: list[WindowResult | None] = [None] * len(jobs)
    for future in as_completed(list(futures)):
        i = futures[future]
        try:
            results[i] = future.result()
        except TASK_FAILURES as exc:  # the window failed for its data or a lost worker: the check goes on
            results[i] = WindowResult(jobs[i], WindowStatus.FAILED, error_line(exc))
        future.release()
    checked = cast("list[WindowResult]", results)  # every window's result or failure, set above
    return group_checks(checked, spec.margin_points, spec.alpha), positives.result()


def run_drift_check(
    spec: DriftSpec,
    store: StoreQueries,
    *,
    address: str | None = None,
    workers: int | None = None,
    force: bool = False,
    on_dashboard: Callable[[str], None] | None = None,
    client: Client | None = None,
) -> DriftReport:
    """Check the newest batch on the spec's cluster (or `address`, or a running `client`, left
    open), the corpus read by its tasks, and append the rows to the store.

    A newest batch already checked with the same spec and data is not refitted unless `force`.
    """
    if client is None and spec.cluster.is_local(address):
        spec.corpus.look()  # a missing file or column answered before a cluster starts
    start = time.monotonic()
    start_local_workers_early(spec.cluster, address=address, client=client)  # imports meanwhile
    run_id = uuid.uuid4().hex[:12]
    with connect(spec.cluster, address=address, workers=workers, client=client) as client:
        if on_dashboard:
            on_dashboard(client.dashboard_link)
        stream = load_stream(client, spec, f"drift-{run_id}")
        layout = stream.layout
        categories = spec.corpus.categories.choose(stream.category_counts, stream.corpus.summary.name)
        check_key = config_key(spec=spec.identity(), data=stream.fingerprint, newest_batch=layout.batch_ids[-1])
        report = DriftReport(
            spec.id, check_key, layout.batch_ids[-1], layout.n_batches, int(layout.starts[-1]), layout.n_dropped
        )
        stored = [] if force else [drift_row(record) for record in store.drift_check(spec.id, check_key)]
        if stored and all(row.verdict is not DriftVerdict.FAILED for row in stored):
            report.rows, report.skipped = stored, True
            return report
        report.run_id = run_id
        checks, positives = check_on_cluster(client, spec, stream, categories, f"drift-{run_id}")
    checked_at = datetime.datetime.now(datetime.UTC)
    rows = check_rows(
        spec,
        layout,
        checks,
        positives,
        check_key=check_key,
        run_id=report.run_id,
        fingerprint=stream.fingerprint,
        checked_at=checked_at,
    )
    store.add_drift_check(rows)
    report.rows = rows
    report.wall_seconds = time.monotonic() - start
    return report
