"""`run_sweep`: spec -> cluster -> corpus read on it -> plan -> Dask graph -> rows in the store as batches finish."""

from __future__ import annotations

import contextlib
import datetime
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from distributed import Client, Future, as_completed, get_task_stream

from xialpha.errors import StoreWarning, StoreWriteError, UserError
from xialpha.jobs.auto import AutoRounds, run_rounds
from xialpha.jobs.cluster import connect
from xialpha.jobs.data import ClusterCorpus, load_spec_corpus
from xialpha.jobs.graph import FIT_TASK, TASK_FAILURES, SweepData, error_line, submit_plan
from xialpha.jobs.progress import Progress, ProgressMode
from xialpha.jobs.sweep_plan import default_threads, plan_sweep
from xialpha.jobs.tasks import failed_rows
from xialpha.jobs.worker_processes import PreloadReport, start_local_workers_early
from xialpha.planning.experiment import joined_categories
from xialpha.planning.plan import Batch, SweepPlan, make_plan
from xialpha.printable import printable, redact
from xialpha.spec.sweep import SweepSpec
from xialpha.storage.contract import StoreQueries
from xialpha.storage.rows import BatchColumns, ExampleRow, FailedRow, ResultRow, RunRow
from xialpha.storage.validate import first_line
from xialpha.version import __version__


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
    held_out_without_positives: list[str] = field(default_factory=list)  # categories: held-out recall, F1 undefined
    auto: AutoRounds | None = None  # what svm.C = "auto" did (its rounds), None for a grid of C
    fit_task_seconds: float = 0.0  # compute seconds of the fit tasks (fits, estimates, their rows)
    phases: dict[str, float] = field(default_factory=dict)  # seconds of each of PHASES (a sweep that fitted)

    @property
    def fixed_seconds(self) -> float:
        """The sweep's fixed cost: its wall seconds beyond the fit tasks' critical path on its threads
        (fit_task_seconds / threads, the wall of the fits alone, perfectly balanced); the sum of `phases`."""
        return self.wall_seconds - self.fit_task_seconds / max(self.threads, 1)

    @property
    def held_out_note(self) -> str | None:
        """One sentence naming the categories whose held-out recall, precision and F1 are empty."""
        if not self.held_out_without_positives:
            return None
        names = ", ".join(self.held_out_without_positives)
        return (
            f"no positive document in the held-out split for {names}: swept, with held-out error but "
            "empty held-out recall, precision and F1"
        )

    @property
    def fits_per_second(self) -> float:
        return self.fits / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def overhead(self) -> float:
        """Thread-seconds not spent computing tasks (client work, scheduling, storage, idle
        threads), as a fraction of the task compute seconds."""
        return (self.wall_seconds * self.threads - self.task_seconds) / self.task_seconds if self.task_seconds else 0.0


# Where a sweep's wall seconds go besides its fits (SweepSummary.phases; they sum to fixed_seconds).
PHASES = (
    "cluster_start",  # the cluster started (or reached) and connected
    "corpus_load",  # the corpus read on the workers, summarised and fingerprinted
    "planning",  # categories, the store's done keys, the plan, the run recorded
    "to_first_fit",  # the features made and the fits submitted, until the first fit task starts
    "fit_imbalance",  # the first fit task's start to the last one's end, beyond fit_task_seconds / threads
    "storing_tail",  # from the last fit task's end until every row is stored
    "cluster_close",  # the cluster closed (or left, when it was given)
    "finish",  # the sweep's files compacted and its summary stored (`StoreQueries.finish_sweep`)
)


def prepare(
    spec: SweepSpec,
    store: StoreQueries,
    client: Client,
    run_id: str,
    *,
    force: bool = False,
    threads: int = 1,
    progress: Progress | None = None,
    force_new_run: bool = False,
) -> tuple[ClusterCorpus, SweepPlan]:
    """Load the corpus on the cluster, choose categories, fingerprint the data, check that the
    sweep's id holds no other experiment (unless `force_new_run`: see `check_same_experiment`)
    and plan what is missing (the stages shown on `progress`, when given). The driver gets the
    corpus's summary and fingerprints, never its documents."""
    stage = progress.set_stage if progress is not None else (lambda name: None)
    stage("loading corpus")
    train_split, test_split = spec.corpus.train_split, spec.corpus.test_split
    corpus = load_spec_corpus(
        client, spec.corpus, run_id, {"corpus.train_split": train_split, "corpus.test_split": test_split}
    )
    stage("planning")
    fingerprint = spec.data_fingerprint(corpus.fingerprint)
    plan = plan_sweep(
        spec, store, corpus.summary, fingerprint, force=force, threads=threads, force_new_run=force_new_run
    )
    return corpus, plan


