"""`run_sweep`: spec -> corpus -> plan -> Dask graph -> rows in the store as batches finish."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from distributed import as_completed, get_task_stream

from xialpha import __version__
from xialpha.errors import UserError, did_you_mean
from xialpha.jobs.cluster import connect
from xialpha.jobs.graph import submit_plan
from xialpha.jobs.plan import Batch, SweepPlan, make_plan
from xialpha.jobs.progress import Progress
from xialpha.jobs.worker_processes import start_local_workers_early
from xialpha.spec.sweep import SweepSpec
from xialpha.storage import ResultStore, typed_table


@dataclass
class SweepSummary:
    """What a sweep did: stored keys by outcome, fits, wall seconds and the dashboard link."""

    sweep_id: str
    run_id: str
    n_keys: int
    skipped: int
    ok: int = 0
    failed: int = 0
    fits: int = 0
    wall_seconds: float = 0.0
    task_seconds: float = 0.0
    threads: int = 1
    dashboard: str | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def fits_per_second(self) -> float:
        return self.fits / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def overhead(self) -> float:
        """Thread-seconds not spent computing tasks (client work, scheduling, storage, idle
        threads), as a fraction of the task compute seconds."""
        return (self.wall_seconds * self.threads - self.task_seconds) / self.task_seconds if self.task_seconds else 0.0


def prepare(spec: SweepSpec, store: ResultStore, *, force: bool = False, threads: int = 1, progress: Progress | None = None):
    """Load the corpus, choose categories, fingerprint the data and plan what is missing
    (the stages shown on `progress`, when given)."""
    stage = progress.set_stage if progress is not None else (lambda name: None)
    stage("loading corpus")
    corpus = spec.corpus.load()
    stage("planning")
    train = _split(corpus, spec.corpus.train_split, "corpus.train_split")
    test = _split(corpus, spec.corpus.test_split, "corpus.test_split") if spec.corpus.test_split else None
    cats = spec.corpus.categories
    try:
        categories = train.choose_categories(top_k=cats.top_k, names=list(cats.names) or None,
                                             min_positives=cats.min_positives)
    except UserError as exc:
        raise UserError(f"corpus.categories.{exc}") from None
    fingerprint = spec.data_fingerprint(corpus)
    done = set() if force else store.done_keys(spec.id)
    plan = make_plan(spec, categories, fingerprint, len(train), 0 if test is None else len(test), done,
                     force=force, threads=threads)
    return corpus, plan


def run_sweep(spec: SweepSpec, store: ResultStore, *, address: str | None = None, workers: int | None = None,
              force: bool = False, progress_mode: str = "quiet", on_dashboard=None, client=None,
              command: str | None = None) -> SweepSummary:
    """Run the sweep on the spec's cluster (or `address`, or a running `client`, which is left
    open); every finished batch is stored at once. `command`: the command line, recorded with
    the run (None from Python)."""
    start = time.monotonic()
    start_local_workers_early(spec.cluster, address=address, client=client)  # imports meanwhile
    progress = Progress(None, progress_mode)
    try:
        corpus, plan = prepare(spec, store, force=force, threads=default_threads(spec, workers), progress=progress)
        progress.set_total(plan.n_fits)
        run_id = uuid.uuid4().hex[:12]
        summary = SweepSummary(spec.id, run_id, plan.n_keys, plan.n_skipped)
        if not plan.batches:
            return summary
        base_rows = [_base_row(spec, plan, batch, run_id) for batch in plan.batches]
        progress.set_stage("starting cluster")
        with connect(spec.cluster, address=address, workers=workers, client=client) as client:
            # Recorded once the cluster is reached: a bad or unreachable address leaves the store as it was.
            store.append("sweeps", typed_table("sweeps", [{
                "sweep_id": spec.id, "run_id": run_id, "spec_toml": spec.text, "spec_dir": spec.base_dir,
                "data_fingerprint": plan.fingerprint, "categories": ",".join(plan.categories),
                "xialpha_version": __version__, "command": command or ""}]))
            summary.dashboard = client.dashboard_link
            if on_dashboard:
                on_dashboard(summary.dashboard)
            progress.set_stage("sending corpus")
            with get_task_stream(client) as stream:
                futures = submit_plan(client, plan, corpus, base_rows, run_id)
                progress.watch(lambda: [key for keys in client.processing().values() for key in keys])
                _gather_and_store(futures, plan, base_rows, store, summary, progress)
            progress.set_stage("closing cluster")
            summary.task_seconds = sum(
                part["stop"] - part["start"] for task in stream.data for part in task["startstops"] if part["action"] == "compute"
            )
            # Counted once the work is done: batch-job workers (SLURM) connect after the sweep starts.
            summary.threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
    finally:
        progress.close()
    summary.wall_seconds = time.monotonic() - start
    return summary


def _gather_and_store(futures: dict, plan: SweepPlan, base_rows: list[dict], store: ResultStore,
                      summary: SweepSummary, progress: Progress) -> None:
    """Store each batch's rows as soon as its task finishes, then let the worker drop them."""
    for future in as_completed(list(futures)):
        batch = plan.batches[futures[future]]
        rows, examples = _outcome(future, batch, base_rows[futures[future]])
        progress.set_stage("storing")
        store.write_results(rows)
        if examples:
            store.write_examples(examples)
        _count(summary, rows, batch)
        progress.advance(len(batch.jobs))
        if progress.done < progress.total:
            progress.set_stage("fitting")
        future.release()


def _outcome(future, batch: Batch, base: dict) -> tuple[list[dict], list[dict]]:
    """A batch's rows, or failed rows for all its keys when the task failed after its retries."""
    try:
        return future.result()
    except Exception as exc:  # a task error after retries: record it, keep the sweep going
        message = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
        rows = [{**base, "category": job.category, "C": job.C, "j": job.j, "rho": rho, "config_key": key,
                 "status": "failed", "error_message": message, "n": 0, "n_pos": 0}
                for job in batch.jobs for rho, key in job.keys]
        return rows, []


def _count(summary: SweepSummary, rows: list[dict], batch: Batch) -> None:
    summary.fits += len(batch.jobs)
    for row in rows:
        if row["status"] == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
            if len(summary.failures) < 20:
                summary.failures.append(f"{row['category']} C={row['C']:g} j={row['j']:g}: {row['error_message']}")


def _base_row(spec: SweepSpec, plan: SweepPlan, batch: Batch, run_id: str) -> dict:
    pre = spec.preprocessings[batch.preprocessing]
    kernel = spec.kernels[batch.kernel]
    return {
        "sweep_id": spec.id,
        "run_id": run_id,
        "data_fingerprint": plan.fingerprint,
        "preprocessing_id": pre.id,
        **{f"pp_{name}": value for name, value in pre.params().items()},
        "kernel": kernel.name,
        "kernel_id": kernel.id,
        **{name: value for name, value in kernel.params().items() if name != "name"},
    }


def _split(corpus, name: str | None, field_name: str):
    if name is None:
        return corpus
    if name not in corpus.split_names:
        raise UserError(f"{field_name}: the corpus has no split {name!r}"
                        f"{did_you_mean(name, corpus.split_names, listing='it has') if corpus.split_names else ' (it has none)'}")
    return corpus.split(name)


def default_threads(spec: SweepSpec, workers: int | None) -> int:
    """Worker threads the sweep will have: --workers, [cluster] workers or the cores, times threads."""
    import os

    n = workers or spec.cluster.workers or os.cpu_count() or 1
    return n * spec.cluster.threads_per_worker
