"""SIGINT and SIGTERM end a command cleanly: the cluster is closed (no worker process outlives the
driver), what was stored is kept, ONE line goes to stderr, and the exit code is 130 or 143.

Real `xialpha sweep` processes on a LocalCluster, signalled once rows are stored: SIGINT as a
terminal's Ctrl-C sends it (to the whole process group, worker processes included), SIGTERM as
`kill` and `docker stop` do (to the driver only), and SIGTERM to xialpha running as PID 1 of its own
PID namespace, as in a container (PID 1 gets no default signal action: without a handler it would
ignore SIGTERM until `docker stop` kills it after 10 s). The SLURM side is in tests/jobs/test_slurm.py.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from sweep_processes import (
    LONG_C_GRID,
    expected_keys,
    kill,
    ok_keys,
    raw_keys,
    result_files,
    session_ends,
    start,
    sweep_argv,
    sweep_spec,
    wait_for,
)

pytestmark = pytest.mark.cluster

SWEEP = "signals"


def _spec(path: Path) -> Path:
    """2 categories x 30 C values, one fit per batch, on 2 local workers, 12,000 documents: seconds
    of fits after the first stored batch, long enough to be signalled mid-way also where a signal
    lands a second after that batch (as in the PID 1 test; with 4,000 documents an idle machine
    finished the sweep before its signal, 2026-11-29)."""
    return sweep_spec(path, SWEEP, n_docs=12_000, C=LONG_C_GRID, cluster='kind = "local"\nworkers = 2')


def _check_interrupted(
    tmp_path: Path,
    process: subprocess.Popen,
    signum: int,
    spec: Path,
    store: Path,
    stored: set[str],
    progress: bool = False,
) -> None:
    """Exit 128 + signum, one line on stderr (after the stage and fit lines a sweep run with
    `progress` shows), rows stored before the signal kept, each key once."""
    err = (tmp_path / "driver.err").read_text()
    assert process.returncode == 128 + signum, err
    lines = err.splitlines()
    assert lines[-1:] == [
        f"xialpha sweep: interrupted by {signal.Signals(signum).name}; results stored so far are kept"
    ]
    assert [line for line in lines[:-1] if not (progress and _progress_line(line))] == [], lines
    assert stored <= ok_keys(store, SWEEP) < expected_keys(spec, tmp_path / "plan-store")
    assert set(raw_keys(store, SWEEP).values()) == {1}
    for path in store.rglob("*.parquet"):
        pq.read_table(path)


@pytest.mark.parametrize(
    "signum, group, progress", [(signal.SIGINT, True, True), (signal.SIGTERM, False, False)], ids=["SIGINT", "SIGTERM"]
)
def test_a_signalled_local_sweep_closes_its_workers_keeps_its_rows_and_prints_one_line(
    tmp_path, signum, group, progress
):
    """SIGINT as Ctrl-C while fits are stored, with the sweep showing its progress (without --quiet,
    outside a terminal: its stages and fits), adds exactly one line: no Dask warning, no traceback;
    SIGTERM to a --quiet sweep's driver is its only line."""
    spec, store = _spec(tmp_path / "s.toml"), tmp_path / "store"
    argv = sweep_argv(spec, store)
    if progress:
        argv.remove("--quiet")
    driver = start(argv, tmp_path / "driver.out", stderr=tmp_path / "driver.err")
    try:
        wait_for(lambda: result_files(store, SWEEP), "the first stored batch", process=driver)
        stored = ok_keys(store, SWEEP)
        (os.killpg if group else os.kill)(driver.pid, signum)
        driver.wait(timeout=60)
        session_ends(driver.pid)  # the session is the driver's: its worker processes end with it
    finally:
        kill(driver)
    _check_interrupted(tmp_path, driver, signum, spec, store, stored, progress)


STAGE_LINE = re.compile(
    r"^(loading corpus|planning|starting cluster|vectorising|building features"
    r"|fitting|storing|closing cluster) \(\d+ s\)$"
)


def _progress_line(line: str) -> bool:
    """A line of the progress a sweep without --quiet shows outside a terminal."""
    return bool(STAGE_LINE.match(line)) or line.startswith(("dashboard: ", "fits "))


