"""Stores of real sweeps for the selection and store tests, filled in this process by the sweep's own
task functions (no cluster of processes), the specs they sweep, and a digest of a store's files to
see that a command left a store as it was."""

from __future__ import annotations

import hashlib
import os
import stat
import uuid
from pathlib import Path

from distributed import Client

from xialpha.jobs import tasks
from xialpha.jobs.sweep import prepare
from xialpha.planning.experiment import joined_categories
from xialpha.storage.contract import StoreQueries
from xialpha.storage.rows import BatchColumns

SELECTION_SPEC = """
[sweep]
id = "sel"
[corpus]
loader = "synthetic"
n_docs = 500
n_categories = 4
seed = 3
train_split = "train"
test_split = "test"
[corpus.categories]
top_k = 3
[[preprocessing]]
min_df = [1, 2]
[[kernels]]
name = "linear"
[[kernels]]
name = "rbf"
gamma = 1.0
[svm]
C = [0.1, 1.0, 10.0]
[estimators]
rho = [1.0, 2.0]
"""


def fill_store(spec, store: StoreQueries, batches: int | None = None) -> None:
    """What `run_sweep` stores, computed in this process: results, examples and the sweeps row
    (of the first `batches` batches only, when given: a sweep interrupted or still running)."""
    with Client(processes=False) as client:  # planned as the sweep plans, its corpus read by threads
        _, plan = prepare(spec, store, client, "fill")
    corpus = spec.corpus.load()
    run_id = uuid.uuid4().hex[:12]
    store.datasets.append(
        "sweeps",
        [
            {
                "sweep_id": spec.id,
                "run_id": run_id,
                "spec_toml": spec.text,
                "data_fingerprint": plan.fingerprint,
                "categories": joined_categories(plan.categories),
            }
        ],
    )
    for batch in plan.batches[:batches]:
        pre, kernel = spec.preprocessings[batch.preprocessing], spec.kernels[batch.kernel]
        features = tasks.vectorize(corpus, pre, spec.corpus.train_split, spec.held_out_split, plan.categories)
        # linear kernels on features, as sweeps do; the held-out split's rows where the holdout estimator scores it
        data = tasks.training_data(features, kernel, spec.held_out_split is not None, None)
        columns = BatchColumns.of(spec.id, run_id, plan.fingerprint, pre, kernel)
        rows, examples = tasks.fit_batch(data, batch, columns, spec.estimators, spec.tol)
        store.write_results(rows)
        store.write_examples(examples)


SWEEP_SPEC = """
[sweep]
id = "{id}"
{sweep_extra}
[corpus]
loader = "synthetic"
n_docs = 300
n_categories = 3
seed = 3
{splits}
[corpus.categories]
{categories}
[[kernels]]
{kernel}
[svm]
C = {C}
[estimators]
rho = {rho}
[cluster]
workers = 1
"""


def small_spec(
    sweep_id: str,
    *,
    categories: str = "top_k = 2",
    splits: bool = False,
    kernel: str = 'name = "linear"',
    C: str = "[0.5, 5.0]",
    rho: str = "[1.0]",
    sweep_extra: str = "",
) -> str:
    """A spec of 2 categories x 2 C x 1 rho (by default) on a synthetic corpus, with train/test splits if `splits`."""
    return SWEEP_SPEC.format(
        id=sweep_id,
        categories=categories,
        kernel=kernel,
        C=C,
        rho=rho,
        sweep_extra=sweep_extra,
        splits='train_split = "train"\ntest_split = "test"' if splits else "",
    )


def tree_digest(root: Path) -> str | None:
    """SHA-256 over every entry under `root` (relative path, kind, bytes of files), None if it is absent."""
    if not os.path.lexists(root):
        return None
    digest = hashlib.sha256()
    for path in sorted([root, *root.rglob("*")]) if root.is_dir() else [root]:
        mode = path.lstat().st_mode
        digest.update(f"{path.relative_to(root) if path != root else '.'}|{stat.S_IFMT(mode)}|".encode())
        if stat.S_ISREG(mode):
            digest.update(path.read_bytes())
        elif stat.S_ISLNK(mode):
            digest.update(os.readlink(path).encode())
    return digest.hexdigest()
