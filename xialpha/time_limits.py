"""Calls to a remote server that end within a time limit, whatever the server does.

A server that accepts a connection and never answers (or stops half-way through an answer) would
hold a caller for as long as the client library lets it, often for ever. `TimeLimit` runs each call
in a daemon thread that the caller waits for at most `seconds`; a call still waiting then is left
behind (counted by `calls_left_behind`) and the caller gets the limit's error. `BoundedFsspec` is
an fsspec filesystem whose every method call, and every call of a file it opens, is so bounded: a
remote result store (`xialpha.storage.deadline`) and a corpus read through fsspec
(`xialpha.corpora.sources`) are bounded alike, by $XIALPHA_STORE_TIMEOUT seconds (`remote_timeout`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from xialpha.errors import UserError

T = TypeVar("T")

REMOTE_TIMEOUT_ENV = "XIALPHA_STORE_TIMEOUT"  # seconds one call of a remote store or corpus may take waiting
REMOTE_TIMEOUT_SECONDS = 10.0
TIMEOUT_MAX = 86400.0  # seconds: a day; more is no limit, and waits of 1e10 s overflow the clocks that bound them

_waiting: list[threading.Thread] = []  # calls left behind still waiting for their server


def timeout_seconds(value: str | float, name: str) -> float:
    """`value` (a number, or its text) as the seconds a call may wait: UserError naming `name` (the
    variable or flag it came from) for a value that is no number of seconds > 0 and at most
    TIMEOUT_MAX (a socket's or a thread's wait of about 1e10 s or more raises OverflowError)."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= TIMEOUT_MAX:
        raise UserError(f"{name}: must be a number of seconds > 0 and at most {TIMEOUT_MAX:.0f}, got {value!r}")
    return seconds


def remote_timeout() -> float:
    """$XIALPHA_STORE_TIMEOUT (default 10): the seconds one call of a remote store or corpus may take
    waiting (`timeout_seconds`)."""
    return timeout_seconds(os.environ.get(REMOTE_TIMEOUT_ENV, REMOTE_TIMEOUT_SECONDS), f"${REMOTE_TIMEOUT_ENV}")


def calls_left_behind() -> int:
    """How many calls this process left behind are still waiting. While one waits in C++ (pyarrow's
    GCS or Azure client), the interpreter's exit must not run its clean-up: a call that returns
    during it aborts the process ("Fatal Python error ... finalizing"); the command line then ends
    the process without it (`xialpha.cli.console`)."""
    _waiting[:] = [thread for thread in _waiting if thread.is_alive()]
    return len(_waiting)


class TimeLimit:
    """Runs calls to one server, each for at most `seconds` in a thread called `name`; `expired()`
    (an exception) is raised for one that takes longer, which is left behind."""

    def __init__(self, seconds: float, expired: Callable[[], Exception], name: str = "xialpha-remote-call"):
        self.seconds, self.expired, self.name = seconds, expired, name

    def __call__(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["value"] = function(*args, **kwargs)
            except BaseException as exc:  # handed to the caller
                outcome["error"] = exc

        thread = threading.Thread(target=call, name=self.name, daemon=True)
        thread.start()
        thread.join(self.seconds)  # a signal still interrupts the wait (main thread)
        if thread.is_alive():
            _waiting.append(thread)
            raise self.expired()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]


class BoundedFsspec:
    """An fsspec filesystem whose every method call is bounded by `limit`, the files it opens too
    (`BoundedFile`); its other attributes (`protocol`, `sep`) as they are."""

    def __init__(self, filesystem: Any, limit: TimeLimit):
        self.__dict__.update(filesystem=filesystem, limit=limit)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self.__dict__["filesystem"], name)
        if not callable(value):
            return value
        limit = self.__dict__["limit"]
        if name == "open":
            return lambda *args, **kwargs: BoundedFile(limit(value, *args, **kwargs), limit)
        return lambda *args, **kwargs: limit(value, *args, **kwargs)


class BoundedFile:
    """An open file as a Python file object, every call that may wait for the server bounded by `limit`."""

    def __init__(self, file: Any, limit: TimeLimit):
        self.file, self.limit = file, limit

    def __enter__(self) -> BoundedFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self.file.closed

    def readable(self) -> bool:
        return self.file.readable()

    def writable(self) -> bool:
        return self.file.writable()

    def seekable(self) -> bool:
        return self.file.seekable()

    def read(self, size: int = -1) -> bytes:
        return self.limit(self.file.read, size)

    def seek(self, position: int, whence: int = 0) -> int:
        return self.limit(self.file.seek, position, whence)

    def tell(self) -> int:
        return self.limit(self.file.tell)

    def write(self, data: bytes) -> int:
        return self.limit(self.file.write, data)

    def flush(self) -> None:
        self.limit(self.file.flush)

    def close(self) -> None:
        self.limit(self.file.close)
