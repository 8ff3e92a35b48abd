"""Where a store lives: a local directory or a pyarrow/fsspec filesystem URI, and atomic file writes.

A data file is written whole under a hidden temporary name (".<name>.tmp") and renamed to its
final name, so readers (pyarrow skips names starting with "." or "_", and DuckDB's `*.parquet`
globs never match ".tmp") see either nothing or the complete file. On object stores, where a
rename is a copy, the file is uploaded straight to its final, never reused name: an object only
becomes visible once its upload completes. Local files are fsynced before the rename.
"""

from __future__ import annotations

import datetime
import os
import posixpath
import re
import socket
import threading
import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from xialpha.errors import UserError

ROW_GROUP_ROWS = 64 * 1024
TEMP_SUFFIX = ".tmp"
_OBJECT_STORE_PROTOCOLS = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2"}
_HOST = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:40] or "host"
REMOTE_TIMEOUT_ENV = "XIALPHA_STORE_TIMEOUT"  # seconds a remote store has to answer the first request
REMOTE_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class DataFile:
    """One visible data file: its path on the filesystem and its base name (the tie-break order)."""

    path: str
    name: str


class Location:
    """A store's root directory on a pyarrow filesystem; all paths below are '/'-joined."""

    def __init__(self, uri: str):
        if not isinstance(uri, str) or not uri.strip():
            raise UserError(f"store {uri!r}: give a directory path or a filesystem URI")
        self.uri = uri
        self.filesystem, self.root, self.is_local = _resolve(uri)
        self.is_object_store = _is_object_store(self.filesystem)
        if not self.is_local:
            _probe(self.filesystem, self.root, uri)

    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts) if parts else self.root

    def exists(self, path: str) -> bool:
        return self.filesystem.get_file_info(path).type != pafs.FileType.NotFound

    def is_file(self, path: str) -> bool:
        return self.filesystem.get_file_info(path).type == pafs.FileType.File

    def entries(self, path: str, *, recursive: bool = False) -> list[pafs.FileInfo]:
        """File infos under `path` ([] when it does not exist, even if a writer creates it meanwhile)."""
        selector = pafs.FileSelector(path, allow_not_found=True, recursive=recursive)
        try:
            return self.filesystem.get_file_info(selector)
        except FileNotFoundError:
            return []

    def data_files(self, path: str) -> list[DataFile]:
        """Visible Parquet files under `path`, recursively, sorted by name."""
        files = [
            DataFile(info.path, info.base_name)
            for info in self.entries(path, recursive=True)
            if info.type == pafs.FileType.File and _visible(info.path, path) and info.base_name.endswith(".parquet")
        ]
        return sorted(files, key=lambda f: (f.name, f.path))

    def temp_files(self, path: str) -> list[pafs.FileInfo]:
        """Temporary files left under `path` by writers (complete or killed)."""
        return [
            info
            for info in self.entries(path, recursive=True)
            if info.type == pafs.FileType.File and info.base_name.startswith(".") and info.base_name.endswith(TEMP_SUFFIX)
        ]

    def read_text(self, path: str) -> str:
        with self.filesystem.open_input_stream(path) as stream:
            return stream.read().decode("utf-8")

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write a small file atomically (temporary name + rename, or one upload)."""
        self._write_atomically(path, lambda sink: sink.write(data))

    def write_table(self, directory: str, table: pa.Table, name: str | None = None) -> str:
        """Write `table` as a new Parquet file in `directory`; return its path.

        The name defaults to `new_file_name()`; it must not exist (names are never reused).
        """
        path = posixpath.join(directory, name or new_file_name())
        self._write_atomically(
            path,
            lambda sink: pq.write_table(table, sink, row_group_size=ROW_GROUP_ROWS, compression="zstd"),
        )
        return path

    def delete(self, path: str) -> None:
        """Delete a file; a file already gone (deleted by a concurrent compaction) is fine."""
        try:
            self.filesystem.delete_file(path)
        except FileNotFoundError:
            pass

    def _write_atomically(self, path: str, write) -> None:
        directory, name = posixpath.split(path)
        try:
            if self.is_object_store:
                with self.filesystem.open_output_stream(path) as sink:
                    write(sink)
                return
            self.filesystem.create_dir(directory, recursive=True)
            temp = posixpath.join(directory, f".{name}.{uuid.uuid4().hex[:8]}{TEMP_SUFFIX}")
            with self.filesystem.open_output_stream(temp) as sink:
                write(sink)
            if self.is_local:
                _fsync(temp)
            self.filesystem.move(temp, path)
            if self.is_local:
                _fsync(directory)
        except OSError as exc:
            raise UserError(f"store {self.uri}: cannot write {path}: {exc.strerror or exc}") from None


def new_file_name(now: datetime.datetime | None = None) -> str:
    """A unique data file name; names sort by write time: part-<UTC time>-<host>-<pid>-<uuid4>.parquet."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return f"part-{now:%Y%m%dT%H%M%S%fZ}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex}.parquet"


