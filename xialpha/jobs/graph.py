"""A sweep plan as Dask futures: shared prefixes (vectorise, training data) are computed once, on workers.

Like dask-ml's search graph, every (preprocessing) vectorisation and every (preprocessing,
kernel) training data (sparse features for linear kernels, a Gram matrix for the others) is one
task whose result stays on the worker that made it; the fit batches that need it depend on its
future, so the scheduler runs them where the data lives (or copies it worker to worker), and the
client never ships a Gram matrix.
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
    corpus_future = submit_corpus(client, corpus, run_id)
    homes = gram_homes(client, [p for p, k in plan.data_pairs if not plan.is_linear(k)])
    data = submit_training_data(client, plan.data_pairs, spec, plan.categories, corpus_future,
                                spec.corpus.train_split, spec.corpus.test_split, spec.estimators.holdout, run_id, homes)
    futures = {}
    for i, batch in enumerate(plan.batches):
        home = {} if plan.is_linear(batch.kernel) else _placed(homes, batch.preprocessing)
        future = client.submit(
            tasks.fit_batch, data[batch.preprocessing, batch.kernel], batch, base_rows[i], spec.estimators, spec.tol,
            key=f"fit-batch-{i}-{run_id}", retries=RETRIES, pure=False, **home,
        )
        futures[future] = i
    return futures


def gram_homes(client: Client, preprocessings: list[int]) -> dict[int, str]:
    """{preprocessing: worker address} for the preprocessings whose fits train on Grams.

    Preprocessings are dealt round-robin to the connected workers; their Grams and the fits that
    read them are placed there (loosely: if the worker dies they run anywhere), so a worker holds
    the Grams of about P / workers preprocessings instead of every Gram. Empty when no worker is
    connected yet (e.g. SLURM jobs still queued): the scheduler then places everything itself.
    """
    workers = sorted(client.scheduler_info().get("workers", {}))
    return {p: workers[i % len(workers)] for i, p in enumerate(dict.fromkeys(preprocessings))} if workers else {}


def _placed(homes: dict[int, str], preprocessing: int) -> dict:
    """client.submit's placement arguments for a task of `preprocessing` (none if it has no home)."""
    home = homes.get(preprocessing)
    return {"workers": [home], "allow_other_workers": True} if home else {}


def submit_corpus(client: Client, corpus, run_id: str) -> Future:
    """The corpus as a task's result on a worker.

    Not client.scatter: scattered data lost with its worker cannot be recomputed, and every task
    that needs it would be cancelled ("already forgotten"); a task's result can be.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")  # the corpus is meant to be in it
        return client.submit(identity, corpus, key=f"corpus-{run_id}", pure=False)


def submit_training_data(client: Client, pairs, spec, categories: list[str], corpus_future: Future,
                         train_split: str | None, test_split: str | None, with_test: bool,
                         run_id: str, homes: dict[int, str] | None = None) -> dict[tuple[int, int], Future]:
    """{(preprocessing, kernel): future of its `tasks.TrainingData`} for the pairs fits need.

    One vectorisation per preprocessing; linear kernels train on its features (`linear_data`, no
    Gram), other kernels on Grams derived from one linear Gram per preprocessing, placed on the
    preprocessing's worker in `homes` (see `gram_homes`). Sweeps and drift checks share this;
    spec: anything with preprocessings, kernels and gram_memory_limit.
    """
    homes = homes or {}
    features, linear_data, linear_gram, data = {}, {}, {}, {}
    for p, k in pairs:
        pre, kernel = spec.preprocessings[p], spec.kernels[k]
        if p not in features:
            features[p] = client.submit(tasks.vectorize, corpus_future, pre, train_split, test_split, categories,
                                        key=f"vectorize-{pre.id}-{run_id}", retries=RETRIES, pure=False,
                                        **_placed(homes, p))
        if kernel.name == "linear":
            if p not in linear_data:
                linear_data[p] = client.submit(tasks.linear_data, features[p], key=f"features-{pre.id}-{run_id}",
                                               retries=RETRIES, pure=False)
            data[p, k] = linear_data[p]
            continue
        if p not in linear_gram:
            linear_gram[p] = client.submit(tasks.linear_gram, features[p], with_test, spec.gram_memory_limit,
                                           key=f"gram-linear-{pre.id}-{run_id}", retries=RETRIES, pure=False,
                                           **_placed(homes, p))
        data[p, k] = client.submit(tasks.kernel_gram, linear_gram[p], features[p], kernel,
                                   key=f"gram-{kernel.id}-{pre.id}-{run_id}", retries=RETRIES, pure=False,
                                   **_placed(homes, p))
    return data
