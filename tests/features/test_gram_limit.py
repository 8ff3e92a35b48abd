"""`gram_memory_limit` above the 4 GiB default reaches the Gram builder (simulated: no Gram is allocated).

A sweep of 30,000 training documents needs a 6.7 GiB linear Gram: refused under the default
limit, allowed under `gram_memory_limit = "8GiB"`. The builder is replaced by a recorder that
applies the limit it was given and stops, so the test allocates nothing of that size.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.features import DEFAULT_GRAM_LIMIT_BYTES, GramTooLarge, check_gram_fits
from xialpha.features.blocks import FeatureBlock
from xialpha.jobs import graph, tasks
from xialpha.jobs.data import ClusterFeatures
from xialpha.spec.sweep import parse_spec

N_DOCS = 30_000  # 30,000^2 float64 = 6.7 GiB
LIMIT = 8 * 2**30
SPEC = """
[sweep]
gram_memory_limit = "8GiB"
[corpus]
loader = "synthetic"
[[kernels]]
name = "rbf"
gamma = 0.5
"""


class Reached(Exception):
    """The Gram builder was reached with a limit that lets the Gram through."""


@pytest.fixture
def recorded(monkeypatch):
    """Limits the Gram builder was called with; it checks them as the real one does, then stops."""
    calls = []

    def builder(X, Y=None, *, limit_bytes=DEFAULT_GRAM_LIMIT_BYTES, **_):
        calls.append(limit_bytes)
        check_gram_fits(X.shape[0], X.shape[0] if Y is None else Y.shape[0], limit_bytes)
        raise Reached

    monkeypatch.setattr(tasks, "gram_of", builder)  # the linear Gram builder the sweep's tasks call
    return calls


def _features() -> FeatureBlock:
    X = sp.csr_matrix((np.ones(N_DOCS), (np.arange(N_DOCS), np.arange(N_DOCS) % 5)), shape=(N_DOCS, 5))
    y = np.where(np.arange(N_DOCS) % 2, 1, -1).astype(np.int8)[:, None]
    return FeatureBlock(X_train=X, X_test=None, y_train=y, y_test=y[:0], categories=("c",))


def test_the_spec_reads_a_limit_above_4_gib():
    spec = parse_spec(SPEC)
    assert spec.gram_memory_limit == LIMIT > DEFAULT_GRAM_LIMIT_BYTES
    with pytest.raises(GramTooLarge):  # the Gram of this test is refused under the default limit
        check_gram_fits(N_DOCS, N_DOCS, DEFAULT_GRAM_LIMIT_BYTES)


def test_the_spec_limit_reaches_the_gram_builder(recorded):
    spec = parse_spec(SPEC)
    with pytest.raises(Reached):
        tasks.training_data(_features(), spec.kernels[0], False, spec.gram_memory_limit)
    assert recorded == [LIMIT]


class _Client:
    """Records what the graph submits, instead of running it."""

    def __init__(self):
        self.submitted = []

    def submit(self, function, *args, **options):
        self.submitted.append((function, args))
        return object()


def test_the_sweep_graph_passes_the_spec_limit_to_the_gram_task():
    spec = parse_spec(SPEC)
    client = _Client()
    features = {0: ClusterFeatures(blocks=[object()], fitted=None)}
    graph.submit_training_data(client, [(0, 0, None)], spec, features, False, "run")
    gram_tasks = [args for function, args in client.submitted if function is tasks.linear_gram]
    assert len(gram_tasks) == 1 and gram_tasks[0][-1] == LIMIT
