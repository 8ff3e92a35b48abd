"""Signals and lost workers in C = "auto" sweeps and cut C paths (issue 42 item 3).

Found by a campaign on main 69d6b19: a terminal's hang-up (SIGHUP to the whole process group)
during an auto sweep printed 33-57 lines (`KeyError: '/loky-...'` from multiprocessing's resource
tracker, which the hang-up had killed: started again, it knew none of the Dask queues' semaphores
it was told to release); a SIGTERM or SIGHUP landing while the local cluster started left a cluster
that could not be closed (Dask's exit hook printed the traceback of `AssertionError: Status.init`);
worker processes killed as they started gave `internal error: RuntimeError: Nanny failed to start`.
Now: one line and 128 + n, the session's processes gone; lost workers at start one line, exit 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sweep_processes import kill, ok_keys, result_files, session_ends, start, sweep_argv, sweep_spec, wait_for

pytestmark = pytest.mark.cluster

# C "auto": rounds of fits; "cut": 1 category x 12 C on 4 workers, its one C path cut into 4 segments
SPECS = {
    "auto": {"C": '"auto"', "categories": 4, "cluster": 'kind = "local"\nworkers = 2'},
    "cut": {
        "C": "[" + ", ".join(f"{0.01 * 2**k:g}" for k in range(12)) + "]",
        "categories": 1,
        "cluster": 'kind = "local"\nworkers = 4',
    },
}


@pytest.mark.parametrize(
    "sweep, signum",
    [("auto", signal.SIGHUP), ("cut", signal.SIGHUP), ("auto", signal.SIGINT)],
    ids=["auto-SIGHUP", "cut-SIGHUP", "auto-SIGINT"],
)
def test_a_terminal_s_signal_to_the_process_group_mid_sweep_is_one_line(tmp_path, sweep, signum):
    """SIGHUP (the terminal closed) or SIGINT (Ctrl-C), sent as a terminal sends them: to the whole
    process group, the resource tracker, the fork server and the workers included. (SIGINT was one
    line before too: it guards that starting the resource tracker, which unblocks SIGINT in the
    thread that starts it on Python 3.11, leaves the workers' SIGINT blocked.)"""
    spec = sweep_spec(tmp_path / "s.toml", sweep, n_docs=4000, sweep="", **SPECS[sweep])
    store = tmp_path / "store"
    driver = start(sweep_argv(spec, store), tmp_path / "driver.out", stderr=tmp_path / "driver.err")
    try:
        wait_for(lambda: result_files(store, sweep), "the first stored batch", process=driver)
        stored = ok_keys(store, sweep)
        os.killpg(driver.pid, signum)
        driver.wait(timeout=120)
        session_ends(driver.pid)
    finally:
        kill(driver)
    err = (tmp_path / "driver.err").read_text()
    assert driver.returncode == 128 + signum, err
    assert err.splitlines() == [
        f"xialpha sweep: interrupted by {signal.Signals(signum).name}; results stored so far are kept"
    ], err
    assert stored <= ok_keys(store, sweep)


SIGNALLED_WHILE_STARTING = """
import os, signal, sys
import distributed

started = distributed.Nanny.start_unsafe

async def start_unsafe(self):  # the signal lands while the local cluster starts its workers
    if not getattr(distributed, "signalled", False):
        distributed.signalled = True
        os.kill(os.getpid(), {signum})
    return await started(self)

distributed.Nanny.start_unsafe = start_unsafe
sys.argv = ["xialpha", "sweep", {spec!r}, "--store", {store!r}, "--quiet"]
from xialpha.cli import console
console()
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_while_the_local_cluster_starts_is_one_line(tmp_path, signum):
    spec = sweep_spec(tmp_path / "s.toml", "starting", n_docs=400, sweep="", C="[1.0]", cluster="workers = 2")
    script = SIGNALLED_WHILE_STARTING.format(signum=int(signum), spec=str(spec), store=str(tmp_path / "store"))
    process = subprocess.Popen(
        [sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        _, err = process.communicate(timeout=240)
        session_ends(process.pid)
    finally:
        kill(process)
    assert process.returncode == 128 + signum, err
    assert err.splitlines() == [f"xialpha sweep: interrupted by {signum.name}; results stored so far are kept"], err


def test_worker_processes_that_end_as_the_cluster_starts_are_one_line(tmp_path):
    """A worker process that ends before it connects (here: a Dask preload that exits it, as the
    kernel's OOM killer or a `kill` would) fails the local cluster's start."""
    ending = tmp_path / "ending.py"
    ending.write_text("import os\nos._exit(9)\n")
    spec = sweep_spec(tmp_path / "s.toml", "lost", n_docs=400, sweep="", C="[1.0]", cluster="workers = 2")
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__PRELOAD": f'["{ending}"]'}
    done = subprocess.run(sweep_argv(spec, tmp_path / "store"), capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr[-3000:]
    assert done.stderr.startswith(
        "xialpha sweep: error: the local cluster did not start: a worker process ended as it started"
    ), done.stderr
    assert "internal error" not in done.stderr
    assert not any(Path(tmp_path / "store").glob("results/*/*.parquet"))
