"""A sweep's end (`ResultStore.finish_sweep`): its partitions compacted into one file each, and
a summary stored beside its results that answers `sweeps()` (store ls) and the completeness
check as reading its rows does, used only while its files are unchanged (issue 33)."""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from store_rows import T0, data_files, result_row

from xialpha.errors import StoreWarning, StoreWriteError
from xialpha.storage.location import Location
from xialpha.storage.opening import open_store
from xialpha.storage.rows import RunRow
from xialpha.storage.store import ResultStore
from xialpha.storage.summary import SUMMARY_NAME, keys_digest

SECOND = datetime.timedelta(seconds=1)


@pytest.fixture
def store(tmp_path) -> ResultStore:
    """Two sweeps in many small files: superseded rows, a failure after an ok row, one never ok,
    examples and runs."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    for i in range(8):
        store.datasets.write_results([result_row(i, created_at=T0 + i * SECOND)])
    store.datasets.write_results([result_row(0, xa_error=0.5, created_at=T0 + 9 * SECOND)])
    store.datasets.write_results([result_row(3, status="failed", error_message="diverged", created_at=T0)])
    store.datasets.write_results([result_row(8, status="failed", error_message="out of memory", created_at=T0)])
    for i in range(3):
        store.datasets.write_results([result_row(i, sweep_id="other", C=4.0 + i, created_at=T0 + 2 * SECOND)])
    for i in range(3):
        bits = np.arange(13) % (i + 2) == 0
        store.datasets.write_examples(
            [{"sweep_id": "sweep-1", "config_key": f"k{i}", "category": "earn", "estimator": "xa", "bits": bits}]
        )
    for finished in (None, T0 + 10 * SECOND):
        store.add_run(RunRow("sweep-1", "run-1", "spec", "", "fp-1", "earn,acq,grain", "0", "", T0, finished))
    return store


def _snapshot(store: ResultStore) -> dict:
    """What every query of the two sweeps returns."""
    return {
        "results": store.datasets.read_results(include_failed=True).to_pylist(),
        "done": store.done_keys("sweep-1"),
        "stored": store.stored_keys("sweep-1"),
        "examples": {k: v.tolist() for k, v in store.read_examples(["k0", "k1", "k2"], sweep_id="sweep-1").items()},
        "runs": store.runs().to_dict("list"),
        "sweeps": store.sweeps().to_dict("list"),
    }


def _files(store: ResultStore, dataset: str, sweep_id: str) -> list[str]:
    return sorted(p.name for p in data_files(Path(store.datasets.location.root) / dataset / f"sweep_id={sweep_id}"))


def test_finish_compacts_the_sweeps_partitions_and_changes_no_query(store):
    before = _snapshot(store)
    others = _files(store, "results", "other")
    counts = store.finish_sweep("sweep-1")
    assert [len(_files(store, dataset, "sweep-1")) for dataset in ("results", "examples", "sweeps")] == [1, 1, 1]
    assert _files(store, "results", "other") == others  # another sweep's files are not its to compact
    assert _snapshot(open_store(store.uri, create=True, writable=True)) == before
    assert (counts.rows_ok, counts.rows_failed, counts.stored_keys) == (8, 1, 9)


def test_the_summary_equals_what_reading_the_rows_gives(store):
    from_rows = store.sweeps()
    store.finish_sweep("sweep-1")
    store.finish_sweep("other")
    reopened = open_store(store.uri, create=True, writable=True)
    summary = reopened.sweep_summary("sweep-1")
    assert summary is not None and reopened.sweep_summary("other") is not None
    pd.testing.assert_frame_equal(reopened.sweeps(), from_rows)
    assert summary == reopened._summarise("sweep-1")  # the same function over the same rows
    assert summary.holds_exactly(reopened.stored_keys("sweep-1"))
    assert summary.grid["C"] == [0.5, 1.0, 1.5, 2.0] and summary.grid["category"] == ["acq", "earn", "grain"]
    assert from_rows.to_dict("list")["rows_ok"] == [3, 8] and from_rows.to_dict("list")["configs"] == [3, 4]


def test_the_summary_answers_without_reading_rows(store, monkeypatch):
    store.finish_sweep("sweep-1")
    store.finish_sweep("other")
    expected = store.sweeps()
    reopened = open_store(store.uri, create=True, writable=True)
    monkeypatch.setattr(type(reopened.datasets), "read_results", lambda *a, **k: pytest.fail("read rows"))
    pd.testing.assert_frame_equal(reopened.sweeps(), expected)


def test_a_write_after_the_summary_makes_reads_use_the_rows_again(store):
    store.finish_sweep("sweep-1")
    store.datasets.write_results([result_row(20, created_at=T0 + 30 * SECOND)])
    reopened = open_store(store.uri, create=True, writable=True)
    assert reopened.sweep_summary("sweep-1") is None
    row = reopened.sweeps().set_index("sweep_id").loc["sweep-1"]
    assert row["rows_ok"] == 9 and row["last_created_at"] == pd.Timestamp(T0 + 30 * SECOND)
    store.compact("results")  # `store compact` stores the summaries anew
    assert open_store(store.uri, create=True, writable=True).sweep_summary("sweep-1") == reopened._summarise("sweep-1")


@pytest.mark.parametrize(
    ("text", "warned"),
    [
        ("{", "not JSON"),
        ('{"format": "xialpha-sweep-summary-1"}', None),  # an earlier version's: stale, not damaged
        ('{"format": "other", "files": []}', "format 'other'"),
        ("[1, 2]", "a JSON list, not an object"),
        ("\xff", "not UTF-8"),
    ],
)
def test_a_damaged_summary_is_not_used(store, text, warned, recwarn):
    store.finish_sweep("sweep-1")
    expected = store.sweeps()
    path = Path(store.datasets.location.root) / "results" / "sweep_id=sweep-1" / SUMMARY_NAME
    path.write_bytes(text.encode("latin-1"))
    reopened = open_store(store.uri, create=True, writable=True)
    assert reopened.sweep_summary("sweep-1") is None
    pd.testing.assert_frame_equal(reopened.sweeps(), expected)
    shown = [str(w.message) for w in recwarn if issubclass(w.category, StoreWarning)]
    if warned is None:
        assert shown == []
    else:
        assert len(shown) == 1 and f"ignored results/sweep_id=sweep-1/{SUMMARY_NAME}: {warned}" in shown[0], shown


def test_a_summary_of_another_sweep_is_not_used(store):
    store.finish_sweep("sweep-1")
    root = Path(store.datasets.location.root) / "results"
    text = (root / "sweep_id=sweep-1" / SUMMARY_NAME).read_text()
    files = _files(store, "results", "other")
    (root / "sweep_id=other" / SUMMARY_NAME).write_text(text.replace(_files(store, "results", "sweep-1")[0], files[0]))
    assert open_store(store.uri, create=True, writable=True).sweep_summary("other") is None


def test_a_compaction_interrupted_while_writing_changes_nothing(store, monkeypatch):
    before, files = _snapshot(store), _files(store, "results", "sweep-1")

    def no_space(self, directory, schema, groups, name):
        raise StoreWriteError("no space left on device")

    monkeypatch.setattr(Location, "write_row_groups", no_space)
    with pytest.raises(StoreWriteError):
        store.finish_sweep("sweep-1")
    monkeypatch.undo()
    assert _files(store, "results", "sweep-1") == files
    assert open_store(store.uri, create=True, writable=True).sweep_summary("sweep-1") is None
    assert _snapshot(open_store(store.uri, create=True, writable=True)) == before


def test_a_compaction_interrupted_before_deleting_its_inputs_changes_no_query(store, monkeypatch):
    before = _snapshot(store)
    deleted, delete = [], Location.delete

    def crash_after_one(self, path):
        if deleted:
            raise KeyboardInterrupt  # killed between two deletes
        deleted.append(path)
        delete(self, path)

    monkeypatch.setattr(Location, "delete", crash_after_one)
    with pytest.raises(KeyboardInterrupt):
        store.finish_sweep("sweep-1")
    monkeypatch.undo()
    assert len(_files(store, "results", "sweep-1")) > 1  # the merged file and the inputs not deleted yet
    assert open_store(store.uri, create=True, writable=True).sweep_summary("sweep-1") is None
    assert _snapshot(open_store(store.uri, create=True, writable=True)) == before
    store.finish_sweep("sweep-1")  # the next end finishes it
    assert (
        _snapshot(open_store(store.uri, create=True, writable=True)) == before
        and len(_files(store, "results", "sweep-1")) == 1
    )


def test_holds_exactly_compares_the_set_of_stored_keys(store):
    summary = store.finish_sweep("sweep-1")
    keys = store.stored_keys("sweep-1")
    assert summary.holds_exactly(set(keys))
    assert not summary.holds_exactly(keys - {next(iter(keys))})
    assert not summary.holds_exactly({*list(keys)[1:], "another"})
    assert summary.stored_keys_digest == keys_digest(sorted(keys, reverse=True))
