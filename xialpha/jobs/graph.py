"""A sweep plan as Dask futures: the corpus's features are computed part by part on the workers
(`xialpha.jobs.data`), each fitting worker stacks the features of the preprocessings it fits on
once, and the fit batches run next to that data.

Like dask-ml's search graph, shared prefixes (a preprocessing's features, a Gram matrix) are
computed once and the batches that need them depend on their futures; placement keeps a
preprocessing's batches on few workers (`place_batches`), so a worker holds the stacked features
of about P / workers preprocessings, and the client never ships features or Grams.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from distributed import Client, Future, KilledWorker

from xialpha.errors import DataFailure
from xialpha.estimators import LINEAR
from xialpha.estimators.registry import HELD_OUT
from xialpha.jobs import tasks
from xialpha.jobs.data import ClusterCorpus, ClusterFeatures, submit_features
from xialpha.jobs.sweep_plan import place_batches
from xialpha.planning.plan import SweepPlan
from xialpha.printable import redact
from xialpha.storage.rows import BatchColumns

if TYPE_CHECKING:
    from xialpha.spec.drift import DriftSpec
    from xialpha.spec.sweep import SweepSpec

RETRIES = 2  # a task that raised is run again at most this often (a lost worker's tasks are recomputed anyway)
# What a task may fail of without a bug: its data (an empty vocabulary, one class, a Gram over the
# limit) or the cluster (its worker lost every time it ran: out of memory, say). Anything else stops.
TASK_FAILURES = (DataFailure, KilledWorker)
ERROR_CHARS = 500  # of a task's error, as a failed row stores it
FIT_TASK = "fit-batch-"  # the key prefix of the tasks that fit and estimate


def error_line(exc: BaseException) -> str:
    """A task's error after its retries as one line, "Type: message" (ERROR_CHARS at most), without
    credentials (a failed row stores it)."""
    return redact(f"{type(exc).__name__}: {exc}".splitlines()[0])[:ERROR_CHARS]


class SweepData:
    """A sweep's training data futures by (preprocessing, kernel, worker), submitted when first needed
    and then kept, so every round of an auto sweep (`xialpha.jobs.auto`) fits on the same ones: the
    corpus is vectorised once per sweep, however many rounds it has. Its handle on the corpus's parts
    is dropped once every preprocessing's features are submitted (their futures hold what they need)."""

    def __init__(
        self, client: Client, spec: SweepSpec, corpus: ClusterCorpus, categories: list[str], run_id: str
    ) -> None:
        self.client, self.spec, self.categories, self.run_id = client, spec, categories, run_id
        self.corpus: ClusterCorpus | None = corpus
        self.features: dict[int, ClusterFeatures] = {}
        self.counted: dict = {}  # term counts shared by preprocessings that split texts alike
        self.futures: dict[tuple, Future] = {}

    def needed(self, needs: set[tuple]) -> dict[tuple, Future]:
        """{(preprocessing, kernel, worker): future of its `tasks.TrainingData`} for `needs`, submitting the missing."""
        missing = sorted((need for need in needs if need not in self.futures), key=str)
        spec = self.spec
        for p in sorted({p for p, _, _ in missing} - set(self.features)):
            if self.corpus is None:
                raise ValueError(f"SweepData: preprocessing {p} has no features and the corpus was dropped")
            self.features[p] = submit_features(
                self.client,
                self.corpus,
                spec.preprocessings[p],
                spec.corpus.train_split,
                spec.corpus.test_split,
                self.categories,
                self.run_id,
                counted=self.counted,
            )
        if len(self.features) == len(spec.preprocessings):
            self.corpus = None
        if missing:
            with_test = spec.estimators.needs(HELD_OUT)
            self.futures |= submit_training_data(self.client, missing, spec, self.features, with_test, self.run_id)
        return {need: self.futures[need] for need in needs}