def run_sweep(
    spec: SweepSpec,
    store: StoreQueries,
    *,
    address: str | None = None,
    workers: int | None = None,
    force: bool = False,
    progress_mode: ProgressMode = ProgressMode.QUIET,
    on_dashboard: Callable[[str], None] | None = None,
    client: Client | None = None,
    command: str | None = None,
    force_new_run: bool = False,
) -> SweepSummary:
    """Run the sweep on the spec's cluster (or `address`, or a running `client`, which is left
    open); the corpus is read by its tasks, and every finished batch is stored at once.
    `command`: the command line, recorded with the run (None from Python). force_new_run: run
    under an id whose recorded run had other data or another grid (see `check_same_experiment`)."""
    if client is None and spec.cluster.is_local(address):
        spec.corpus.look()  # a missing file or column answered before a cluster starts
    start, start_clock = time.monotonic(), time.time()
    start_local_workers_early(spec.cluster, address=address, client=client)  # imports meanwhile
    progress = Progress(None, progress_mode)
    run_id = uuid.uuid4().hex[:12]
    threads = default_threads(spec, workers)
    run = _RunRecord(store)
    try:
        with _cluster(spec, address, workers, client, progress, on_dashboard) as client:
            with get_task_stream(client) as stream:
                corpus, plan = prepare(
                    spec,
                    store,
                    client,
                    run_id,
                    force=force,
                    threads=threads,
                    progress=progress,
                    force_new_run=force_new_run,
                )
                progress.set_total(plan.n_fits)
                summary = _planned_summary(spec, run_id, plan, corpus, client)
                if not plan.batches and not spec.C_auto:
                    return summary
                # Recorded once the corpus is read: a bad corpus or an unreachable cluster leaves the store as it was.
                run.start(_run_row(spec, plan, run_id, command))
                data = _vectorise(client, spec, corpus, plan, run_id, progress)
                del corpus  # the driver keeps no handle on the parts: the fits' futures (`data`) hold what they need
                fit_round = _RoundFitter(client, spec, store, data, run_id, summary, progress)
                if spec.C_auto:
                    _fit_auto(client, spec, store, data, plan, fit_round, summary, force=force, threads=threads)
                else:
                    fit_round(plan)
            progress.set_stage("closing cluster")
            fits = _time_tasks(summary, stream.data, start_clock, client)
            run.finish()  # every row is stored: the run's end recorded, the files compacted while the cluster closes
            finished = _finish_meanwhile(store, spec.id)
        closed = time.monotonic() - start
    finally:
        progress.close()
        run.finish()  # when the run failed; its own error, if any (an unwritable store, say), is the one to report
    finished()
    summary.wall_seconds = time.monotonic() - start
    if fits:
        entered = {stage: when - start for stage, when in progress.entered.items()}
        summary.phases = _phases(entered, fits, closed, summary)
    return summary


def _planned_summary(
    spec: SweepSpec, run_id: str, plan: SweepPlan, corpus: ClusterCorpus, client: Client
) -> SweepSummary:
    """The summary of the run `run_id` as planned, before anything is fitted: its keys and those skipped."""
    return SweepSummary(
        spec.id,
        run_id,
        plan.n_keys,
        plan.n_skipped,
        dashboard=client.dashboard_link,
        held_out_without_positives=_without_positives(spec, corpus, plan.categories),
    )


@contextlib.contextmanager
def _cluster(
    spec: SweepSpec,
    address: str | None,
    workers: int | None,
    client: Client | None,
    progress: Progress,
    on_dashboard: Callable[[str], None] | None,
) -> Iterator[Client]:
    """Inside: the client of the sweep's cluster (`connect`), its workers' preload notes shown and
    its dashboard's link given to `on_dashboard`."""
    progress.set_stage("starting cluster")
    preload = PreloadReport()  # numba compiling in the fork server, a damaged cache
    progress.follow(preload.stage, "starting cluster")
    with connect(spec.cluster, address=address, workers=workers, client=client) as connected:
        _report_preload(preload, progress)
        if on_dashboard:
            on_dashboard(connected.dashboard_link)
        yield connected


@dataclass
class _RunRecord:
    """The run's row in `store`, once stored (`start`), written again with finished_at when the run ends (`finish`)."""

    store: StoreQueries
    row: RunRow | None = None

    def start(self, row: RunRow) -> None:
        """Store `row`, the run's record as it starts; `finish` writes it again."""
        self.store.add_run(row)
        self.row = row

    def finish(self) -> None:
        """Store the row with finished_at, once (nothing when none was stored); a failure to is let pass."""
        if self.row is None:
            return
        with contextlib.suppress(Exception):
            self.store.add_run(replace(self.row, finished_at=_now()))
        self.row = None