def test_ctrl_c_while_the_sweep_shows_its_progress_adds_one_line(tmp_path):
    """Without --quiet and outside a terminal the sweep prints its stages (those lasting a second;
    tests/jobs/test_progress.py) and fits; Ctrl-C once the cluster is up (corpus read, vectorising)
    adds exactly one line: no Dask warning, no traceback (Ctrl-C while fits are stored: the SIGINT
    case of the test above)."""
    spec, store = _spec(tmp_path / "s.toml"), tmp_path / "store"
    argv = sweep_argv(spec, store)
    argv.remove("--quiet")
    err = tmp_path / "driver.err"
    driver = start(argv, tmp_path / "driver.out", stderr=err)
    try:
        wait_for(lambda: "dashboard: " in err.read_text(), "the dashboard line", process=driver)
        os.killpg(driver.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        driver.wait(timeout=60)
    finally:
        kill(driver)
    lines = err.read_text().splitlines()
    assert driver.returncode == 130, lines
    assert lines[-1] == "xialpha sweep: interrupted by SIGINT; results stored so far are kept"
    assert [line for line in lines[:-1] if not _progress_line(line)] == []


def _pid1_possible() -> str | None:
    """Why xialpha cannot be run as PID 1 of a new PID namespace here, or None."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) not found"
    if os.geteuid() != 0:
        return "a new PID namespace needs root"
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, text=True, timeout=30
    )
    return None if done.returncode == 0 else f"unshare --pid failed: {done.stderr.strip()}"


def test_sigterm_to_xialpha_as_pid_1_as_in_a_container(tmp_path):
    """`docker stop` sends SIGTERM to the container's PID 1, which the image's ENTRYPOINT makes xialpha."""
    reason = _pid1_possible()
    if reason:
        pytest.skip(reason)
    spec, store = _spec(tmp_path / "s.toml"), tmp_path / "store"
    outer = start(
        ["unshare", "--pid", "--fork", "--mount-proc", *sweep_argv(spec, store)],
        tmp_path / "driver.out",
        stderr=tmp_path / "driver.err",
    )
    try:
        wait_for(lambda: result_files(store, SWEEP), "the first stored batch", process=outer)
        pid1 = int(Path(f"/proc/{outer.pid}/task/{outer.pid}/children").read_text().split()[0])
        nspid = next(
            line for line in Path(f"/proc/{pid1}/status").read_text().splitlines() if line.startswith("NSpid:")
        )
        assert nspid.split()[-1] == "1"  # its id inside its PID namespace
        stored = ok_keys(store, SWEEP)
        os.kill(pid1, signal.SIGTERM)
        outer.wait(timeout=60)  # unshare exits with its child's code
    finally:
        kill(outer)
    _check_interrupted(tmp_path, outer, signal.SIGTERM, spec, store, stored)


def test_a_second_signal_during_the_clean_up_exits_at_once(tmp_path):
    """The first signal unwinds (cleaning up); a second one, e.g. Ctrl-C pressed again because the
    clean-up hangs, exits at once with its own code and the same one line."""
    program = """
import os, signal, sys, time
from xialpha.commands.signals import Interrupted, signals_interrupt
with signals_interrupt(lambda signum: f"interrupted by {signal.Signals(signum).name}"):
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
    except Interrupted as exc:
        print("cleaning up after", exc.signum, flush=True)
        os.kill(os.getpid(), signal.SIGINT)  # a clean-up that hangs, and a second signal
        time.sleep(30)
print("not reached")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130
    assert done.stdout.splitlines() == [f"cleaning up after {signal.SIGTERM.value}"]
    assert done.stderr.splitlines() == ["interrupted by SIGINT"]


def test_importing_dask_jobqueue_for_kind_slurm_leaves_the_sigint_handler_alone(tmp_path):
    """dask_jobqueue's runner module sets SIGINT to sys.exit() on import: Ctrl-C would exit 0, silently.
    slurm_cluster_class() first refuses a machine without `sbatch` on PATH; a stand-in `sbatch` (never
    run: only looked up) lets the import be tested on machines without SLURM too."""
    pytest.importorskip("dask_jobqueue")
    stand_in = tmp_path / "bin" / "sbatch"
    stand_in.parent.mkdir()
    stand_in.write_text("#!/bin/sh\necho 'stand-in sbatch: not SLURM' >&2\nexit 1\n")
    stand_in.chmod(0o755)
    program = """
import signal, sys
assert "dask_jobqueue" not in sys.modules
handler = signal.getsignal(signal.SIGINT)
from xialpha.jobs.cluster import slurm_cluster_class
slurm_cluster_class()
print("dask_jobqueue" in sys.modules, signal.getsignal(signal.SIGINT) is handler)
"""
    env = {**os.environ, "PATH": f"{stand_in.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, env=env)
    assert done.stdout.split() == ["True", "True"], done.stderr
