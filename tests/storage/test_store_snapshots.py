"""Every read is of one version of the store, whatever compacts beside it (issue 42, item 1): a
compaction that replaces files between a reader's listing and its reads (of the footers, of the
data) or while it lists, or a second compaction beside the first, never makes a read skip a
file as "unreadable" or answer with fewer rows than it does alone."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import pytest
from s3_server import s3_endpoint  # noqa: F401 (a fixture)
from store_rows import result_row

import xialpha.storage.reading as reading
from xialpha.errors import StoreWarning, UserError
from xialpha.storage.opening import open_store
from xialpha.storage.store import ResultStore

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path) -> ResultStore:
    """Sweep "sweep-1" in 12 files of 4 rows (two of them rewritten later), and sweep "other"."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    for f in range(12):
        store.datasets.write_results([result_row(4 * f + r) for r in range(4)])
    store.datasets.write_results([result_row(1, xa_error=0.5), result_row(5, status="failed", error_message="x")])
    store.datasets.write_results([result_row(0, sweep_id="other")])
    return store


def _answers(store: ResultStore) -> dict:
    return {
        "results": store.datasets.read_results(include_failed=True).to_pylist(),
        "sweep": store.datasets.read_results("sweep-1").to_pylist(),
        "done": store.done_keys("sweep-1"),
        "sweeps": store.sweeps().to_dict("list"),
    }


def _compacting_after_listing(reader: ResultStore, monkeypatch, view=None) -> list:
    """Make `reader`'s first listing be followed at once by a compaction of the store by another
    store object (as another process would); `view(before, after)` is what that listing returns
    (default: what it listed before the compaction). The compactions done, as a list."""
    location = reader.datasets.location
    original = location.data_files
    done: list = []

    def listing(path):
        before = original(path)
        if not done:
            done.append(
                open_store(reader.uri, create=True, writable=True).compact("results")
            )  # its own store object: its own listings
            return before if view is None else view(before, original(path))
        return original(path)

    monkeypatch.setattr(location, "data_files", listing)
    return done


def _read_quietly(read):
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)  # "skipped ... unreadable" fails the test
        return read()


@pytest.mark.parametrize("query", ["results", "sweep", "done", "sweeps"])
def test_a_compaction_between_listing_and_reading_changes_no_answer(store, monkeypatch, query):
    alone = _answers(open_store(store.uri, create=True, writable=True))[query]
    reader = open_store(store.uri, create=True, writable=True)
    done = _compacting_after_listing(reader, monkeypatch)
    assert _read_quietly(lambda: _answers(reader)[query]) == alone
    assert done and done[0][1] < done[0][0]


def test_a_compaction_between_reading_the_footers_and_the_data_changes_no_answer(store, monkeypatch):
    alone = _answers(open_store(store.uri, create=True, writable=True))
    reader = open_store(store.uri, create=True, writable=True)
    scan, done = reading._scan, []

    def compact_first(*args, **kwargs):
        if not done:
            done.append("compacting")  # the compaction reads too
            done.append(open_store(store.uri, create=True, writable=True).compact("results"))
        return scan(*args, **kwargs)

    monkeypatch.setattr(reading, "_scan", compact_first)
    assert _read_quietly(lambda: _answers(reader)) == alone
    assert done


def test_a_listing_that_saw_neither_the_merged_file_nor_its_inputs_is_listed_again(store, monkeypatch):
    """A directory listed while a compaction renames its output in and deletes its inputs may show
    neither (POSIX leaves entries added or removed during a listing unspecified)."""
    alone = _answers(open_store(store.uri, create=True, writable=True))
    reader = open_store(store.uri, create=True, writable=True)
    both = lambda before, after: [file for file in before if file in after]  # noqa: E731
    done = _compacting_after_listing(reader, monkeypatch, view=both)
    assert _read_quietly(lambda: reader.datasets.read_results(include_failed=True).to_pylist()) == alone["results"]
    assert done


