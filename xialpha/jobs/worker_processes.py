"""How the worker processes a cluster starts on this machine come to life.

Every cluster is started with SIGINT and SIGHUP blocked (`terminal_interrupts_blocked`), so that a
terminal's Ctrl-C or hang-up reaches the driver, not the workers or multiprocessing's helpers. A
local cluster's worker processes are forked from a fork server that has imported what a worker
runs once (`LOCAL_WORKER_MODULES`, see xialpha.jobs.worker_preload): `start_local_workers_early`
starts it while the driver is still importing and loading the corpus, so neither a worker's start
nor its first task waits for those imports (bench/fixed_overhead.py measures what that saves).
Unlike forking the driver itself, which runs threads, the fork server is single-threaded, and each
worker is still a process of its own that its nanny restarts when it dies
(tests/jobs/test_local_workers.py kills the fork server and a worker mid-sweep).

The fork server's preload says what it does that a user should know of (numba compiling a cold
cache, with its progress; a damaged cache compiled again, or one that cannot be cleared) in a file
the driver reads (`PreloadReport`): its stage shows on the sweep's progress, and its notes and
error are the sweep's to print.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.resource_tracker
import os
import signal
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from xialpha.spec.cluster import ClusterSpec

if TYPE_CHECKING:
    from distributed import Client

# What a local worker needs to run its tasks, imported once by the fork server it is forked from.
LOCAL_WORKER_MODULES = ("distributed", "xialpha.jobs.worker_preload")
START_METHOD = "distributed.worker.multiprocessing-method"
# the file the fork server's preload writes its report to, a line each: "stage|note|error<TAB>text"
PRELOAD_REPORT = "XIALPHA_PRELOAD_REPORT"


# what a terminal sends its whole process group: Ctrl-C, and the hang-up when it (or an SSH session) closes
TERMINAL_SIGNALS = frozenset({signal.SIGINT, signal.SIGHUP})


@contextlib.contextmanager
def terminal_interrupts_blocked(*, starting: bool = False) -> Iterator[None]:
    """Inside: SIGINT and SIGHUP blocked in this thread, so that the threads it starts, and the
    processes they spawn (multiprocessing's resource tracker, the fork server and the worker processes
    forked from it), keep them blocked: a terminal's Ctrl-C or hang-up goes to the whole process
    group, and they would die before the driver closes them (the workers with tracebacks, the
    resource tracker with what it tracks: started again, it printed a KeyError for each of the
    Dask queues' semaphores). starting: a cluster starts inside, and SIGTERM is held too (not kept
    by the worker processes, which the fork server forks): a signal landing half-way through the
    start left a cluster that could not be closed (its workers still starting), and Dask's exit
    hook printed the traceback of closing it. The driver gets each held signal (a pending one too)
    once inside is done, and closes the cluster on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = TERMINAL_SIGNALS | ({signal.SIGTERM} if starting else set())
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        _start_resource_tracker()  # now, or multiprocessing starts it from the cluster's thread, unblocked
        signal.pthread_sigmask(signal.SIG_BLOCK, held)  # starting it unblocks SIGINT and SIGTERM (Python 3.11)
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def forked_local_workers(spec: ClusterSpec) -> Iterator[None]:
    """Inside: the local cluster of `spec` that Dask starts forks its workers, and those its
    nannies restart, from the fork server (started now unless it runs already); nothing where the
    platform has no fork server. A main script that is no file (`python - < script.py`, read from
    standard input) is not run again in the workers (`main_script_hidden`)."""
    with main_script_hidden():
        if not forks_workers():
            yield
            return
        import dask.config

        start_local_workers_early(spec)
        with dask.config.set({START_METHOD: "forkserver"}):
            yield


@contextlib.contextmanager
def main_script_hidden() -> Iterator[None]:
    """Inside: `__main__.__file__` is hidden when it names no file ("<stdin>" for a script piped
    to Python), so that multiprocessing starts worker processes without trying to run it again
    (it would fail: the file does not exist); a real script file is left as it is."""
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None or os.path.isfile(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def start_local_workers_early(spec: ClusterSpec, *, address: str | None = None, client: Client | None = None) -> None:
    """Start the fork server that `xialpha.jobs.cluster.connect` will fork local worker processes
    from, importing LOCAL_WORKER_MODULES in the background; nothing unless `connect` with the same
    arguments would start a local cluster. Call it as early as possible: the imports
    then run on another core while this process goes on. It is started once per process (later
    calls return at once), with SIGINT blocked as for the workers, and it ends when this process does."""
    if client is not None or address is not None or spec.kind != "local" or not forks_workers():
        return
    os.environ.update(_worker_environ())  # as each nanny does before it starts a worker process
    os.environ[PRELOAD_REPORT] = _report_path()
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(LOCAL_WORKER_MODULES))
    with terminal_interrupts_blocked():
        multiprocessing.forkserver.ensure_running()


