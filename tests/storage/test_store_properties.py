"""Generated sequences of store operations against a simple model (issue 16, property tests).

Operations: writes of ok and failed rows for a few keys by several writers whose clocks are
skewed (created_at anywhere within +-1 day, unrelated to the order of writes), compactions,
and unreadable or foreign files planted among the data files. The model: per key the value of
the last "ok" write and the message of the last failed write. After every sequence (and after
a final compaction and quarantine) the store must agree with it: no "ok" row ever lost, the newest "ok" row
wins, a key without any "ok" row shows its newest failure, and reads never crash.
"""

from __future__ import annotations

import datetime
import tempfile
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_rows import T0, result_row

from xialpha.errors import StoreWarning
from xialpha.storage.opening import open_store
from xialpha.storage.rows import config_key
from xialpha.storage.store import ResultStore

KEYS = 4
WRITERS = 3
SCRATCH = "/dev/shm" if Path("/dev/shm").is_dir() else None  # memory-backed: no fsync cost, same POSIX semantics

row_strategy = st.tuples(st.integers(0, KEYS - 1), st.sampled_from(["ok", "failed"]))
write = st.tuples(
    st.just("write"),
    st.integers(0, WRITERS - 1),  # which writer (its own store object, like a separate driver)
    st.lists(row_strategy, min_size=1, max_size=KEYS, unique_by=lambda row: row[0]),
    st.integers(-86_400, 86_400),  # the writer's clock skew in seconds
)
operation = st.one_of(
    write,
    st.tuples(st.just("compact"), st.integers(0, WRITERS - 1)),
    st.tuples(st.just("plant"), st.sampled_from(["truncated", "foreign", "other-sweep"])),
)


def _plant(root: Path, kind: str, serial: int) -> None:
    partition = root / "results" / "sweep_id=sweep-1"
    partition.mkdir(parents=True, exist_ok=True)
    path = partition / f"part-planted-{serial}.parquet"
    if kind == "truncated":
        path.write_bytes(b"PAR1" + b"\x00" * 64)
    elif kind == "foreign":
        pq.write_table(pa.table({"sweep_id": ["sweep-1"], "config_key": [config_key(i=0)], "oops": [1]}), path)
    else:  # a complete results file of another sweep
        with tempfile.TemporaryDirectory() as scratch:
            written = open_store(f"{scratch}/s", create=True, writable=True).datasets.write_results(
                [result_row(0, sweep_id="other", xa_error=0.99)]
            )
            path.write_bytes(Path(written).read_bytes())


def _check(store: ResultStore, model: dict) -> None:
    columns = ["config_key", "status", "xa_error", "error_message"]
    rows = {
        row["config_key"]: row for row in store.datasets.read_results(include_failed=True, columns=columns).to_pylist()
    }
    assert set(rows) == {config_key(i=key) for key in model}
    for key, (ok_value, failure) in model.items():
        row = rows[config_key(i=key)]
        if ok_value is not None:
            assert (row["status"], row["xa_error"]) == ("ok", ok_value)
        else:
            assert (row["status"], row["error_message"]) == ("failed", failure)
    assert store.done_keys("sweep-1") == {config_key(i=k) for k, (ok, _) in model.items() if ok is not None}
    high = store.datasets.read_results(filters=[("xa_error", ">=", 0.5)], columns=["config_key"])
    assert set(high["config_key"].to_pylist()) == {
        config_key(i=k) for k, (ok, _) in model.items() if ok is not None and ok >= 0.5
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=8))
def test_generated_writes_compactions_and_planted_files_agree_with_the_model(operations):
    with tempfile.TemporaryDirectory(dir=SCRATCH) as scratch, warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning but the store's about planted files fails the case
        warnings.simplefilter("ignore", StoreWarning)
        uri = f"{scratch}/store"
        writers = [open_store(uri, create=True, writable=True) for _ in range(WRITERS)]
        model: dict[int, tuple[float | None, str | None]] = {}
        for serial, op in enumerate(operations):
            if op[0] == "write":
                _, writer, rows, skew = op
                created_at = T0 + datetime.timedelta(seconds=skew)
                batch = []
                for key, status in rows:
                    ok_value, failure = model.get(key, (None, None))
                    if status == "ok":
                        ok_value = round(0.01 * serial + 0.001 * key, 6)
                        batch.append(result_row(key, xa_error=ok_value, created_at=created_at))
                    else:
                        failure = f"attempt {serial}"
                        batch.append(result_row(key, status="failed", error_message=failure, created_at=created_at))
                    model[key] = (ok_value, failure)
                writers[writer].datasets.write_results(batch)
            elif op[0] == "compact":
                writers[op[1]].compact()
            else:
                _plant(Path(uri), op[1], serial)
        if model:
            reader = open_store(uri, create=True, writable=True)
            _check(reader, model)
            reader.quarantine(reader.check())
            reader.compact()
            assert reader.check() == []
            _check(open_store(uri, create=False, writable=True), model)
