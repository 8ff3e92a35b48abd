"""A local cluster's worker processes are forked from a fork server that has imported what a worker
runs (xialpha.jobs.worker_processes.start_local_workers_early), and they keep what worker processes
guarantee: one killed mid-sweep is restarted by its nanny and no row is lost, also when the fork
server itself was killed first; nothing is left running once the driver ends.

Real `xialpha sweep` processes on a LocalCluster; the fork server is the driver's child whose
command line runs multiprocessing.forkserver, and the workers are the fork server's children.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from sweep_processes import (
    LONG_C_GRID,
    command_line,
    expected_keys,
    kill,
    live_processes,
    ok_keys,
    raw_keys,
    result_files,
    session_ends,
    start,
    sweep_argv,
    sweep_spec,
    wait_for,
)

from xialpha.jobs.cluster import connect
from xialpha.jobs.worker_processes import LOCAL_WORKER_MODULES
from xialpha.spec.sweep import load_spec

pytestmark = pytest.mark.cluster

SWEEP = "local-workers"


def _spec(path: Path) -> Path:
    """2 categories x 30 C values, one fit per batch, on 2 local workers: many seconds of fits (12,000
    documents: with 4,000 a sweep in CI stored its last batch before the test found its worker processes)."""
    return sweep_spec(path, SWEEP, n_docs=12_000, C=LONG_C_GRID, cluster='kind = "local"\nworkers = 2')


def _children(pid: int) -> list[int]:
    """The ids of the live (not zombie) processes whose parent is `pid`."""
    return [child for child, parent, _, _ in live_processes() if parent == pid]


def _fork_server(driver: int) -> int | None:
    """The driver's child running multiprocessing's fork server (None before it started)."""
    return next((pid for pid in _children(driver) if "multiprocessing.forkserver" in command_line(pid)), None)


def _worker_modules_imported() -> bool:
    return all(name in sys.modules for name in LOCAL_WORKER_MODULES)


def _drift_modules_imported() -> bool:
    return "xialpha.jobs.drift_check" in sys.modules


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})


def test_local_workers_start_forked_with_their_modules_already_imported(tmp_path):
    spec = load_spec(_spec(tmp_path / "s.toml"))
    with connect(spec.cluster) as client:
        imported = client.run(_worker_modules_imported)  # before any task ran on them
        drift = client.run(_drift_modules_imported)  # a drift check's: not what every sweep starts waiting for
        parents = set(client.run(os.getppid).values())
    assert len(imported) == 2 and all(imported.values()) and not any(drift.values())
    assert len(parents) == 1 and parents != {os.getpid()}  # one fork server, not this process


def test_forked_workers_run_one_blas_thread_each_as_spawned_ones_do(tmp_path):
    """Dask's nanny sets OMP/MKL/OPENBLAS_NUM_THREADS=1 (and malloc trimming, PYTHONHASHSEED) before
    it starts a worker process; the fork server has loaded numpy before any nanny ran, so it must
    have started with them: 2 workers x 2 BLAS threads on 2 cores slowed a Reuters sweep 2.5x."""
    spec = load_spec(_spec(tmp_path / "s.toml"))
    with connect(spec.cluster) as client:
        threads = client.run(_blas_threads)
        environ = client.run(lambda: {key: os.environ.get(key) for key in ("MALLOC_TRIM_THRESHOLD_", "PYTHONHASHSEED")})
    assert list(threads.values()) == [[1], [1]]
    assert list(environ.values()) == [{"MALLOC_TRIM_THRESHOLD_": "65536", "PYTHONHASHSEED": "6640"}] * 2


def test_a_killed_fork_server_then_a_killed_worker_mid_sweep_lose_no_row(tmp_path):
    spec, store = _spec(tmp_path / "s.toml"), tmp_path / "store"
    driver = start(sweep_argv(spec, store), tmp_path / "driver.out", stderr=tmp_path / "driver.err")
    try:
        server = wait_for(lambda: _fork_server(driver.pid), "the fork server", process=driver)
        workers = wait_for(lambda: _children(server), "the fork server's worker processes", process=driver)
        wait_for(lambda: result_files(store, SWEEP), "the first stored batch", process=driver)
        os.kill(server, signal.SIGKILL)
        os.kill(workers[0], signal.SIGKILL)
        stored_at_kill = len(raw_keys(store, SWEEP))
        expected = expected_keys(spec, tmp_path / "plan-store")
        assert driver.poll() is None and stored_at_kill < len(expected), (
            f"the sweep ended before the kills: {stored_at_kill} of {len(expected)} stored"
        )
        driver.wait(timeout=120)
        session_ends(driver.pid)
    finally:
        kill(driver)
    log = (tmp_path / "driver.err").read_text()[-3000:]
    assert driver.returncode == 0, log
    assert ok_keys(store, SWEEP) == expected, log
    assert set(raw_keys(store, SWEEP).values()) == {1}, log