def _run_row(spec: SweepSpec, plan: SweepPlan, run_id: str, command: str | None) -> RunRow:
    """The record of the run `run_id` of `spec` on the data and categories of `plan`, started now."""
    return RunRow(
        spec.id,
        run_id,
        redact(spec.text),
        spec.base_dir,
        plan.fingerprint,
        joined_categories(plan.categories),
        __version__,
        redact(command or ""),
        _now(),
    )


def _vectorise(
    client: Client, spec: SweepSpec, corpus: ClusterCorpus, plan: SweepPlan, run_id: str, progress: Progress
) -> SweepData:
    """The features of `corpus` for the sweep's fits (`SweepData`), and `progress` watching the tasks."""
    progress.set_stage("vectorising")
    data = SweepData(client, spec, corpus, plan.categories, run_id)
    progress.watch(lambda: [key for keys in client.processing().values() for key in keys])
    return data


@dataclass
class _RoundFitter:
    """Fits a plan (a grid's, or a round's of an auto sweep: `xialpha.jobs.auto.FitRound`) on the
    cluster and stores each batch's rows as it finishes, counted in `summary`."""

    client: Client
    spec: SweepSpec
    store: StoreQueries
    data: SweepData
    run_id: str
    summary: SweepSummary
    progress: Progress

    def __call__(
        self,
        plan: SweepPlan,
        homes: list[str | None] | None = None,
        tag: str = "",
        warm: dict[int, list[Future]] | None = None,
        ends: dict[int, Future] | None = None,
    ) -> None:
        """Fit `plan`'s batches (on `homes`, their task keys tagged `tag`, warm-started from `warm`;
        `ends` filled with their end fits: `submit_plan`) and store their rows."""
        columns = [batch_columns(self.spec, plan, batch, self.run_id) for batch in plan.batches]
        self.progress.set_total(self.progress.done + plan.n_fits)
        futures = submit_plan(
            self.client, plan, None, columns, self.run_id, data=self.data, homes=homes, tag=tag, warm=warm, ends=ends
        )
        if not self.spec.C_auto:
            self.data.corpus = None  # one round: every feature it needs is submitted
        _gather_and_store(futures, plan, columns, self.store, self.summary, self.progress)


def _fit_auto(
    client: Client,
    spec: SweepSpec,
    store: StoreQueries,
    data: SweepData,
    first: SweepPlan,
    fit_round: _RoundFitter,
    summary: SweepSummary,
    *,
    force: bool,
    threads: int,
) -> None:
    """Fit an auto sweep's rounds (`run_rounds`; `first`: its plan without C) and count its keys in `summary`."""
    summary.auto = run_rounds(client, spec, store, data, first, fit_round, force=force, threads=threads)
    summary.n_keys = _auto_keys(spec, first, summary.auto)
    summary.skipped = max(summary.n_keys - summary.ok - summary.failed, 0)


def _time_tasks(
    summary: SweepSummary, stream: list[dict], start_clock: float, client: Client
) -> list[tuple[float, float]]:
    """Set `summary`'s task and fit-task compute seconds from the task `stream` (`get_task_stream`'s
    data) and its threads from the cluster's workers; returns the fit tasks' (start, stop), seconds
    after `start_clock` (the epoch seconds the sweep started)."""
    computed = [
        (task["key"], part["start"] - start_clock, part["stop"] - start_clock)
        for task in stream
        for part in task["startstops"]
        if part["action"] == "compute"
    ]
    summary.task_seconds = sum(stop - begin for _, begin, stop in computed)
    fits = [(begin, stop) for key, begin, stop in computed if str(key).startswith(FIT_TASK)]
    summary.fit_task_seconds = sum(stop - begin for begin, stop in fits)
    # Counted once the work is done: batch-job workers (SLURM) connect after the sweep starts.
    summary.threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
    return fits


def _report_preload(preload: PreloadReport, progress: Progress) -> None:
    """The notes of the workers' fork server's preload shown (a damaged numba cache compiled
    again), and its error raised (one it could not clear); each once per process."""
    notes, errors = preload.news()
    for note in notes:
        progress.note(printable(note))
    if errors:
        raise UserError(errors[0])


def _phases(entered: dict[str, float], fits: list[tuple[float, float]], closed: float, summary: SweepSummary) -> dict:
    """PHASES' seconds from the times (seconds after the start) at which the progress stages were
    first entered, the fit tasks' (start, stop) and when the cluster was closed."""
    first_fit, last_fit = min(begin for begin, _ in fits), max(stop for _, stop in fits)
    seconds = (
        entered["loading corpus"],
        entered["planning"] - entered["loading corpus"],
        entered["vectorising"] - entered["planning"],
        first_fit - entered["vectorising"],
        last_fit - first_fit - summary.fit_task_seconds / max(summary.threads, 1),
        entered["closing cluster"] - last_fit,
        closed - entered["closing cluster"],
        summary.wall_seconds - closed,
    )
    return dict(zip(PHASES, seconds, strict=True))


