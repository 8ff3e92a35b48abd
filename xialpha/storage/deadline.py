"""A remote store's filesystem whose every call ends within a time limit, whatever the server does.

S3 stores are bounded by their client's own request timeouts (`location._bounded`). The others
(pyarrow's GCS and Azure clients, and every fsspec filesystem: gcsfs, adlfs, http, ...) have no
such bound that covers a server which accepts a connection and never answers, so `bounded` wraps
them: each call (a listing, a file's information, a delete, opening a file, each read or write
of an open file and its close, which uploads) runs in a daemon thread the caller waits for at most
`seconds` (`xialpha.time_limits`, which bounds a corpus read through fsspec too); a call still
waiting then is left behind, and the caller gets `NoAnswer`. The
wrapped filesystem is a `pyarrow.fs.PyFileSystem`, so Parquet reads and writes go through it too.

A call left behind must not wait in Python code that pyarrow's C++ called (a thread that takes the
interpreter's lock back while the interpreter exits aborts the process: "Fatal Python error:
PyGILState_Release"). So an fsspec filesystem is bounded where its Python methods are called
(`bounded_fsspec`: the thread left behind runs Python only), a pyarrow one where its C++ calls are
(`bounded`: the thread left behind waits in C++ only).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from xialpha.errors import UserError
from xialpha.time_limits import BoundedFile, BoundedFsspec, TimeLimit


class NoAnswer(UserError):
    """A remote store gave no (complete) answer to one call within the time limit."""


def no_answer(uri: str, seconds: float, environment: str) -> NoAnswer:
    return NoAnswer(
        f"store {uri}: no answer within {seconds:g} s (unreachable, or no credentials?); check "
        f"the URI, the network and the credentials (${environment} sets the wait)"
    )


def store_limit(seconds: float, uri: str, environment: str) -> TimeLimit:
    """The time limit of one store's calls: `NoAnswer` naming the store `uri` and the variable
    `environment` that sets `seconds`, for a call that takes longer."""
    return TimeLimit(seconds, lambda: no_answer(uri, seconds, environment), name="xialpha-store-call")


def bounded(filesystem: pafs.FileSystem, seconds: float, uri: str, environment: str) -> pafs.FileSystem:
    """`filesystem` with every call bounded to `seconds` (see the module); `uri` names the store
    in the error, `environment` the variable that sets the limit."""
    return pafs.PyFileSystem(BoundedHandler(filesystem, store_limit(seconds, uri, environment)))


def bounded_fsspec(filesystem: Any, seconds: float, uri: str, environment: str) -> pafs.FileSystem:
    """The fsspec `filesystem` as a pyarrow filesystem with every call bounded to `seconds`."""
    return pafs.PyFileSystem(pafs.FSSpecHandler(BoundedFsspec(filesystem, store_limit(seconds, uri, environment))))


def inner(filesystem: pafs.FileSystem) -> pafs.FileSystem:
    """The filesystem `bounded` wrapped, or `filesystem` itself."""
    if isinstance(filesystem, pafs.PyFileSystem) and isinstance(filesystem.handler, BoundedHandler):
        return filesystem.handler.inner
    return filesystem


class BoundedHandler(pafs.FileSystemHandler):
    """The calls of a `pyarrow.fs.PyFileSystem` passed on to `inner`, each bounded by `limit`."""

    def __init__(self, inner: pafs.FileSystem, limit: TimeLimit):
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
        return pa.PythonFile(_BoundedNativeFile(self.limit(self.inner.open_input_stream, path), self.limit), mode="r")

    def open_input_file(self, path: str) -> pa.NativeFile:
        return pa.PythonFile(_BoundedNativeFile(self.limit(self.inner.open_input_file, path), self.limit), mode="r")

    def open_output_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        opened = self.limit(self.inner.open_output_stream, path, metadata=metadata)
        return pa.PythonFile(_BoundedNativeFile(opened, self.limit), mode="w")

    def open_append_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        opened = self.limit(self.inner.open_append_stream, path, metadata=metadata)
        return pa.PythonFile(_BoundedNativeFile(opened, self.limit), mode="w")


class _BoundedNativeFile(BoundedFile):
    """An open file of a pyarrow filesystem (a NativeFile) as the Python file object
    `pyarrow.PythonFile` wraps, every call that may wait for the server bounded."""

    def read(self, size: int = -1) -> bytes:
        return self.limit(self.file.read, None if size is None or size < 0 else size)  # whole: None, not -1
