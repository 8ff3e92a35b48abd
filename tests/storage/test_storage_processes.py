"""Real processes against one local store: a writer killed mid-write, concurrent writers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from xialpha.storage.opening import open_store

REPO = Path(__file__).resolve().parents[2]

# A child process: writes one big results table slowly (tiny row groups) to sweep "big".
BIG_WRITER = """
import sys
import pyarrow as pa
import xialpha.storage.location as location
from xialpha.storage.opening import open_store

location.ROW_GROUP_ROWS = 20
n = 300_000
keys = pa.array([f"key-{i}" for i in range(n)])
table = pa.table({
    "sweep_id": pa.array(["big"] * n), "run_id": pa.array(["r"] * n), "config_key": keys,
    "status": pa.array(["ok"] * n), "data_fingerprint": pa.array(["fp"] * n), "category": pa.array(["earn"] * n),
    "preprocessing_id": pa.array(["pp"] * n), "kernel": pa.array(["linear"] * n), "kernel_id": pa.array(["lin"] * n),
    "C": pa.array([1.0] * n), "j": pa.array([1.0] * n), "rho": pa.array([2.0] * n),
    "n": pa.array([100] * n), "n_pos": pa.array([10] * n),
})
store = open_store(sys.argv[1], create=True, writable=True)
print("writing", flush=True)
store.datasets.write_results(table)
print("finished", flush=True)
"""

# A child process: writes `files` files of `rows` rows each to sweep "shared", keys prefixed by its name.
SMALL_WRITER = """
import sys
from xialpha.storage.opening import open_store

store_uri, name, files, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = open_store(store_uri, create=True, writable=True)
for f in range(files):
    store.datasets.write_results([
        {"sweep_id": "shared", "run_id": name, "config_key": f"{name}-{f}-{r}", "status": "ok",
         "data_fingerprint": "fp", "category": "earn", "preprocessing_id": "pp", "kernel": "linear",
         "kernel_id": "lin", "C": 1.0, "j": 1.0, "rho": 2.0, "n": 10, "n_pos": 1}
        for r in range(rows)
    ])
"""


def _python(script: str, *args: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", script, *args], env=env, cwd=REPO, text=True, **popen)


def _small_rows(n: int) -> list[dict]:
    from store_rows import result_row

    return [result_row(i, sweep_id="big") for i in range(n)]


def test_writer_killed_mid_write_leaves_no_readable_partial_file(tmp_path):
    store_dir = tmp_path / "store"
    store = open_store(str(store_dir), create=True, writable=True)
    store.datasets.write_results(_small_rows(5))
    partition = store_dir / "results" / "sweep_id=big"
    committed = set(partition.iterdir())

    child = _python(BIG_WRITER, str(store_dir), stdout=subprocess.PIPE)
    assert child.stdout.readline().strip() == "writing"
    deadline = time.monotonic() + 120
    partial = []
    while time.monotonic() < deadline and child.poll() is None:
        partial = [p for p in set(partition.iterdir()) - committed if p.stat().st_size > 200_000]
        if partial:
            break
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    output, _ = child.communicate()
    assert partial, "the writer never got mid-write before it ended"
    assert "finished" not in output, "the writer finished before it was killed: make the write slower"
    assert child.returncode == -signal.SIGKILL

    visible = list(partition.glob("*.parquet"))
    assert len(visible) == 1
    for path in visible:
        pq.read_table(path)  # every visible file is complete
    assert store.datasets.read_results("big").num_rows == 5
    glob = str(store_dir / "results" / "*" / "*.parquet")
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}')").fetchall() == [(5,)]
    assert store.compact() == (1, 1)  # the fresh temporary file is left for its writer
    assert any(p.name.endswith(".tmp") for p in partition.iterdir())


def test_concurrent_writers_and_compaction_lose_no_rows(tmp_path):
    store_dir = tmp_path / "store"
    store = open_store(str(store_dir), create=True, writable=True)
    writers, files, rows = 3, 25, 4
    children = [_python(SMALL_WRITER, str(store_dir), f"w{w}", str(files), str(rows)) for w in range(writers)]
    compactions = 0
    while any(child.poll() is None for child in children):
        store.compact()
        compactions += 1
    assert [child.wait() for child in children] == [0] * writers
    assert compactions >= 1

    keys = store.done_keys("shared")
    assert keys == {f"w{w}-{f}-{r}" for w in range(writers) for f in range(files) for r in range(rows)}
    assert store.datasets.read_results("shared").num_rows == writers * files * rows
    store.compact()
    assert len(list((store_dir / "results" / "sweep_id=shared").glob("*.parquet"))) == 1
    assert store.done_keys("shared") == keys
