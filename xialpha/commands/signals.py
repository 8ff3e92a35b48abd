"""The SIGINT/SIGTERM/SIGHUP handling every command runs under: the first signal unwinds the command
(a cluster it started is closed, stored results kept), a second one while that runs exits at once.
`interrupt_from_now` gives the console entry point the same from its first instruction, while the
command's modules are still importing."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

# each ends a command cleanly (cluster closed, stored results kept): Ctrl-C, `kill`, a closed terminal or SSH session
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """SIGINT (Ctrl-C), SIGTERM (`kill`, `docker stop`, `scancel`, a SLURM walltime, a Kubernetes
    pod deletion) or SIGHUP (the terminal or SSH session closed). A KeyboardInterrupt, so it
    unwinds every `with` on its way out (the cluster is closed and its batch jobs cancelled) and no
    `except Exception` swallows it. The command exits with 128 + `signum`, as a shell reports a
    process killed by it: 130 SIGINT, 143 SIGTERM, 129 SIGHUP."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_swallowed: list[int] = []  # the signals whose Interrupted a finalizer or callback swallowed


def swallowed() -> int | None:
    """The signal whose Interrupted was raised where Python cannot pass it on (a `__del__`, a
    weakref or garbage-collector callback: "Exception ignored in ..."), or None. The command then
    went on as if no signal came; the entry point still ends with it."""
    return _swallowed[0] if _swallowed else None


def _unraisable(
    previous: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], None]:
    """A `sys.unraisablehook` that keeps an Interrupted quiet (recorded in `swallowed`), not a
    traceback, and passes everything else to `previous`."""

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if isinstance(unraisable.exc_value, Interrupted):
            _swallowed.append(unraisable.exc_value.signum)
            return
        previous(unraisable)

    return hook


def interrupt_from_now(message: Callable[[int], str]) -> None:
    """From now on, the first SIGINT, SIGTERM or SIGHUP raises Interrupted in the main thread (while
    modules import too: an import unwinds like any other call) and a second one prints
    `message(signum)` and exits at once with 128 + signum. For the console entry point's first
    instruction, before the command's imports; `signals_interrupt` takes over while it runs."""
    first = _first_raises(message)
    for number in SIGNALS:
        signal.signal(number, first)
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    atexit.register(_hold_signals)  # registered first, so run last: after every library's exit hook


def _hold_signals() -> None:
    """Ignore SIGINT, SIGTERM and SIGHUP for the rest of the interpreter's exit, once every exit hook
    ran (a store's request a hook waits for is still ended by one, see `exit_at_once`): the
    interpreter then puts the default handlers back, and a signal arriving in those last moments
    killed the process that had finished its command (exit -15 and no line after a completed
    `store compact`). Blocked in this thread and ignored: blocking alone holds a signal from this
    thread only, and the kernel hands it to any other thread (BLAS's or pyarrow's pool), where the
    default handler killed the process all the same (`select` at 0.86 s, bench/campaign.py in CI);
    the interpreter never puts the default handler back over an ignored signal. The process exits
    with its own code."""
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    for number in SIGNALS:
        signal.signal(number, signal.SIG_IGN)


def exit_at_once(message: Callable[[int], str]) -> None:
    """From now on, SIGINT, SIGTERM or SIGHUP print `message(signum)` and exit at once with 128 +
    signum: for the interpreter's exit, where an exception raised in its clean-up (a library's
    atexit hook waiting for a network request) would only print a traceback and carry on."""
    for number in SIGNALS:
        signal.signal(number, _forced(message))


def _forced(message: Callable[[int], str]) -> Callable[[int, FrameType | None], None]:
    def forced(signum: int, frame: FrameType | None) -> None:
        try:
            with contextlib.suppress(Exception):  # what the command printed is not lost
                sys.stdout.flush()
            print(message(signum), file=sys.stderr, flush=True)
        finally:
            os._exit(128 + signum)

    return forced


_received: list[int] = []  # the signals `first` raised Interrupted for, since the handlers were installed


def received() -> int | None:
    """The signal that raised Interrupted since `interrupt_from_now` or `signals_interrupt` began,
    or None: a library may turn the Interrupted into its own error (numpy, importing, re-raises an
    ImportError), which is then still the signal's doing."""
    return _received[0] if _received else None


def _first_raises(message: Callable[[int], str]) -> Callable[[int, FrameType | None], None]:
    """A handler raising Interrupted, after which the next signal runs `forced`: one line, exit now."""
    forced = _forced(message)
    _received.clear()

    def first(signum: int, frame: FrameType | None) -> None:
        for number in SIGNALS:
            signal.signal(number, forced)
        _received.append(signum)
        raise Interrupted(signum)

    return first


@contextlib.contextmanager
def signals_interrupt(message: Callable[[int], str]) -> Iterator[None]:
    """Inside: the first SIGINT, SIGTERM or SIGHUP raises Interrupted in the main thread; a second
    one, while the first is being cleaned up, prints `message(signum)` and exits at once with 128 + signum.

    Without this, SIGTERM would kill the process without closing anything (and PID 1 in a container
    would ignore it altogether). The previous handlers are restored on the way out.
    """
    first = _first_raises(message)
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {number: signal.signal(number, first) for number in SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