@functools.cache
def _report_path() -> str:
    """The file of this process's `PreloadReport` (one per process, as the fork server), removed at exit."""
    import atexit

    descriptor, path = tempfile.mkstemp(prefix="xialpha-preload-", suffix=".txt")
    os.close(descriptor)
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def preload_reporter(kind: str) -> Callable[[str], None]:
    """In the fork server's preload: a function writing `kind` ("stage", "note" or "error") lines
    of text to the driver's `PreloadReport` (nothing where no driver asked for one)."""
    path = os.environ.get(PRELOAD_REPORT)

    def report(text: str) -> None:
        if path is not None:
            with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as file:
                file.write(f"{kind}\t{' '.join(text.split())}\n")

    return report


class PreloadReport:
    """What this process's fork server's preload reported (`preload_reporter`), read as it comes:
    `stage()` its latest stage ("" once done or never begun), `news()` its notes and errors not
    read before (each once per process: the preload runs once)."""

    _read: dict[str, int] = {}  # lines of each file read by `news` in this process

    def __init__(self):
        self.path = os.environ.get(PRELOAD_REPORT)

    def _lines(self) -> list[tuple[str, str]]:
        if self.path is None:
            return []
        try:
            with open(self.path, encoding="utf-8") as file:
                return [tuple(line.rstrip("\n").split("\t", 1)) for line in file if "\t" in line]  # type: ignore[misc]
        except OSError:
            return []

    def stage(self) -> str:
        return next((text for kind, text in reversed(self._lines()) if kind == "stage"), "")

    def news(self) -> tuple[list[str], list[str]]:
        """(notes, errors) reported since the last call in this process."""
        lines = self._lines()
        new = lines[self._read.get(self.path or "", 0) :]
        self._read[self.path or ""] = len(lines)
        return [text for kind, text in new if kind == "note"], [text for kind, text in new if kind == "error"]


_tracker_started: list[bool] = []  # whether this process started multiprocessing's resource tracker


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker unless it runs, with what this process writes to
    standard error sent to /dev/null meanwhile, which the tracker keeps: all it prints is about
    cleaning up Dask's queues (a KeyError traceback per semaphore released twice, "leaked semaphore
    objects" when a process exits at once), nothing a user can act on, and it printed dozens of
    lines after an interrupted sweep's one line. The first call comes before the command starts
    threads that print (`start_local_workers_early`, or a cluster's start); a tracker killed later
    (mid-sweep) is started again as quietly, and without multiprocessing's warning about it (its
    KeyError tracebacks for the semaphores of the tracker before filled a sweep that succeeded);
    for the instant of that start, another thread's line to standard error would be lost too."""
    tracker = multiprocessing.resource_tracker._resource_tracker
    if not _tracker_started:
        _quietly(tracker.ensure_running)
        _tracker_started.append(True)
        launch = tracker.ensure_running

        def ensure_running() -> None:  # alive: as multiprocessing asks, by a probe through its pipe
            if tracker._fd is None or not tracker._check_alive():
                _quietly(launch)

        tracker.ensure_running = ensure_running  # type: ignore[method-assign]
        warnings.filterwarnings("ignore", "resource_tracker: process died unexpectedly", UserWarning)
    tracker.ensure_running()


def _quietly(start) -> None:
    """`start()` with this process's standard error (file descriptor 2) sent to /dev/null meanwhile."""
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        start()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


@functools.cache
def _worker_environ() -> dict[str, str]:
    """The variables a Dask nanny sets before it starts a worker process, as distributed's Nanny
    computes them: `distributed.nanny.pre-spawn-environ` (one BLAS/OpenMP thread per worker, malloc
    trimming; a variable already set wins) and a fixed PYTHONHASHSEED. They are read when an
    interpreter, its malloc or BLAS starts, so the fork server must start with them: its workers
    inherit its loaded numpy (several BLAS threads per worker oversubscribe the cores).
    Read without importing distributed (and numpy with it) by loading its defaults file as importing
    it does; once per process, as the fork server is started once (a sweep asks up to three times:
    the CLI, run_sweep, connect)."""
    import importlib.util

    import dask.config
    import yaml

    defaults = os.path.join(os.path.dirname(importlib.util.find_spec("distributed").origin), "distributed.yaml")
    with open(defaults, encoding="utf-8") as file:
        dask.config.update_defaults(yaml.safe_load(file))
    config = dask.config.get("distributed.nanny.pre-spawn-environ")
    environ = {key: os.environ.get(key, str(value)) for key, value in config.items() if value is not None}
    if environ.get("PYTHONHASHSEED") in (None, "0"):
        environ["PYTHONHASHSEED"] = "6640"  # distributed's choice, for string hashes equal on every worker
    return environ


def forks_workers() -> bool:
    """Whether local workers are forked from the fork server: where the platform has one (not on
    Windows, where they are spawned and import everything themselves)."""
    return "forkserver" in multiprocessing.get_all_start_methods()