def _visible(path: str, base: str) -> bool:
    """True unless some part of `path` below `base` is hidden ('.' or '_' prefix), as pyarrow reads."""
    relative = posixpath.relpath(path, base) if base else path
    return not any(part.startswith((".", "_")) for part in relative.split("/"))


def _fsync(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _resolve(uri: str) -> tuple[pafs.FileSystem, str, bool]:
    """(filesystem, root path on it, is local) for a path or URI."""
    if "://" not in uri or uri.startswith("file://"):
        local = uri.removeprefix("file://")
        return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(local)), True
    try:
        filesystem, root = pafs.FileSystem.from_uri(uri)
    except pa.ArrowInvalid as exc:
        if "Unrecognized filesystem type" not in str(exc):
            raise UserError(f"store {uri}: {exc}") from None
        import fsspec

        try:
            fs, root = fsspec.core.url_to_fs(uri)
        except (ImportError, ValueError) as fsspec_exc:
            raise UserError(f"store {uri}: no pyarrow or fsspec filesystem for it ({fsspec_exc})") from None
        filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(fs))
    except OSError as exc:
        raise UserError(f"store {uri}: {exc}") from None
    return filesystem, root.rstrip("/") or root, False


def _probe(filesystem: pafs.FileSystem, root: str, uri: str) -> None:
    """UserError unless a remote store answers one request within $XIALPHA_STORE_TIMEOUT seconds
    (default 10): an unreachable host, or a client retrying without credentials for minutes,
    fails fast. The request runs in a daemon thread, which is left behind if it hangs."""
    try:
        timeout = float(os.environ.get(REMOTE_TIMEOUT_ENV, REMOTE_TIMEOUT_SECONDS))
    except ValueError:
        raise UserError(f"${REMOTE_TIMEOUT_ENV}: must be a number of seconds, got {os.environ[REMOTE_TIMEOUT_ENV]!r}") from None
    outcome: dict = {}

    def ask() -> None:
        try:
            filesystem.get_file_info(root)
        except Exception as exc:  # any client error means the store cannot be used
            outcome["error"] = exc

    thread = threading.Thread(target=ask, name="xialpha-store-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise UserError(f"store {uri}: no answer within {timeout:g} s (unreachable, or no credentials?); check "
                        f"the URI, the network and the credentials (${REMOTE_TIMEOUT_ENV} sets the wait)")
    if "error" in outcome:
        reason = " ".join(str(outcome["error"]).split())
        raise UserError(f"store {uri}: cannot reach it: {reason[:300]}")


def _is_object_store(filesystem: pafs.FileSystem) -> bool:
    if isinstance(filesystem, pafs.PyFileSystem):
        protocol = filesystem.handler.fs.protocol
        protocols = {protocol} if isinstance(protocol, str) else set(protocol)
        return bool(protocols & _OBJECT_STORE_PROTOCOLS)
    return filesystem.type_name in {"s3", "gcs", "abfs"}
