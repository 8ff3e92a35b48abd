"""Faults a cluster has, injected into real sweeps on localhost: a worker SIGKILLed mid-sweep, the
driver SIGKILLed and rerun, two drivers writing one store at once, workers out of memory.

Every process is started in its own session and killed (its whole group) in a `finally`;
every wait has a deadline, so a hang fails the test instead of blocking the suite (tests/sweep_processes.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from sweep_processes import DASK, DEADLINE, LONG_C_GRID
from sweep_processes import expected_keys as _expected_keys
from sweep_processes import kill as _kill
from sweep_processes import ok_keys as _ok_keys
from sweep_processes import raw_keys as _raw_keys
from sweep_processes import result_files as _result_files
from sweep_processes import start as _start
from sweep_processes import sweep_argv as _sweep_argv
from sweep_processes import sweep_spec as _spec
from sweep_processes import wait_for as _wait_for

from xialpha.storage.opening import open_store

# real clusters killed mid-sweep, each waiting for its moment: a campaign of faults, run by CI (`-m slow`)
pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _scheduler_address(scheduler_file: Path) -> str | None:
    """The address a scheduler wrote to its --scheduler-file, None before it has written it whole."""
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


@contextlib.contextmanager
def dask_cluster(tmp_path: Path, n_workers: int = 2):
    """A real `dask scheduler` and `n_workers` `dask worker` processes on 127.0.0.1: (address, workers)."""
    from distributed import Client

    processes = []
    try:
        scheduler_file = tmp_path / "scheduler.json"
        processes.append(
            _start(
                [
                    *DASK,
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--dashboard-address",
                    ":0",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
                tmp_path / "scheduler.log",
            )
        )
        # the file is created before its JSON is written: wait for an address in it (read empty
        # under load, it failed the fixture)
        _wait_for(lambda: _scheduler_address(scheduler_file), "the scheduler file", 60, processes[0])
        address = _scheduler_address(scheduler_file)
        workers = [
            _start(
                [
                    *DASK,
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--name",
                    f"w{i}",
                    "--dashboard-address",
                    ":0",
                    "--memory-limit",
                    "2GiB",
                ],
                tmp_path / f"worker{i}.log",
            )
            for i in range(n_workers)
        ]
        processes += workers
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(n_workers, timeout=120)
        yield address, workers
    finally:
        for process in reversed(processes):
            _kill(process)


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory):
    """One scheduler and two workers for the tests that kill no worker: the address."""
    with dask_cluster(tmp_path_factory.mktemp("cluster")) as (address, _):
        yield address


def _run(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=DEADLINE, env={**os.environ, **(env or {})})


def _every_parquet_file_opens(store: Path) -> int:
    files = sorted(store.rglob("*.parquet"))
    for path in files:
        pq.read_table(path)
    return len(files)


def test_sigkill_one_of_two_workers_mid_sweep_loses_no_row(tmp_path):
    # 4 C paths of 4,000 documents: two rounds on 2 workers, each lasting seconds
    spec = _spec(tmp_path / "kw.toml", "kill-worker", n_docs=4000, categories=4)
    with dask_cluster(tmp_path) as (address, workers):
        _kill_mid_sweep(
            tmp_path,
            spec,
            "kill-worker",
            address,
            workers[0],
            lambda store: _result_files(store, "kill-worker"),
            "the first stored batch",
        )


def _kill_mid_sweep(tmp_path: Path, spec: Path, sweep_id: str, address: str, worker, when, what: str) -> None:
    """Sweep `spec` on the cluster at `address`, SIGKILL `worker` once `when(store)` is true (before
    the sweep ends), and check that the sweep still stores every key exactly once."""
    store, expected = tmp_path / "store", _expected_keys(spec, tmp_path / "plan-store")
    driver = _start(_sweep_argv(spec, store, "--scheduler", address), tmp_path / "driver.log")
    try:
        _wait_for(lambda: when(store), what, process=driver)
        _kill(worker)
        stored_at_kill = len(_raw_keys(store, sweep_id))
        assert driver.poll() is None and stored_at_kill < len(expected), "the sweep ended before the kill"
        driver.wait(timeout=DEADLINE)
    finally:
        _kill(driver)
    log = (tmp_path / "driver.log").read_text()
    assert driver.returncode == 0, log
    assert f"{len(expected)} rows stored, 0 skipped (already stored), 0 failed" in log
    raw = _raw_keys(store, sweep_id)
    assert set(raw) == expected and set(raw.values()) == {1}  # every key exactly once, none lost
    assert _ok_keys(store, sweep_id) == expected


@pytest.mark.parametrize("held", ["part", "linear-data"], ids=["while-loading", "while-holding-stacked-features"])
def test_sigkill_a_worker_holding_corpus_parts_or_features_loses_no_row(tmp_path, held):
    """The worker dies while it holds parts of the corpus it read ("part-*" keys), or the features
    it stacked for its fits (their training data, "linear-data-*"): both are recomputed from the
    files, every key is stored exactly once."""
    from distributed import Client

    spec = _spec(tmp_path / "kp.toml", f"kill-{held}", n_docs=25_000, C=LONG_C_GRID)
    with dask_cluster(tmp_path) as (address, workers), Client(address, timeout="60s") as watcher:
        victim = next(a for a, w in watcher.scheduler_info()["workers"].items() if w["name"] == "w0")
        _kill_mid_sweep(
            tmp_path,
            spec,
            f"kill-{held}",
            address,
            workers[0],
            lambda _: any(str(key).startswith(f"{held}-") for key in watcher.has_what().get(victim, ())),
            f"worker w0 holding {held}-* data",
        )


def test_sigkill_the_driver_then_rerun_computes_only_missing_keys(tmp_path, shared_cluster):
    # 4 C paths of 4,000 documents on 2 workers: the first pair is stored before the second starts
    spec, store = _spec(tmp_path / "kd.toml", "kill-driver", n_docs=4000, categories=4), tmp_path / "store"
    expected = _expected_keys(spec, tmp_path / "plan-store")
    driver = _start(_sweep_argv(spec, store, "--scheduler", shared_cluster), tmp_path / "driver.log")
    try:
        _wait_for(lambda: _result_files(store, "kill-driver"), "the first stored batch", process=driver)
    finally:
        _kill(driver)  # mid-sweep: the test fails below unless some but not all keys were stored
    stored = _ok_keys(store, "kill-driver")
    assert 0 < len(stored) < len(expected), "the kill did not land mid-sweep"
    _every_parquet_file_opens(store)
    rerun = _run(_sweep_argv(spec, store, "--scheduler", shared_cluster))
    assert rerun.returncode == 0, rerun.stderr
    missing = len(expected) - len(stored)
    assert f": {missing} rows stored, {len(stored)} skipped (already stored), 0 failed" in rerun.stdout
    assert _ok_keys(store, "kill-driver") == expected
    raw = _raw_keys(store, "kill-driver")
    assert set(raw) == expected and set(raw.values()) == {1}  # nothing computed twice
    assert _every_parquet_file_opens(store) >= len(_result_files(store, "kill-driver"))


def test_two_sweeps_write_one_store_at_once(tmp_path, shared_cluster):
    store = tmp_path / "store"
    specs = {
        "left": _spec(tmp_path / "left.toml", "left", C="[0.1, 0.3, 1.0, 3.0, 10.0, 30.0]"),
        "right": _spec(tmp_path / "right.toml", "right", n_docs=700, categories=3, C="[0.5, 5.0, 50.0]"),
    }
    expected = {name: _expected_keys(spec, tmp_path / f"plan-{name}") for name, spec in specs.items()}
    open_store(str(store), create=True, writable=True)  # both drivers open an existing store, as a shared one would be
    drivers = {
        name: _start(_sweep_argv(spec, store, "--scheduler", shared_cluster), tmp_path / f"{name}.log")
        for name, spec in specs.items()
    }
    try:
        for driver in drivers.values():
            driver.wait(timeout=DEADLINE)
    finally:
        for driver in drivers.values():
            _kill(driver)
    for name, driver in drivers.items():
        assert driver.returncode == 0, (tmp_path / f"{name}.log").read_text()
        raw = _raw_keys(store, name)
        assert set(raw) == expected[name] and set(raw.values()) == {1}
        assert _ok_keys(store, name) == expected[name]
    assert not expected["left"] & expected["right"]
    _every_parquet_file_opens(store)


def test_gram_over_the_spec_limit_fails_its_configs_with_a_clear_message(tmp_path, shared_cluster):
    # the kernel path (a Gram matrix); linear kernels train on features and need no Gram
    spec = _spec(
        tmp_path / "gram.toml", "gram", n_docs=300, C="[1.0, 10.0]", sweep='gram_memory_limit = "100kB"', kernel="rbf"
    )
    store = tmp_path / "store"
    done = _run(_sweep_argv(spec, store, "--scheduler", shared_cluster))
    assert done.returncode == 1, done.stderr
    assert "GramTooLarge" in done.stderr and "more than the limit" in done.stderr
    failed = open_store(str(store), create=False, writable=True).datasets.read_results("gram", include_failed=True)
    assert failed.num_rows == 4 and set(failed["status"].to_pylist()) == {"failed"}
    assert all("Gram matrix" in message for message in failed["error_message"].to_pylist())


def test_worker_out_of_memory_ends_the_sweep_with_killed_worker_not_a_hang(tmp_path):
    """A 400 MB worker (~260 MB of it its own libraries) and a 5,600 x 5,600 Gram (250 MB): the
    nanny kills the worker at 95%, the task is retried once (allowed-failures = 1), then
    KilledWorker fails the batch's configs and the sweep exits 1."""
    spec = _spec(
        tmp_path / "oom.toml",
        "oom",
        n_docs=8000,
        categories=1,
        C="[1.0]",
        cluster='workers = 1\nmemory_limit = "400MB"',
        kernel="rbf",
    )
    store = tmp_path / "store"
    done = _run(_sweep_argv(spec, store), env={"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "KilledWorker" in done.stderr
    failed = open_store(str(store), create=False, writable=True).datasets.read_results("oom", include_failed=True)
    assert failed.num_rows == 1 and failed["status"].to_pylist() == ["failed"]
    assert "KilledWorker" in failed["error_message"][0].as_py()
