"""Helpers for tests that run real sweeps as processes and hit them with faults.

Every process is started in its own session (so its children die with it) and every wait has a
deadline, so a hang fails the test instead of blocking the suite.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from xialpha.storage.opening import open_store

DEADLINE = 240  # s, the longest any one process of these tests may run
# A sweep long enough to be hit mid-way: 2 categories x 10 C values, one fit per batch.
C_GRID = "[0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0]"
# 30 C values, 0.01 to 681 log-spaced: with 4,000 documents, many seconds of fits after the first
# stored batch, for tests that signal or kill a sweep once a batch is stored
LONG_C_GRID = "[" + ", ".join(f"{0.01 * 10 ** (k / 6):.4g}" for k in range(30)) + "]"
# The `dask` command of this interpreter, started as `python -m dask` so that tests run from a
# virtual environment that is not activated (whose bin directory is not on PATH) start its own.
DASK = [sys.executable, "-m", "dask"]


def start(argv: list[str], log: Path, env: dict | None = None, stderr: Path | None = None) -> subprocess.Popen:
    """A process in its own session, output to `log` (standard error too, unless `stderr` is given)."""
    with contextlib.ExitStack() as files:
        out = files.enter_context(log.open("w"))
        err = files.enter_context(stderr.open("w")) if stderr else subprocess.STDOUT
        return subprocess.Popen(argv, stdout=out, stderr=err, start_new_session=True, env={**os.environ, **(env or {})})


def kill(process: subprocess.Popen) -> None:
    """SIGKILL the process and everything in its session, unless it already ended and was reaped
    (its id may then belong to someone else)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def wait_for(condition, what: str, timeout: float = DEADLINE, process: subprocess.Popen | None = None):
    """Poll `condition()` until it is true (returned); AssertionError after `timeout` s or when `process` ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the process ended (exit {process.returncode}) before {what}")
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def live_processes() -> list[tuple[int, int, int, str]]:
    """(pid, parent pid, session, name) of every process that is not a zombie."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # state ppid pgrp session ...
        if fields[0] != "Z":
            found.append((int(entry), int(fields[1]), int(fields[3]), stat[stat.index("(") + 1 : stat.rindex(")")]))
    return found


def live_in_session(session: int) -> list[str]:
    """'pid command line' of every process of session `session` that is not a zombie."""
    return [f"{pid} {command_line(pid) or name}" for pid, _, sid, name in live_processes() if sid == session]


def session_ends(session: int, timeout: float = 30) -> None:
    """Wait until no process of `session` is left (a driver's workers and multiprocessing's resource
    tracker end with it, the tracker once it reads EOF from the driver's pipe, which under load takes a
    moment); AssertionError naming what is still running after `timeout` s."""
    deadline = time.monotonic() + timeout
    while (left := live_in_session(session)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"still running {timeout} s after the driver of session {session} ended: {left}"


def command_line(pid: int) -> str:
    """The process's argv joined by spaces ("" once it has ended or for a kernel thread)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def sweep_argv(spec: Path, store: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(store), "--quiet", *extra]


def result_files(store: Path, sweep_id: str) -> list[Path]:
    return sorted((store / "results" / f"sweep_id={sweep_id}").glob("*.parquet"))


def raw_keys(store: Path, sweep_id: str) -> Counter:
    """How often each config key was written, over all stored files (before newest-wins)."""
    counts = Counter()
    for path in result_files(store, sweep_id):
        counts.update(pq.read_table(path, columns=["config_key"])["config_key"].to_pylist())
    return counts


def ok_keys(store: Path, sweep_id: str) -> set[str]:
    return open_store(str(store), create=False, writable=True).done_keys(sweep_id)


def expected_keys(spec: Path, store: Path) -> set[str]:
    """All config keys of the spec, from a plan made with the corpus read by threads of this process."""
    from distributed import Client

    from xialpha.jobs.sweep import prepare
    from xialpha.spec.sweep import load_spec

    loaded = load_spec(spec)
    with Client(processes=False, n_workers=1, dashboard_address=None) as client:
        _, plan = prepare(loaded, open_store(str(store), create=True, writable=True), client, "expected", force=True)
    return {key for batch in plan.batches for job in batch.jobs for _, key in job.keys}


def sweep_spec(
    path: Path,
    sweep_id: str,
    *,
    n_docs: int = 700,
    categories: int = 2,
    C: str = C_GRID,
    cluster: str = "",
    sweep: str = "batch_size = 1",
    kernel: str = "linear",
) -> Path:
    """A synthetic sweep spec at `path`: `categories` categories x the C values with one kernel,
    `sweep` and `cluster` lines added to [sweep] and [cluster]."""
    path.write_text(f"""
[sweep]
id = "{sweep_id}"
{sweep}
[corpus]
loader = "synthetic"
n_docs = {n_docs}
n_categories = 4
seed = 11
train_split = "train"
[corpus.categories]
top_k = {categories}
[[kernels]]
name = "{kernel}"
{"gamma = 0.5" if kernel == "rbf" else ""}
[svm]
C = {C}
[cluster]
{cluster}
""")
    return path
