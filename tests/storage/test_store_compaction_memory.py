"""Compaction merges per row group (issue 41, item 8): the memory it holds is bounded by its keys
and one row group, not by the rows of the partition (`store compact` at 10^6 configurations is
measured in bench/store.py --scale)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from store_rows import result_row

from xialpha.storage.opening import open_store

REPO = Path(__file__).resolve().parents[2]
FILES, ROWS, TEXT = 24, 2000, 1000  # 48 MB of text in memory

# A child process: compacts the store's results with merged row groups of at most 2 MiB, then
# prints the peak of pyarrow's memory pool (bytes) while it did.
COMPACT = """
import sys
import pyarrow as pa
import xialpha.storage.compaction as compaction
from xialpha.storage.opening import open_store

compaction.MERGED_GROUP_BYTES = 2 << 20
store = open_store(sys.argv[1], create=True, writable=True)
store.datasets.compact("results")
print(pa.default_memory_pool().max_memory())
"""


def _wide_rows(first: int, rng: np.random.Generator) -> pa.Table:
    """ROWS result rows whose pp_token_pattern holds TEXT characters of random hex each."""
    rows = [result_row(first + i, sweep_id="wide") for i in range(ROWS)]
    table = pa.Table.from_pylist(rows)
    text = pa.array([rng.bytes(TEXT // 2).hex() for _ in range(ROWS)])
    return table.append_column("pp_token_pattern", text)


def _assert_same_rows(got: pa.Table, expected: pa.Table) -> None:
    """The same columns, types and rows in the same order (Arrow's comparison: no row as Python objects)."""
    assert got.equals(expected), f"{got.num_rows} rows read, {expected.num_rows} expected, or their values differ"


def test_compaction_holds_its_keys_and_a_row_group_not_every_row(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    rng = np.random.default_rng(0)
    for f in range(FILES):
        store.datasets.write_results(_wide_rows(f * ROWS // 2, rng))  # half of each file rewrites the last one's
    expected = store.datasets.read_results("wide")
    data = FILES * ROWS * TEXT
    done = subprocess.run(
        [sys.executable, "-c", COMPACT, store.uri],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    peak = int(done.stdout.split()[-1])
    assert peak < data / 2, f"compaction held {peak / 1e6:.0f} MB of Arrow memory for {data / 1e6:.0f} MB of rows"
    (merged,) = (Path(store.uri) / "results" / "sweep_id=wide").glob("*.parquet")
    assert pq.ParquetFile(merged).metadata.num_row_groups > 1  # written group by group
    _assert_same_rows(open_store(store.uri, create=True, writable=True).datasets.read_results("wide"), expected)


def test_a_compaction_killed_at_any_point_loses_no_row(tmp_path):
    """`store compact` SIGKILLed at spread instants (reading keys, writing row groups, deleting
    inputs): every read afterwards gives the rows it gave before, and the next compaction ends it."""
    import shutil
    import signal
    import time

    original = open_store(str(tmp_path / "original"), create=True, writable=True)
    rng = np.random.default_rng(1)
    for f in range(FILES):
        original.datasets.write_results(_wide_rows(f * ROWS // 2, rng))
    expected = original.datasets.read_results("wide", include_failed=True)  # rows compared as Arrow tables
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    timed = tmp_path / "timed"  # the instants are spread over an uninterrupted compaction's time here
    shutil.copytree(original.uri, timed)
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", COMPACT, str(timed)], env=env, stdout=subprocess.DEVNULL, check=True)
    whole = time.monotonic() - start
    killed = 0
    for share in (0.55, 0.7, 0.85, 0.95):
        store = tmp_path / f"store-{share}"
        shutil.copytree(original.uri, store)
        child = subprocess.Popen([sys.executable, "-c", COMPACT, str(store)], env=env, stdout=subprocess.DEVNULL)
        time.sleep(share * whole)
        killed += child.poll() is None
        child.send_signal(signal.SIGKILL)
        child.wait()
        _assert_same_rows(
            open_store(str(store), create=True, writable=True).datasets.read_results("wide", include_failed=True),
            expected,
        )
        open_store(str(store), create=True, writable=True).compact("results")
        _assert_same_rows(
            open_store(str(store), create=True, writable=True).datasets.read_results("wide", include_failed=True),
            expected,
        )
    assert killed >= 2, "the compactions ended before they were killed: give them more to do"
