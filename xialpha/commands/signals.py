"""The SIGINT/SIGTERM handling every command runs under: the first signal unwinds the command (a
cluster it started is closed, stored results kept), a second one while that runs exits at once."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)  # both end a command cleanly: cluster closed, stored results kept


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
