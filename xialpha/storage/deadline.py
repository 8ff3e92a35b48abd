"""A remote store's filesystem whose every call ends within a time limit, whatever the server does.

S3 stores are bounded by their client's own request timeouts (`location._bounded`). The others
(pyarrow's GCS and Azure clients, and every fsspec filesystem: gcsfs, adlfs, http, ...) have no
such bound that covers a server which accepts a connection and never answers, so `bounded` wraps
them: each call (a listing, a file's information, a delete, opening a file, each read or write
of an open file and its close, which uploads) runs in a daemon thread the caller waits for at most
`seconds`; a call still waiting then is left behind, and the caller gets `NoAnswer`. The
wrapped filesystem is a `pyarrow.fs.PyFileSystem`, so Parquet reads and writes go through it too.

A call left behind must not wait in Python code that pyarrow's C++ called (a thread that takes the
interpreter's lock back while the interpreter exits aborts the process: "Fatal Python error:
PyGILState_Release"). So an fsspec filesystem is bounded where its Python methods are called
(`bounded_fsspec`: the thread left behind runs Python only), a pyarrow one where its C++ calls are
(`bounded`: the thread left behind waits in C++ only).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from xialpha.errors import UserError

T = TypeVar("T")


_waiting: list[threading.Thread] = []  # calls left behind still waiting for their server


def calls_left_behind() -> int:
    """How many calls this process left behind are still waiting. While one waits in C++ (pyarrow's
    GCS or Azure client), the interpreter's exit must not run its clean-up: a call that returns
    during it aborts the process ("Fatal Python error ... finalizing"); the command line then ends
    the process without it (`xialpha.cli.console`)."""
    _waiting[:] = [thread for thread in _waiting if thread.is_alive()]
    return len(_waiting)


class NoAnswer(UserError):
    """A remote store gave no (complete) answer to one call within the time limit."""


def no_answer(uri: str, seconds: float, environment: str) -> NoAnswer:
    return NoAnswer(
        f"store {uri}: no answer within {seconds:g} s (unreachable, or no credentials?); check "
        f"the URI, the network and the credentials (${environment} sets the wait)"
    )


class _Limit:
    """Runs calls of one store, each for at most `seconds`; `NoAnswer` for one that takes longer."""

    def __init__(self, seconds: float, uri: str, environment: str):
        self.seconds, self.uri, self.environment = seconds, uri, environment

    def __call__(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["value"] = function(*args, **kwargs)
            except BaseException as exc:  # handed to the caller
                outcome["error"] = exc

        thread = threading.Thread(target=call, name="xialpha-store-call", daemon=True)
        thread.start()
        thread.join(self.seconds)  # a signal still interrupts the wait (main thread)
        if thread.is_alive():
            _waiting.append(thread)
            raise no_answer(self.uri, self.seconds, self.environment)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]


def bounded(filesystem: pafs.FileSystem, seconds: float, uri: str, environment: str) -> pafs.FileSystem:
    """`filesystem` with every call bounded to `seconds` (see the module); `uri` names the store
    in the error, `environment` the variable that sets the limit."""
    return pafs.PyFileSystem(BoundedHandler(filesystem, _Limit(seconds, uri, environment)))


def bounded_fsspec(filesystem: Any, seconds: float, uri: str, environment: str) -> pafs.FileSystem:
    """The fsspec `filesystem` as a pyarrow filesystem with every call bounded to `seconds`."""
    return pafs.PyFileSystem(pafs.FSSpecHandler(_BoundedFsspec(filesystem, _Limit(seconds, uri, environment))))


def inner(filesystem: pafs.FileSystem) -> pafs.FileSystem:
    """The filesystem `bounded` wrapped, or `filesystem` itself."""
    if isinstance(filesystem, pafs.PyFileSystem) and isinstance(filesystem.handler, BoundedHandler):
        return filesystem.handler.inner
    return filesystem


class BoundedHandler(pafs.FileSystemHandler):
    """The calls of a `pyarrow.fs.PyFileSystem` passed on to `inner`, each bounded by `limit`."""

    def __init__(self, inner: pafs.FileSystem, limit: _Limit):
        self.inner, self.limit = inner, limit

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BoundedHandler) and self.inner.equals(other.inner)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return f"bounded-{self.inner.type_name}"

    def normalize_path(self, path: str) -> str:
        return self.inner.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.limit(self.inner.get_file_info, paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.limit(self.inner.get_file_info, selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.limit(self.inner.create_dir, path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self.limit(self.inner.delete_dir, path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.limit(self.inner.delete_dir_contents, path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        self.limit(self.inner.delete_dir_contents, "/", accept_root_dir=True)

    def delete_file(self, path: str) -> None:
        self.limit(self.inner.delete_file, path)

    def move(self, src: str, dest: str) -> None:
        self.limit(self.inner.move, src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self.limit(self.inner.copy_file, src, dest)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return pa.PythonFile(_BoundedFile(self.limit(self.inner.open_input_stream, path), self.limit), mode="r")

    def open_input_file(self, path: str) -> pa.NativeFile:
        return pa.PythonFile(_BoundedFile(self.limit(self.inner.open_input_file, path), self.limit), mode="r")

    def open_output_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        opened = self.limit(self.inner.open_output_stream, path, metadata=metadata)
        return pa.PythonFile(_BoundedFile(opened, self.limit), mode="w")

    def open_append_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        opened = self.limit(self.inner.open_append_stream, path, metadata=metadata)
        return pa.PythonFile(_BoundedFile(opened, self.limit), mode="w")


class _BoundedFsspec:
    """An fsspec filesystem whose every method call is bounded by `limit`, the files it opens too;
    its other attributes (`protocol`, `sep`) as they are."""

    def __init__(self, filesystem: Any, limit: _Limit):
        self.__dict__.update(filesystem=filesystem, limit=limit)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self.__dict__["filesystem"], name)
        if not callable(value):
            return value
        limit = self.__dict__["limit"]
        if name == "open":
            return lambda *args, **kwargs: _BoundedFile(limit(value, *args, **kwargs), limit)
        return lambda *args, **kwargs: limit(value, *args, **kwargs)


class _BoundedFile:
    """An open file of the inner filesystem (a pyarrow NativeFile or a Python file object) as the
    Python file object `pyarrow.PythonFile` wraps, every call that may wait for the server bounded
    by `limit`."""

    def __init__(self, file: Any, limit: _Limit):
        self.file, self.limit = file, limit

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
        if isinstance(self.file, pa.NativeFile):  # whole: None, not -1
            return self.limit(self.file.read, None if size is None or size < 0 else size)
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
