"""A sweep plan as Dask futures: shared prefixes (vectorise, Grams) are computed once, on workers.

Like dask-ml's search graph, every (preprocessing) vectorisation and every (preprocessing,
kernel) Gram is one task whose result stays on the worker that made it; the fit batches that
need it depend on its future, so the scheduler runs them where the Gram lives (or copies it
worker to worker), and the client never ships a Gram matrix.
"""

from __future__ import annotations

import warnings

from distributed import Client, Future
from toolz import identity

from xialpha.jobs import tasks
from xialpha.jobs.plan import SweepPlan

RETRIES = 2  # a task lost with its worker is recomputed at most this often


def submit_plan(client: Client, plan: SweepPlan, corpus, base_rows: list[dict], run_id: str) -> dict[Future, int]:
    """Submit every batch of the plan; returns {batch future: batch index}.

    base_rows[i]: the columns shared by all rows of batch i; run_id makes task keys unique, so
    several sweeps can share one scheduler.
    """
    spec = plan.spec
    # A task holding the corpus, not client.scatter: scattered data lost with its worker cannot
    # be recomputed, and every task that needs it would be cancelled ("already forgotten").
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")  # the corpus is meant to be in it
        corpus_future = client.submit(identity, corpus, key=f"corpus-{run_id}", pure=False)
    features, linear, grams = {}, {}, {}
    for p, k in plan.gram_pairs:
        if p not in features:
            features[p] = client.submit(
                tasks.vectorize, corpus_future, spec.preprocessings[p], spec.corpus.train_split,
                spec.corpus.test_split, plan.categories, key=f"vectorize-{spec.preprocessings[p].id}-{run_id}",
                retries=RETRIES, pure=False,
            )
            linear[p] = client.submit(
                tasks.linear_gram, features[p], spec.estimators.holdout, spec.gram_memory_limit,
                key=f"gram-linear-{spec.preprocessings[p].id}-{run_id}", retries=RETRIES, pure=False,
            )
        kernel = spec.kernels[k]
        grams[p, k] = linear[p] if kernel.name == "linear" else client.submit(
            tasks.kernel_gram, linear[p], features[p], kernel,
            key=f"gram-{kernel.id}-{spec.preprocessings[p].id}-{run_id}", retries=RETRIES, pure=False,
        )
    futures = {}
    for i, batch in enumerate(plan.batches):
        future = client.submit(
            tasks.fit_batch, grams[batch.preprocessing, batch.kernel], batch, base_rows[i], spec.estimators, spec.tol,
            key=f"fit-batch-{i}-{run_id}", retries=RETRIES, pure=False,
        )
        futures[future] = i
    return futures
