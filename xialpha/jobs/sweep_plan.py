"""A sweep's plan on the driver from what is known of its corpus (its summary and data fingerprint)
and of its store, the worker threads it will have, and the worker each of its batches goes to.
No Dask here: a dry run plans with these without importing the cluster's machinery.
"""

from __future__ import annotations

import os

from xialpha.corpora.parts import PartSummary
from xialpha.jobs.memory import check_plan
from xialpha.planning.experiment import check_same_experiment
from xialpha.planning.plan import SweepPlan, make_plan
from xialpha.spec.sweep import SweepSpec
from xialpha.storage.store import StoreQueries


def plan_sweep(
    spec: SweepSpec,
    store: StoreQueries,
    summary: PartSummary,
    fingerprint: str,
    *,
    force: bool = False,
    threads: int = 1,
    force_new_run: bool = False,
) -> SweepPlan:
    """The categories chosen from `summary`'s training counts, the check that the sweep's id holds no
    other experiment (unless `force_new_run`), and the plan of what is missing on data `fingerprint`."""
    train_split, test_split = spec.corpus.train_split, spec.corpus.test_split
    categories = spec.corpus.categories.choose(summary.counts(train_split), summary.name)
    check_plan(spec, categories)  # before its keys are made
    if not force_new_run:
        check_same_experiment(spec, store, categories, fingerprint)
    # done keys with their vectors: a sweep killed between a batch's two writes left none
    done = set() if force else store.complete_keys(spec.id)
    return make_plan(
        spec,
        categories,
        fingerprint,
        summary.size(train_split),
        0 if test_split is None else summary.size(test_split),
        done,
        force=force,
        threads=threads,
    )


def default_threads(spec: SweepSpec, workers: int | None) -> int:
    """Worker threads the sweep will have: --workers, [cluster] workers or the cores, times threads."""
    n = workers or spec.cluster.workers or os.cpu_count() or 1
    return n * spec.cluster.threads_per_worker


def place_batches(plan: SweepPlan, workers: list[str]) -> list[str | None]:
    """The worker each batch of the plan should run on (None: anywhere, when no worker is
    connected yet, e.g. SLURM jobs still queued).

    Linear-path batches, in plan order (grouped by preprocessing), are dealt to the workers in
    contiguous runs of equal length, so each worker stacks the features of as few preprocessings
    as its share of the work needs; a kernel-path preprocessing's batches all go to one worker
    (round-robin over preprocessings), where its Grams are made.
    """
    homes: list[str | None] = [None] * len(plan.batches)
    if not workers:
        return homes
    linear = [i for i, batch in enumerate(plan.batches) if plan.is_linear(batch.kernel)]
    for rank, i in enumerate(linear):
        homes[i] = workers[rank * len(workers) // len(linear)]
    grams = list(dict.fromkeys(batch.preprocessing for batch in plan.batches if not plan.is_linear(batch.kernel)))
    for i, batch in enumerate(plan.batches):
        if not plan.is_linear(batch.kernel):
            homes[i] = workers[grams.index(batch.preprocessing) % len(workers)]
    return homes