def submit_plan(
    client: Client,
    plan: SweepPlan,
    corpus: ClusterCorpus | None,
    columns: list[BatchColumns],
    run_id: str,
    *,
    data: SweepData | None = None,
    homes: list[str | None] | None = None,
    tag: str = "",
    warm: dict[int, list[Future]] | None = None,
    ends: dict[int, Future] | None = None,
) -> dict[Future, int]:
    """Submit every batch of the plan; returns {batch future: batch index}.

    columns[i]: what all rows of batch i share; run_id (and `tag`, a round's) makes task keys
    unique, so several sweeps can share one scheduler. data: the sweep's training data made so far
    (default: none yet, from `corpus`); homes: the worker of each batch (default `place_batches`).
    ends: when given (an auto sweep), filled with {batch index: future of its C paths' end fits}
    (`tasks.fit_batch_keeping_ends`), which stay on the workers; warm: {batch index: such futures of
    earlier rounds} its paths warm-start from.
    """
    spec = plan.spec
    if homes is None:
        homes = place_batches(plan, sorted(client.scheduler_info().get("workers", {})))
    if data is None:
        if corpus is None:
            raise ValueError("submit_plan: needs the corpus or the sweep's data")
        data = SweepData(client, spec, corpus, plan.categories, run_id)
    training = data.needed({(batch.preprocessing, batch.kernel, homes[i]) for i, batch in enumerate(plan.batches)})
    futures = {}
    for i, batch in enumerate(plan.batches):
        home = homes[i]
        args = (training[batch.preprocessing, batch.kernel, home], batch, columns[i], spec.estimators, spec.tol)
        key = f"{FIT_TASK}{tag}{i}-{run_id}"
        if ends is None:
            future = client.submit(tasks.fit_batch, *args, key=key, retries=RETRIES, pure=False, **placed(home))
        else:
            outcome = client.submit(
                tasks.fit_batch_keeping_ends,
                *args,
                (warm or {}).get(i, []),
                key=f"{key}-outcome",
                retries=RETRIES,
                pure=False,
                **placed(home),
            )
            future = client.submit(_rows_of, outcome, key=key, pure=False, **placed(home))
            ends[i] = client.submit(_ends_of, outcome, key=f"{key}-ends", pure=False, **placed(home))
        futures[future] = i
    return futures


def _rows_of(outcome: tuple) -> tuple:
    """The (rows, examples) of `tasks.fit_batch_keeping_ends`' outcome: what the client gathers."""
    return outcome[0], outcome[1]


def _ends_of(outcome: tuple) -> dict:
    """The C path ends of `tasks.fit_batch_keeping_ends`' outcome: they stay on the worker."""
    return outcome[2]


def placed(home: str | None) -> dict:
    """client.submit's placement arguments for a task meant for worker `home` (none if it has no
    home): loosely, so a task runs elsewhere when its worker is gone."""
    return {"workers": [home], "allow_other_workers": True} if home else {}


def submit_training_data(
    client: Client,
    needs: Iterable[tuple[int, int, str | None]],
    spec: SweepSpec | DriftSpec,
    features: dict[int, ClusterFeatures],
    with_test: bool,
    run_id: str,
) -> dict[tuple, Future]:
    """{(preprocessing, kernel, worker): future of its `tasks.TrainingData`} for what the fits need.

    A preprocessing's feature blocks are stacked once per worker that fits on them, on that
    worker; linear kernels train on the stacked features (no Gram), other kernels on Grams
    derived from one linear Gram per preprocessing and worker. Sweeps and drift checks share
    this; spec: anything with preprocessings, kernels and gram_memory_limit.
    """
    stacked, linear_gram, data = {}, {}, {}
    for p, k, home in needs:
        pre, kernel = spec.preprocessings[p], spec.kernels[k]
        where = f"{pre.id}-{home or 'any'}-{run_id}"
        if (p, home) not in stacked:
            stacked[p, home] = client.submit(
                tasks.stack_blocks,
                features[p].blocks,
                key=f"features-{where}",
                retries=RETRIES,
                pure=False,
                **placed(home),
            )
        if kernel.name == LINEAR:
            data[p, k, home] = client.submit(
                tasks.linear_data,
                stacked[p, home],
                key=f"linear-data-{where}",
                retries=RETRIES,
                pure=False,
                **placed(home),
            )
            continue
        if (p, home) not in linear_gram:
            linear_gram[p, home] = client.submit(
                tasks.linear_gram,
                stacked[p, home],
                with_test,
                spec.gram_memory_limit,
                key=f"gram-linear-{where}",
                retries=RETRIES,
                pure=False,
                **placed(home),
            )
        data[p, k, home] = client.submit(
            tasks.kernel_gram,
            linear_gram[p, home],
            stacked[p, home],
            kernel,
            key=f"gram-{kernel.id}-{where}",
            retries=RETRIES,
            pure=False,
            **placed(home),
        )
    return data