def test_two_compactions_beside_each_other_lose_nothing_and_warn_nothing(store, monkeypatch):
    alone = _answers(open_store(store.uri, create=True, writable=True))
    first = open_store(store.uri, create=True, writable=True)
    done = _compacting_after_listing(first, monkeypatch)  # the second runs once the first has listed
    _read_quietly(lambda: first.compact("results"))
    assert done
    monkeypatch.undo()
    assert _answers(open_store(store.uri, create=True, writable=True)) == alone
    root = Path(store.datasets.location.root) / "results"
    assert sorted(len(list(d.glob("*.parquet"))) for d in root.iterdir()) == [1, 1]


def test_a_read_that_a_compaction_replaces_every_time_gives_up_with_one_line(store, monkeypatch):
    reader = open_store(store.uri, create=True, writable=True)
    location = reader.datasets.location
    original = location.data_files
    writer = open_store(store.uri, create=True, writable=True)

    def churning(path):
        listed = original(path)
        writer.datasets.write_results([result_row(0)])  # a new file, merged at once: the old ones replaced
        writer.compact("results")
        return listed

    monkeypatch.setattr(location, "data_files", churning)
    monkeypatch.setattr("xialpha.storage.datasets.SNAPSHOT_WAIT_S", 0.001)
    with pytest.raises(UserError, match=r"results/sweep_id=sweep-1 was compacted under each of 10 reads"):
        reader.datasets.read_results("sweep-1")


# A child process: rewrites 3 rows as they are (a newer file of the same values), then ends the
# sweep as a sweep ends (compaction, summary), until the file argv[2] exists: the answers stay the
# same, the files keep changing.
CHURN = """
import os, sys
from xialpha.storage.store import ResultStore
from xialpha.storage.opening import open_store

store = open_store(sys.argv[1], create=True, writable=True)
while not os.path.exists(sys.argv[2]):
    store.datasets.write_results(store.datasets.read_results("sweep-1", include_failed=True).slice(0, 3))
    store.finish_sweep("sweep-1")
"""


def test_readers_beside_a_looping_compaction_answer_as_alone(store, tmp_path):
    alone = _answers(open_store(store.uri, create=True, writable=True))
    stop = tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    churn = subprocess.Popen([sys.executable, "-c", CHURN, store.uri, str(stop)], env=env, cwd=REPO)
    try:
        differing, warned = 0, []
        for _ in range(40):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                differing += _answers(open_store(store.uri, create=True, writable=True)) != alone
            warned += [str(w.message) for w in caught]
    finally:
        stop.touch()
        churn.wait(120)
    assert churn.returncode == 0
    assert (differing, warned) == (0, [])


@pytest.fixture(params=["memory", "s3"])
def remote(request) -> ResultStore:
    """The store of the `store` fixture on fsspec's in-memory filesystem, or on an S3 server (moto)."""
    if request.param == "s3":
        endpoint = request.getfixturevalue("s3_endpoint")
        uri = f"s3://xialpha/stores/{uuid.uuid4().hex}?endpoint_override={endpoint}&scheme=http&allow_delayed_open=true"
    else:
        uri = f"memory://xialpha-snapshots-{uuid.uuid4().hex}"
    store = open_store(uri, create=True, writable=True)
    for f in range(6):
        store.datasets.write_results([result_row(4 * f + r) for r in range(4)])
    store.datasets.write_results([result_row(1, xa_error=0.5), result_row(5, status="failed", error_message="x")])
    return store


def test_on_object_stores_a_compaction_between_listing_and_reading_changes_no_answer(remote):
    alone = _answers(open_store(remote.uri, create=True, writable=True))
    reader = open_store(remote.uri, create=True, writable=True)
    with pytest.MonkeyPatch.context() as patch:  # (undoing every patch would take the S3 credentials too)
        done = _compacting_after_listing(reader, patch)
        assert _read_quietly(lambda: _answers(reader)) == alone
    assert done and done[0][1] < done[0][0]
    open_store(remote.uri, create=True, writable=True).datasets.write_results([result_row(30)])
    first = open_store(remote.uri, create=True, writable=True)
    with pytest.MonkeyPatch.context() as patch:  # two compactions beside each other
        done = _compacting_after_listing(first, patch)
        _read_quietly(lambda: first.compact("results"))
    assert done and len(open_store(remote.uri, create=True, writable=True).datasets.read_results("sweep-1")) == 25