def _auto_keys(spec: SweepSpec, first: SweepPlan, auto: AutoRounds) -> int:
    """The keys of an auto sweep's C paths, known once its rounds end."""
    final = make_plan(
        spec, first.categories, first.fingerprint, first.n_train, first.n_test, set(), ladders=auto.ladders
    )
    return final.n_keys


def _finish_meanwhile(store: StoreQueries, sweep_id: str) -> Callable[[], None]:
    """Start compacting the ended sweep's files and storing its summary (`StoreQueries.finish_sweep`)
    in a thread, so that it runs while the cluster closes; returns the function that waits for it.
    Every row is stored by then: a store that cannot be rewritten now (a full disk, say) keeps them
    all, so that is a warning (given by the waiting function), not the sweep's failure."""
    failed: list[BaseException] = []

    def finish() -> None:
        try:
            store.finish_sweep(sweep_id)
        except BaseException as exc:  # handed to the waiting thread
            failed.append(exc)

    thread = threading.Thread(target=finish, name="xialpha-finish-sweep")
    thread.start()

    def wait() -> None:
        thread.join()
        for exc in failed:
            if not isinstance(exc, (OSError, StoreWriteError)):
                raise exc
            warnings.warn(
                f"sweep {sweep_id!r}: every row is stored, but its files were not compacted ({first_line(exc)}); "
                "`xialpha store compact` compacts them",
                StoreWarning,
                stacklevel=3,
            )

    return wait


def _without_positives(spec: SweepSpec, corpus: ClusterCorpus, categories: list[str]) -> list[str]:
    """The swept categories without a positive document in the held-out split (none when no
    held-out figures are computed): their held-out recall, precision and F1 are undefined (empty)."""
    if spec.held_out_split is None:
        return []
    counts = corpus.summary.counts(spec.held_out_split)
    return [category for category in categories if not counts.get(category)]


def _gather_and_store(
    futures: dict,
    plan: SweepPlan,
    columns: list[BatchColumns],
    store: StoreQueries,
    summary: SweepSummary,
    progress: Progress,
) -> None:
    """Store each batch's rows as soon as its task finishes, then let the worker drop them: its
    per-example vectors first, its results (which a resume counts as done) last, so that a sweep
    killed between the two writes leaves no result row without its vectors (see
    `xialpha.storage.datasets`).

    A task that raised anything but a data failure or a lost worker (see `_outcome`) cancels
    the tasks left and raises its error: its batch stores nothing, the batches stored before
    stay stored.
    """
    for future in as_completed(list(futures)):
        batch = plan.batches[futures[future]]
        try:
            rows, examples = _outcome(future, batch, columns[futures[future]])
        except Exception:
            future.client.cancel([other for other in futures if not other.done()])
            raise
        progress.set_stage("storing")
        if examples:
            store.write_examples(examples)
        store.write_results(rows)
        _count(summary, rows, batch)
        progress.advance(len(batch.jobs))
        assert progress.total is not None  # set when the sweep was planned, before any batch ran
        if progress.done < progress.total:
            progress.set_stage("fitting")
        future.release()


def _outcome(future: Future, batch: Batch, base: BatchColumns) -> tuple[list[ResultRow | FailedRow], list[ExampleRow]]:
    """A batch's rows, or failed rows for all its keys when its task (or one it needs) failed for
    its data (`DataFailure`: an empty vocabulary, a Gram over the limit) or lost its worker
    every time it ran (`KilledWorker`: out of memory, say). Any other error is a bug: raised."""
    try:
        return future.result()
    except TASK_FAILURES as exc:  # record it, keep the sweep going
        rows: list[ResultRow | FailedRow] = [
            row for job in batch.jobs for row in failed_rows(base, job, error_line(exc), 0, 0)
        ]
        return rows, []


def _count(summary: SweepSummary, rows: list[ResultRow | FailedRow], batch: Batch) -> None:
    summary.fits += len(batch.jobs)
    for row in rows:
        if isinstance(row, ResultRow):
            summary.ok += 1
        else:
            summary.failed += 1
            if len(summary.failures) < 20:
                summary.failures.append(f"{row.category} C={row.C:g} j={row.j:g}: {row.error_message}")


def batch_columns(spec: SweepSpec, plan: SweepPlan, batch: Batch, run_id: str) -> BatchColumns:
    """What every row of `batch` shares: the sweep, the run, the data and its preprocessing x kernel."""
    pre, kernel = spec.preprocessings[batch.preprocessing], spec.kernels[batch.kernel]
    return BatchColumns.of(spec.id, run_id, plan.fingerprint, pre, kernel)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)
