"""Training chosen configurations on all training data, on the cluster, as a sweep trains: the
corpus read and vectorised part by part on the workers (`xialpha.jobs.data`), each chosen
preprocessing's features stacked once on a worker, one fit task per category there; optionally
each category's confusion counts on a held-out split, counted part by part where the parts live.

The driver gets the models (a weight vector per linear category; support vectors otherwise), the
fitted preprocessings (vocabulary and idf, for the artefact) and the counts: never the documents.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators.svm import SVMParameters, fit_svm
from xialpha.jobs import tasks
from xialpha.jobs.cluster import connect
from xialpha.jobs.data import ClusterCorpus, load_spec_corpus, submit_features
from xialpha.jobs.worker_processes import start_local_workers_early
from xialpha.models.trained import MODEL_COLUMNS, CategoryModel, KernelModel, TrainedSelection
from xialpha.selection.selected import Selection
from xialpha.spec.stored import sweep_spec
from xialpha.storage.schema import ResultColumn


def refit_selection(
    store,
    selection: Selection,
    spec_path: str | None = None,
    parameter: str = "selection",
    corpus=None,
    client=None,
    labels: Mapping[str, str] | None = None,
) -> TrainedSelection:
    """Train the choices of `selection` (one sweep of `store`) on all training data, on the sweep's
    cluster (its stored spec, or the spec file at `spec_path`; `corpus`: the in-memory corpus the
    sweep was given; `client`: a running distributed.Client to use instead); `labels`: {category:
    its config's readable name}, kept in each model's config. UserError naming `parameter` when the
    choices come from several training sets."""
    fingerprints = selection.data_fingerprints
    if len(fingerprints) != 1:
        raise UserError(
            f"the chosen configs come from {len(fingerprints)} different training sets", parameter=parameter
        )
    spec = sweep_spec(store, selection.sweep_id, fingerprints[0], spec_path, corpus)
    with refit_session(spec, fingerprints[0], client=client) as session:
        return session.train(selection, labels=labels)[0]


@dataclass(frozen=True)
class HeldOut:
    """A held-out split's fingerprint, its number of documents, and each category's counts there
    (tp, fp, fn, tn)."""

    fingerprint: str
    n_documents: int
    counts: dict[str, tuple[int, int, int, int]]


@contextlib.contextmanager
def refit_session(
    spec, data_fingerprint: str, *, client=None, address: str | None = None, workers: int | None = None
) -> Iterator[RefitSession]:
    """The sweep spec's corpus read on its cluster (or `address`, or a running `client`, left open),
    checked to be the one the sweep trained on (`data_fingerprint`), for `RefitSession.train`."""
    start_local_workers_early(spec.cluster, address=address, client=client)
    run_id = f"refit-{uuid.uuid4().hex[:12]}"
    with connect(spec.cluster, address=address, workers=workers, client=client) as client:
        corpus = load_spec_corpus(client, spec.corpus, run_id, {})
        if spec.data_fingerprint(corpus.fingerprint) != data_fingerprint:
            raise UserError(
                f"the documents loaded for sweep {spec.id!r} ({spec.corpus.loader}) differ from the ones it "
                "trained on (fingerprint mismatch); pass the spec file as spec= so relative paths resolve",
                key="corpus",
                mentions="spec=",
            )
        yield RefitSession(client, spec, corpus, run_id)


@dataclass
class RefitSession:
    """A sweep's corpus on a cluster, ready to train chosen configurations on it."""

    client: object
    spec: object
    corpus: ClusterCorpus
    run_id: str

    def split_size(self, split: str) -> int:
        """Documents of split `split`; UserError naming test_split= when the corpus has none."""
        self.corpus.check_split(split, parameter="test_split")
        return self.corpus.summary.size(split)

    def train(
        self, selection: Selection, held_out: str | None = None, labels: Mapping[str, str] | None = None
    ) -> tuple[TrainedSelection, HeldOut | None]:
        """Fit the preprocessing and the SVM of every choice of `selection` (one per category) on the
        training split, and with `held_out` count each model's decisions on that split. Each model's
        config holds the choice's MODEL_COLUMNS, its label that of `labels` ({category: readable
        name}; None where absent)."""
        client, spec, train_split = self.client, self.spec, self.spec.corpus.train_split
        chosen = selection.rows
        if labels is not None:
            chosen = chosen.assign(label=[labels.get(category) for category in chosen[ResultColumn.CATEGORY]])
        if held_out is not None:
            self.split_size(held_out)
        fitted, models, counted, term_counts = {}, [], [], {}
        for pp_id, rows in chosen.groupby(ResultColumn.PREPROCESSING_ID, sort=False):
            preprocessing = _by_id(spec.preprocessings, pp_id, ResultColumn.PREPROCESSING_ID, spec.id)
            categories = [str(category) for category in rows[ResultColumn.CATEGORY]]
            name = f"{pp_id}-{self.run_id}"
            features = submit_features(
                client, self.corpus, preprocessing, train_split, held_out, categories, self.run_id, counted=term_counts
            )
            stacked = client.submit(tasks.stack_blocks, features.blocks, key=f"features-{name}", pure=False)
            data, futures = {}, []
            for column, (_, row) in enumerate(rows.iterrows()):
                kernel = _by_id(spec.kernels, row[ResultColumn.KERNEL_ID], ResultColumn.KERNEL_ID, spec.id)
                if kernel.id not in data:
                    data[kernel.id] = client.submit(
                        tasks.training_data,
                        stacked,
                        kernel,
                        False,
                        spec.gram_memory_limit,
                        key=f"data-{kernel.id}-{name}",
                        pure=False,
                    )
                futures.append(
                    client.submit(
                        fit_model,
                        data[kernel.id],
                        stacked,
                        categories[column],
                        kernel,
                        float(row[ResultColumn.C]),
                        float(row[ResultColumn.J]),
                        spec.tol,
                        key=f"refit-{column}-{name}",
                        pure=False,
                    )
                )
            if held_out is not None:
                counted += [
                    (
                        categories,
                        [
                            client.submit(part_confusions, block, futures, key=f"held-out-{i}-{name}", pure=False)
                            for i, block in enumerate(features.blocks)
                        ],
                    )
                ]
            fitted[pp_id] = None if features.fitted is None else features.fitted.result()
            for (_, row), model in zip(rows.iterrows(), client.gather(futures)):
                config = {column: _plain(row.get(column)) for column in MODEL_COLUMNS}
                models.append(CategoryModel(str(row[ResultColumn.CATEGORY]), pp_id, model, config))
        order = {category: i for i, category in enumerate(chosen[ResultColumn.CATEGORY])}
        trained = TrainedSelection(fitted, sorted(models, key=lambda m: order[m.category]))
        if held_out is None:
            return trained, None
        counts = {}
        for categories, parts in counted:
            totals = np.sum(client.gather(parts), axis=0)  # (categories, 4) over the parts
            counts.update((category, tuple(map(int, row))) for category, row in zip(categories, totals))
        held = HeldOut(
            self.corpus.fingerprint(held_out),
            self.corpus.summary.size(held_out),
            {category: counts[category] for category in trained.categories},
        )
        return trained, held


def fit_model(data: tasks.TrainingData, features, category: str, kernel, C: float, j: float, tol: float) -> KernelModel:
    """One category's SVM on all training rows (a task's work), kept as prediction needs it."""
    parameters = SVMParameters(C, j=j, tol=tol)
    fit = fit_svm(data.problem(data.y_train[category]), parameters, check_input=data.gram is None)
    return KernelModel.from_fit(fit, features.X_train, kernel)


def part_confusions(block, models: list[KernelModel]) -> np.ndarray:
    """(models, 4) int64: each model's tp, fp, fn, tn on a part's held-out rows (column c of y_test
    is model c's category)."""
    counts = np.zeros((len(models), 4), dtype=np.int64)
    for c, model in enumerate(models):
        truth, said = block.y_test[:, c] > 0, model.decision_function(block.X_test) > 0
        counts[c] = [(truth & said).sum(), (~truth & said).sum(), (truth & ~said).sum(), (~truth & ~said).sum()]
    return counts


def _by_id(items, wanted: str, field: str, sweep_id: str):
    for item in items:
        if item.id == wanted:
            return item
    raise UserError(f"{field}: {wanted!r} is not in sweep {sweep_id!r}'s spec")


def _plain(value):
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value
