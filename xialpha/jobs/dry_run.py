"""`xialpha sweep SPEC --dry-run`: what a sweep would do, planned as `run_sweep` plans it, no fit run
and nothing stored.

A corpus whose file listing shows its documents (a directory of files: `xialpha.corpora.parted.survey`)
is not read: its counts come from its folders and its estimates from a sample of its documents. On a
local cluster no cluster is started for it (its workers would see the files this process sees); on a
cluster at an address a worker surveys it. Any other corpus is read by the cluster's workers as a sweep
reads it (a local cluster's workers are threads of this process then, no worker process is started).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from xialpha.corpora.corpus import no_such_split
from xialpha.corpora.parted import Survey, survey
from xialpha.errors import UserError
from xialpha.features.blocks import estimated_feature_bytes
from xialpha.jobs.sweep_plan import default_threads, place_batches, plan_sweep
from xialpha.planning.plan import SweepPlan
from xialpha.spec.corpus import CorpusSpec, corpus_errors
from xialpha.spec.sweep import SweepSpec
from xialpha.storage.store import StoreQueries

UNREAD_FINGERPRINT = "(corpus not read)"  # a surveyed corpus's data fingerprint when its sweep has no run stored


@dataclass
class DryRun:
    """What a sweep would do: its plan, the corpus's parts and documents, the workers it would have,
    and per preprocessing the estimated bytes of its stacked features (CSR: 12 bytes a stored
    value, from the term counts of a sample of documents) and how many a worker would stack at most.
    sampled: the documents read for the estimates when the corpus was surveyed, not read
    (`xialpha.corpora.parted.survey`: its counts from its file listing), else 0; then the rows
    already stored are counted on the data of `assumed_run` (the sweep's newest run, None when it
    has none), as if the corpus is unchanged since."""

    plan: SweepPlan
    n_parts: int
    n_documents: int
    workers: int
    feature_bytes: dict[int, int]
    stacked_bytes_per_worker: int
    sampled: int = 0
    assumed_run: str | None = None


def dry_run(
    spec: SweepSpec,
    store: StoreQueries,
    *,
    address: str | None = None,
    workers: int | None = None,
    force: bool = False,
    force_new_run: bool = False,
) -> DryRun:
    """The `DryRun` of `spec`'s sweep into `store` (as the module says), with `run_sweep`'s arguments."""
    threads = default_threads(spec, workers)
    local = spec.cluster.is_local(address)
    surveyed = None
    if local:
        with corpus_errors(spec.corpus.source):
            surveyed = _survey(spec.corpus)
    if surveyed is not None:
        plan, assumed_run = _surveyed_plan(spec, store, surveyed, force, threads, force_new_run)
        feature_bytes = {
            p: estimated_feature_bytes(surveyed.sample, spec.preprocessings[p], surveyed.summary.n_documents)
            for p in _preprocessings(plan)
        }
        names = [f"worker {i}" for i in range(threads // spec.cluster.threads_per_worker)]
        return _placed(
            plan, surveyed.summary.n_documents, len(surveyed.parts), names, feature_bytes, surveyed, assumed_run
        )
    from xialpha.jobs.cluster import connect
    from xialpha.jobs.sweep import prepare

    with connect(spec.cluster, address=address, workers=workers, threads_only=True) as client:
        run_id = "dry-" + uuid.uuid4().hex[:8]
        if not local:
            with corpus_errors(spec.corpus.source):
                surveyed = client.submit(_survey, spec.corpus, key=f"survey-{run_id}", pure=False).result()
        if surveyed is None:
            corpus, plan = prepare(
                spec, store, client, run_id, force=force, threads=threads, force_new_run=force_new_run
            )
            sample, n_documents, n_parts, assumed_run = (
                corpus.chunks[0],
                corpus.summary.n_documents,
                len(corpus.parts),
                None,
            )
        else:
            plan, assumed_run = _surveyed_plan(spec, store, surveyed, force, threads, force_new_run)
            sample, n_documents, n_parts = surveyed.sample, surveyed.summary.n_documents, len(surveyed.parts)
        n_workers = threads // spec.cluster.threads_per_worker
        names = sorted(client.scheduler_info().get("workers", {})) or [f"worker {i}" for i in range(n_workers)]
        estimates = {
            p: client.submit(
                estimated_feature_bytes,
                sample,
                spec.preprocessings[p],
                n_documents,
                key=f"estimate-{p}-{run_id}",
                pure=False,
            )
            for p in _preprocessings(plan)
        }
        feature_bytes = {p: future.result() for p, future in estimates.items()}
    return _placed(plan, n_documents, n_parts, names, feature_bytes, surveyed, assumed_run)


def _survey(corpus_spec: CorpusSpec) -> Survey | None:
    """The survey of the spec's corpus (`xialpha.corpora.parted.survey`), its local paths checked
    first; None for a corpus given in memory or one that must be read to be counted."""
    if corpus_spec.data is not None:
        return None
    corpus_spec.check_paths()
    return survey(
        corpus_spec.loader,
        corpus_spec.args,
        corpus_spec.train_split,
        corpus_spec.validation_fraction,
        corpus_spec.validation_seed,
        corpus_spec.source or "<spec>",
    )


def _surveyed_plan(
    spec: SweepSpec, store: StoreQueries, surveyed: Survey, force: bool, threads: int, force_new_run: bool
) -> tuple[SweepPlan, str | None]:
    """The plan on a surveyed corpus, and the run whose data its stored rows are counted on (the
    sweep's newest, None when it has none): the corpus's fingerprint needs every document read.
    UserError naming the spec file and key of a train or test split the corpus lacks."""
    names = surveyed.summary.split_names
    for key, name in (("corpus.train_split", spec.corpus.train_split), ("corpus.test_split", spec.corpus.test_split)):
        if name is not None and name not in names:
            raise UserError(no_such_split(name, names), key=key, file=spec.corpus.source or None)
    newest = store.newest_run(spec.id)
    fingerprint = UNREAD_FINGERPRINT if newest is None else str(newest.data_fingerprint)
    plan = plan_sweep(
        spec, store, surveyed.summary, fingerprint, force=force, threads=threads, force_new_run=force_new_run
    )
    return plan, None if newest is None else str(newest.run_id)


def _preprocessings(plan: SweepPlan) -> list[int]:
    return sorted({batch.preprocessing for batch in plan.batches})


def _placed(
    plan: SweepPlan,
    n_documents: int,
    n_parts: int,
    workers: list[str],
    feature_bytes: dict[int, int],
    surveyed: Survey | None,
    assumed_run: str | None,
) -> DryRun:
    """The `DryRun` with the batches placed on `workers` as a sweep places them (`place_batches`)."""
    held: dict[str | None, set[int]] = {}
    for home, batch in zip(place_batches(plan, workers), plan.batches):
        held.setdefault(home, set()).add(batch.preprocessing)
    per_worker = max((sum(feature_bytes[p] for p in ps) for ps in held.values()), default=0)
    return DryRun(
        plan,
        n_parts,
        n_documents,
        len(workers),
        feature_bytes,
        per_worker,
        sampled=0 if surveyed is None else len(surveyed.sample),
        assumed_run=assumed_run,
    )
