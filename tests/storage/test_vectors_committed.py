"""A killed sweep loses no per-example vector (issue 48.3): a batch's vectors are stored before its
results, and a resume recomputes a done key whose vectors are missing (left by the old order)."""

from __future__ import annotations

import contextlib
import uuid
from types import SimpleNamespace

import pytest
from distributed import Client
from swept import small_spec

from xialpha.jobs import sweep as sweep_module
from xialpha.jobs import tasks
from xialpha.jobs.progress import Progress, ProgressMode
from xialpha.jobs.sweep import prepare
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store
from xialpha.storage.rows import BatchColumns
from xialpha.storage.store import ResultStore


class Killed(BaseException):
    """A SIGKILL at this instant: nothing after it runs."""


class _Done:
    """A finished task's future, as `_gather_and_store` uses it."""

    def __init__(self, value):
        self.value, self.client = value, None

    def result(self):
        return self.value

    def done(self) -> bool:
        return True

    def release(self) -> None:
        pass


@pytest.fixture(scope="module")
def client():
    with Client(processes=False) as client:  # a sweep's planning, its corpus read by threads
        yield client


@pytest.fixture(scope="module")
def batches(tmp_path_factory, client):
    """(spec, plan, [(columns, rows, examples)] of each batch): a small sweep computed in this process."""
    spec = parse_spec(small_spec("kill", C="[0.5, 5.0, 50.0]", rho="[1.0, 2.0]", sweep_extra="batch_size = 2"))
    _, plan = prepare(
        spec, open_store(str(tmp_path_factory.mktemp("plan") / "store"), create=True, writable=True), client, "plan"
    )
    corpus, run_id, computed = spec.corpus.load(), uuid.uuid4().hex[:12], []
    for batch in plan.batches:
        pre, kernel = spec.preprocessings[batch.preprocessing], spec.kernels[batch.kernel]
        features = tasks.vectorize(corpus, pre, spec.corpus.train_split, spec.held_out_split, plan.categories)
        data = tasks.training_data(features, kernel, False, None)
        columns = BatchColumns.of(spec.id, run_id, plan.fingerprint, pre, kernel)
        computed.append((columns, *tasks.fit_batch(data, batch, columns, spec.estimators, spec.tol)))
    assert len(computed) >= 2 and all(examples for _, _, examples in computed)
    return spec, plan, computed


def _store_killed_at(store: ResultStore, batches, monkeypatch, kill_at: int) -> None:
    """`_gather_and_store` of every batch, killed just before the store's write number `kill_at`."""
    spec, plan, computed = batches
    writes = []
    write = store.datasets._write

    def counted(*args, **kwargs):
        if len(writes) == kill_at:
            raise Killed
        writes.append(args[0])
        return write(*args, **kwargs)

    monkeypatch.setattr(store.datasets, "_write", counted)
    monkeypatch.setattr(sweep_module, "as_completed", iter)
    futures = {_Done((rows, examples)): index for index, (_, rows, examples) in enumerate(computed)}
    summary = SimpleNamespace(fits=0, ok=0, failed=0)
    with pytest.raises(Killed) if kill_at < 2 * len(computed) else contextlib.nullcontext():
        sweep_module._gather_and_store(
            futures, plan, [c for c, _, _ in computed], store, summary, Progress(0, ProgressMode.QUIET)
        )
    monkeypatch.undo()


def _vectors(store: ResultStore, spec, keys) -> set[str]:
    return set(store.read_examples(keys, "xa", sweep_id=spec.id)) if keys else set()


def test_a_kill_at_any_instant_leaves_no_done_key_without_its_vectors(batches, tmp_path, monkeypatch):
    spec, _, computed = batches
    for kill_at in range(2 * len(computed) + 1):
        store = open_store(str(tmp_path / f"store-{kill_at}"), create=True, writable=True)
        _store_killed_at(store, batches, monkeypatch, kill_at)
        done = store.done_keys(spec.id)  # what select reads, and what the old resume skipped
        assert done == _vectors(store, spec, done), f"killed before write {kill_at}: done keys without vectors"
        assert store.complete_keys(spec.id) == done
        assert len(done) == sum(len(rows) for _, rows, _ in computed[: kill_at // 2])


def test_a_resume_recomputes_the_done_keys_an_old_sweep_left_without_vectors(batches, client, tmp_path):
    """A store written in the old order (results, then examples) and killed between them."""
    spec, _, computed = batches
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    (_, first_rows, first_examples), (_, killed_rows, _) = computed[0], computed[1]
    store.write_results(first_rows)
    store.write_examples(first_examples)
    store.write_results(killed_rows)  # killed here: its examples never written
    killed = {row.config_key for row in killed_rows}
    assert killed <= store.done_keys(spec.id) and not killed & _vectors(store, spec, killed)
    assert store.complete_keys(spec.id) == {row.config_key for row in first_rows}
    _, plan = prepare(spec, store, client, "resume")
    planned = {key for batch in plan.batches for job in batch.jobs for _, key in job.keys}
    assert killed <= planned and not planned & {row.config_key for row in first_rows}
