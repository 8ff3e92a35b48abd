"""A real SLURM: `kind = "slurm"` sweeps whose Dask workers are batch jobs, hit with the faults a
cluster has (scancel of one and of every worker job, SIGINT and SIGTERM of the driver, scancel of
the driver job), and the deploy/slurm sbatch scripts submitted from a fresh checkout as a user would.

CI starts a single-node SLURM with deploy/slurm/ci-start.sh (Debian's slurmctld, slurmd, munge;
every address 127.0.0.1, and the Dask workers listen on `lo`). Elsewhere these tests skip with the
reason. Every job these tests submit has a job name unique to the test and is cancelled in a
`finally`; every wait has a deadline.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import zlib
from pathlib import Path

import pandas as pd
import pytest
from sweep_processes import (
    DEADLINE,
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

from xialpha.jobs.sweep import run_sweep
from xialpha.spec.sweep import load_spec
from xialpha.storage.contract import StoreQueries
from xialpha.storage.opening import open_store

pytestmark = [pytest.mark.slurm, pytest.mark.cluster]

REPO = Path(__file__).resolve().parents[2]
SWEEP = "slurm-ci"
N_KEYS = 40  # 4 categories x 10 C values, one rho
# Per-run columns: which run, where and when it ran, how long it took.
RUN_COLUMNS = ["run_id", "worker", "created_at", "fit_seconds", "estimate_seconds"]


@pytest.fixture(scope="module")
def slurm() -> str:
    """The idle node's name; skips without SLURM client commands or an idle node."""
    if not (shutil.which("sinfo") and shutil.which("sbatch") and shutil.which("squeue")):
        pytest.skip("SLURM not found (no sinfo/sbatch/squeue): CI starts one with deploy/slurm/ci-start.sh as root")
    try:
        done = subprocess.run(["sinfo", "--noheader", "--format=%n %T"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.skip("sinfo did not answer within 30 s: slurmctld is not running")
    if done.returncode != 0:
        pytest.skip(f"sinfo failed: {done.stderr.strip()}")
    idle = [line.split()[0] for line in done.stdout.splitlines() if line.split()[1:] == ["idle"]]
    if not idle:
        pytest.skip(f"no idle SLURM node (sinfo: {done.stdout.strip() or 'no nodes'})")
    return idle[0]


def _spec(path: Path, job_name: str, *, kind: str = "slurm") -> Path:
    """4 categories x 10 C values (4 C paths: two rounds on 2 workers, so a fault after the first stored
    batch lands mid-sweep), on 2 workers: SLURM jobs of 1 CPU or a local cluster."""
    cluster = {
        "slurm": f'''kind = "slurm"
workers = 2
threads_per_worker = 1
memory_limit = "1GiB"
walltime = "00:30:00"
interface = "lo"
job_name = "{job_name}"
log_directory = "{path.parent / "worker-logs"}"
death_timeout = 60''',
        "local": 'kind = "local"\nworkers = 2',
    }[kind]
    return sweep_spec(path, SWEEP, n_docs=1500, categories=4, cluster=cluster)


def _jobs(name: str) -> dict[str, str]:
    """{job id: state} of the queued and running jobs named `name`."""
    done = subprocess.run(
        ["squeue", "--noheader", f"--name={name}", "--format=%i %T"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return dict(line.split() for line in done.stdout.splitlines())


def _running(name: str, n: int = 1) -> list[str]:
    running = [job for job, state in _jobs(name).items() if state == "RUNNING"]
    return running if len(running) >= n else []


def _logged_jobs(tmp_path: Path, name: str) -> set[str]:
    """The ids of the worker jobs `name` that started, by the logs they wrote (dask-jobqueue's
    `#SBATCH -e <log_directory>/<name>-%J.err`)."""
    return {path.stem.removeprefix(f"{name}-") for path in (tmp_path / "worker-logs").glob(f"{name}-*.err")}


def _job_state(job: str) -> str:
    done = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, timeout=30)
    fields = dict(part.split("=", 1) for part in done.stdout.split() if "=" in part)
    return fields.get("JobState", "")


def _scancel(*args: str, check: bool = True) -> None:
    subprocess.run(["scancel", *args], check=check, capture_output=True, timeout=30)


@pytest.fixture
def job_name(request) -> str:
    """A job name for this test's worker jobs; whatever is left of them is cancelled at the end."""
    name = f"xa-test-{os.getpid()}-{zlib.crc32(request.node.nodeid.encode()):08x}"
    yield name
    subprocess.run(["scancel", f"--name={name}"], timeout=30)


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory) -> pd.DataFrame:
    """The rows a local cluster stores for the same sweep: what every SLURM run must store."""
    path = tmp_path_factory.mktemp("local")
    store = open_store(str(path / "store"), create=True, writable=True)
    summary = run_sweep(load_spec(_spec(path / "local.toml", "", kind="local")), store)
    assert summary.failed == 0
    return _comparable(store)


def _comparable(store: StoreQueries) -> pd.DataFrame:
    rows = store.read_results_df(SWEEP, include_failed=True).drop(columns=RUN_COLUMNS)
    return rows.sort_values("config_key").reset_index(drop=True)


def _check_complete(store: Path, spec: Path, local: pd.DataFrame) -> None:
    """Every key stored exactly once, ok, and the rows equal the local run's."""
    expected = expected_keys(spec, store.parent / "plan-store")
    raw = raw_keys(store, SWEEP)
    assert set(raw) == expected and set(raw.values()) == {1}
    assert ok_keys(store, SWEEP) == expected
    pd.testing.assert_frame_equal(_comparable(open_store(str(store), create=False, writable=True)), local)


def _sweep(tmp_path: Path, job_name: str) -> tuple[Path, Path, subprocess.Popen]:
    """A kind = "slurm" sweep started as a process: (spec, store, process)."""
    spec, store = _spec(tmp_path / "slurm.toml", job_name), tmp_path / "store"
    process = start(sweep_argv(spec, store), tmp_path / "driver.out", stderr=tmp_path / "driver.err")
    return spec, store, process


def _log(tmp_path: Path) -> str:
    parts = [(tmp_path / name).read_text() for name in ("driver.out", "driver.err") if (tmp_path / name).exists()]
    logs = sorted((tmp_path / "worker-logs").glob("*.err"))
    return "\n".join(parts + [f"--- {p.name}\n{p.read_text()[-2000:]}" for p in logs[-2:]])


def _mid_sweep(store: Path, job_name: str, process: subprocess.Popen, workers: int = 2) -> list[str]:
    """Wait until rows are stored and `workers` worker jobs run; their ids."""
    wait_for(lambda: result_files(store, SWEEP), "the first stored batch", process=process)
    return wait_for(lambda: _running(job_name, workers), f"{workers} running worker jobs", process=process)


def test_slurm_sweep_runs_its_workers_as_jobs_and_stores_what_a_local_run_does(slurm, job_name, local_rows, tmp_path):
    spec, store, driver = _sweep(tmp_path, job_name)
    try:
        jobs = wait_for(lambda: _running(job_name, 2), "two running worker jobs in squeue", process=driver)
        driver.wait(timeout=DEADLINE)
    finally:
        kill(driver)
    assert driver.returncode == 0, _log(tmp_path)
    assert len(jobs) == 2
    summary = (tmp_path / "driver.out").read_text()
    assert f"sweep {SWEEP} " in summary and "on 0 threads" not in summary  # threads counted once workers came
    _check_complete(store, spec, local_rows)
    wait_for(lambda: not _jobs(job_name), "the worker jobs to leave squeue", timeout=60)


def test_a_worker_job_slurm_refuses_is_one_line_exit_2_and_no_store(slurm, job_name, tmp_path):
    """A partition SLURM does not have: before, sbatch's error in a callback and a sweep that waited
    for workers forever; now `sbatch --test-only` is asked first: one line with SLURM's reason."""
    spec = _spec(tmp_path / "spec.toml", job_name)
    spec.write_text(spec.read_text().replace('kind = "slurm"', 'kind = "slurm"\nqueue = "no-such-partition"'))
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "SLURM refuses the worker job" in done.stderr and "no-such-partition" in done.stderr, done.stderr
    assert not (tmp_path / "store").exists() and not _jobs(job_name)


def test_scancel_of_one_worker_job_loses_nothing(slurm, job_name, local_rows, tmp_path):
    spec, store, driver = _sweep(tmp_path, job_name)
    try:
        jobs = _mid_sweep(store, job_name, driver)
        _scancel(jobs[0])
        assert driver.poll() is None and len(raw_keys(store, SWEEP)) < N_KEYS, "the sweep ended before the scancel"
        driver.wait(timeout=DEADLINE)
    finally:
        kill(driver)
    assert driver.returncode == 0, _log(tmp_path)
    _check_complete(store, spec, local_rows)


def test_scancel_of_every_worker_job_brings_replacements_and_the_sweep_finishes(slurm, job_name, local_rows, tmp_path):
    spec, store, driver = _sweep(tmp_path, job_name)
    try:
        cancelled = set(_mid_sweep(store, job_name, driver))
        _scancel(f"--name={job_name}")
        assert driver.poll() is None and len(raw_keys(store, SWEEP)) < N_KEYS, "the sweep ended before the scancel"
        driver.wait(timeout=DEADLINE)
    finally:
        kill(driver)
    assert driver.returncode == 0, _log(tmp_path)
    # The jobs that ran, by their logs (SLURM opens a job's log as it starts it): a replacement that
    # fitted the last configs between two polls of squeue was never seen RUNNING there (CI).
    replacements = _logged_jobs(tmp_path, job_name) - cancelled
    assert replacements, f"no worker job ran besides the cancelled {sorted(cancelled)}"
    _check_complete(store, spec, local_rows)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signalled_driver_cancels_its_worker_jobs_keeps_its_rows_and_says_so_in_one_line(
    slurm, job_name, tmp_path, signum
):
    """SIGINT as a terminal's Ctrl-C sends it (to the process group); SIGTERM as `kill` does."""
    spec, store, driver = _sweep(tmp_path, job_name)
    try:
        _mid_sweep(store, job_name, driver)
        stored = ok_keys(store, SWEEP)
        if signum == signal.SIGINT:
            os.killpg(driver.pid, signum)
        else:
            driver.send_signal(signum)
        driver.wait(timeout=60)
        wait_for(lambda: not _jobs(job_name), "the worker jobs to leave squeue", timeout=30)
        session_ends(driver.pid)
    finally:
        kill(driver)
    name = signal.Signals(signum).name
    assert driver.returncode == 128 + signum, _log(tmp_path)
    assert (tmp_path / "driver.err").read_text().splitlines() == [
        f"xialpha sweep: interrupted by {name}; results stored so far are kept"
    ]
    assert stored <= ok_keys(store, SWEEP) < expected_keys(spec, tmp_path / "plan-store")
    assert set(raw_keys(store, SWEEP).values()) == {1}


# --- the sbatch scripts, as a user submits them ---------------------------------------------------


def _checkout(tmp_path: Path) -> Path:
    """The repository's tracked files as a fresh checkout has them (no slurm-logs/, no store)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, timeout=60)
    if files.returncode != 0:
        pytest.skip(f"not a git checkout: {files.stderr.strip()}")
    checkout = tmp_path / "checkout"
    for name in files.stdout.split("\0"):
        if name and (REPO / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, checkout / name)
    return checkout


def _sbatch(checkout: Path, script: str, *args: str) -> str:
    """Submit deploy/slurm/SCRIPT from the checkout with the test's environment, as `sbatch` does by default."""
    env = {**os.environ, "XIALPHA_VENV": sys.prefix, "XIALPHA_INTERFACE": "lo"}
    done = subprocess.run(
        ["sbatch", "--parsable", f"deploy/slurm/{script}", *args],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def _finished(job: str) -> str:
    state = _job_state(job)
    return state if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY") else ""


@pytest.mark.parametrize(
    "script, kind, log", [("sweep.sbatch", "slurm", "xialpha-driver"), ("allocation.sbatch", "local", "xialpha-sweep")]
)
def test_sbatch_script_from_a_fresh_checkout_completes(slurm, job_name, local_rows, tmp_path, script, kind, log):
    checkout = _checkout(tmp_path)
    spec, store = _spec(checkout / "ci.toml", job_name, kind=kind), tmp_path / "store"
    job = _sbatch(checkout, script, "ci.toml", str(store))
    try:
        state = wait_for(lambda: _finished(job), f"job {job} to finish", timeout=DEADLINE)
    finally:
        _scancel(job, check=False)  # a finished job: nothing to cancel
    output = checkout / f"{log}-{job}.out"
    assert state == "COMPLETED", output.read_text() if output.exists() else f"no {output.name}"
    assert f"sweep {SWEEP} " in output.read_text()
    _check_complete(store, spec, local_rows)


def test_scancel_of_the_driver_job_cancels_its_worker_jobs(slurm, job_name, tmp_path):
    """scancel (like the time limit) sends SIGTERM to the driver job's processes."""
    checkout = _checkout(tmp_path)
    store = tmp_path / "store"
    _spec(checkout / "ci.toml", job_name)
    job = _sbatch(checkout, "sweep.sbatch", "ci.toml", str(store))
    try:
        _mid_sweep(store, job_name, None, workers=1)  # the driver job takes one of the node's CPUs
        _scancel(job)
        wait_for(lambda: not _jobs(job_name), "the worker jobs to leave squeue", timeout=30)
        wait_for(lambda: _finished(job), f"job {job} to end", timeout=60)
    finally:
        _scancel(job, check=False)  # a finished job: nothing to cancel
    output = (checkout / f"xialpha-driver-{job}.out").read_text()
    assert "xialpha sweep: interrupted by SIGTERM; results stored so far are kept" in output.splitlines(), output
    assert ok_keys(store, SWEEP) and set(raw_keys(store, SWEEP).values()) == {1}
