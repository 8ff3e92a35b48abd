"""Arguments and checks shared by the commands that run a spec on Dask (sweep, drift), and the
SIGINT/SIGTERM handling every command runs under."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from xialpha.commands.stores import DEFAULT_STORE, add_store_arguments

SIGNALS = (signal.SIGINT, signal.SIGTERM)  # both end a command cleanly: cluster closed, stored results kept


def add_run_arguments(parser, what: str, example: str, force_help: str, quiet_help: str) -> None:
    """SPEC, --store, --scheduler, --workers, --force and --quiet for a command running `what` specs."""
    parser.add_argument("spec", help=f"{what} spec, a TOML file (see {example})")
    add_store_arguments(parser, positional=False,
                        help_text=f"result store path or URI (default: $XIALPHA_STORE, [{what}] store, ./{DEFAULT_STORE})")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="connect to a running Dask scheduler, e.g. tcp://host:8786")
    parser.add_argument("--workers", type=int, help="number of workers for a local or SLURM cluster")
    parser.add_argument("--force", action="store_true", help=force_help)
    parser.add_argument("--quiet", action="store_true", help=quiet_help)


def check_workers(workers: int | None, cluster) -> None:
    """--workers: at least 1 and at most the spec's cluster.max_workers (a ClusterSpec)."""
    from xialpha.errors import UserError
    from xialpha.spec.cluster import check_workers as check_cap

    if workers is not None and workers < 1:
        raise UserError(f"--workers: must be >= 1, got {workers}")
    check_cap("--workers", workers, cluster.max_workers)


def start_workers_early(args) -> None:
    """Before the spec is read in full (imports of a second or more): start the fork server a
    local cluster's workers come from, when the spec file's [cluster] and --scheduler say one will
    be started, so that its imports run meanwhile (xialpha.jobs.worker_processes.start_local_workers_early)."""
    from xialpha.jobs.worker_processes import start_local_workers_early
    from xialpha.spec.cluster import cluster_of_file

    cluster = cluster_of_file(args.spec)
    if cluster is not None:
        start_local_workers_early(cluster, address=args.scheduler)


# --- signals ---------------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """SIGINT (Ctrl-C) or SIGTERM (`kill`, `docker stop`, `scancel`, a SLURM walltime, a Kubernetes
    pod deletion). A KeyboardInterrupt, so it unwinds every `with` on its way out (the cluster is
    closed and its batch jobs cancelled) and no `except Exception` swallows it. The command exits
    with 128 + `signum`, as a shell reports a process killed by it: 130 SIGINT, 143 SIGTERM."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def signals_interrupt(message: Callable[[int], str]) -> Iterator[None]:
    """Inside: the first SIGINT or SIGTERM raises Interrupted in the main thread; a second one, while
    the first is being cleaned up, prints `message(signum)` and exits at once with 128 + signum.

    Without this, SIGTERM would kill the process without closing anything (and PID 1 in a container
    would ignore it altogether). The previous handlers are restored on the way out.
    """
    def forced(signum, frame):
        print(message(signum), file=sys.stderr, flush=True)
        os._exit(128 + signum)

    def first(signum, frame):
        for number in SIGNALS:
            signal.signal(number, forced)
        raise Interrupted(signum)

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {number: signal.signal(number, first) for number in SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
