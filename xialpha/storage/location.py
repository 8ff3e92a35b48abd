"""Where a store lives: a local directory or a pyarrow/fsspec filesystem URI, and atomic file writes.

A data file is written whole under a hidden temporary name (".<name>.tmp") and renamed to its
final name, so readers (pyarrow skips names starting with "." or "_", and DuckDB's `*.parquet`
globs never match ".tmp") see either nothing or the complete file. On object stores, where a
rename is a copy, the file is uploaded straight to its final, never reused name: an object only
becomes visible once its upload completes. Local files are fsynced before the rename. A write
that fails (disk full, I/O error) removes its temporary file and raises `StoreWriteError`.

Only regular files are opened: a FIFO, a device or a socket where the store keeps a file (a data
file, the marker, a summary, a claim), or a link to one, is a `NotRegularFile` error naming it
(opening one would block or never end), and small files are read up to a size limit
(`read_small`). Nothing is reached through a symbolic link that leads outside the store: the
data files under one are not listed (`data_files`: so not read, compacted or quarantined), and
small files are not read (`read_small`); each link a listing skips is named in one `StoreWarning`.

Write order comes from the store, not from clocks: a data file is named
"part-s<16-digit sequence>-<host>-<pid>-<uuid>.parquet", its sequence one more than the highest
sequence of the files already in its scope (`next_sequence`). A write that starts after another
write finished therefore sorts after it, whatever the writers' clocks say; writes that overlap
in time may get the same sequence and are ordered by the rest of the name. Names sort by write
order as plain strings, and after the names of older versions ("part-<UTC time>-...", sequence 0).
"""

from __future__ import annotations

import datetime
import errno
import os
import posixpath
import re
import socket
import stat
import threading
import uuid
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from xialpha.errors import StoreWarning, StoreWriteError, UserError
from xialpha.printable import redact
from xialpha.storage.deadline import bounded, bounded_fsspec, inner, no_answer
from xialpha.time_limits import REMOTE_TIMEOUT_ENV, remote_timeout

ROW_GROUP_ROWS = 64 * 1024
TEMP_SUFFIX = ".tmp"
SEQUENCE_DIGITS = 16
MAX_SEQUENCE = 10**15  # beyond what writes reach; a name claiming more is not trusted
_SEQUENCED_NAME = re.compile(rf"part-s(\d{{{SEQUENCE_DIGITS}}})-")
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT}
_OBJECT_STORE_PROTOCOLS = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2"}
_HOST = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:40] or "host"
# bytes the store's own paths take below its root at most: a dataset's directory, a sweep_id=<64
# characters> partition and a temporary file's name (".part-s<16>-<host>-<pid>-<uuid>.parquet.<8>.tmp"): about 230
ROOM_BELOW_ROOT = 256
CLAIM_BYTES = 1 << 20  # a claim is a small JSON document: more is not read
REMOTE_TRIES = 3  # an S3 request is tried this often, each try waiting at most timeout / REMOTE_TRIES


# what a node that is not a regular file is, by its stat.S_IFMT type
_SPECIAL_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class LinkedOutside(OSError):
    """A file the store would read is reached through a symbolic link leading outside the store:
    it is not read (its path is named, never its content)."""


class NotRegularFile(UserError):
    """A file the store would open is a FIFO, a device, a socket or a directory (or a link to
    one): opening or reading it could block or never end, so it is named, never opened."""


@dataclass(frozen=True)
class DataFile:
    """One visible data file: its path on the filesystem, its base name (the tie-break order) and
    its size in bytes as listed (None where the filesystem does not say)."""

    path: str
    name: str
    size: int | None = None


class Location:
    """A store's root directory on a pyarrow filesystem; all paths below are '/'-joined.

    `uri` is the URI as messages show it, without credentials (`xialpha.printable.redact`): the
    filesystem holds them, nothing else keeps the URI as given.
    """

    def __init__(self, uri: str):
        if not isinstance(uri, str) or not uri.strip():
            raise UserError(f"store {redact(repr(uri))}: give a directory path or a filesystem URI")
        self.uri = redact(uri)
        self.filesystem, self.root, self.is_local = _resolve(uri, self.uri)
        self.is_object_store = _is_object_store(self.filesystem)
        self.links_outside: list[str] = []  # the links to outside the store met so far (paths below the root)
        if not self.is_local:
            _probe(self.filesystem, self.root, self.uri)

    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts) if parts else self.root

    def outside(self, path: str) -> bool:
        """True when `path`, named below the root, resolves through a symbolic link to a place
        outside the store root (local stores: other filesystems have no links). Nothing that moves,
        rewrites or deletes files touches such a path."""
        if not self.is_local:
            return False
        root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        return real != root and not real.startswith(root.rstrip(os.sep) + os.sep)

    def check_room(self) -> None:
        """Locally, UserError unless the paths the store writes below its root (up to
        ROOM_BELOW_ROOT bytes more) fit this system's limits: a store path of 4,000 bytes would
        fail at its first write, with rows of a sweep computed for nothing."""
        if not self.is_local:
            return
        name_max, path_max = _path_limits(self.root)
        if max(len(os.fsencode(name)) for name in self.root.split("/")) > name_max:
            raise UserError(f"store {self.uri}: {_too_long(self.root, self.root)}")
        if len(os.fsencode(self.root)) + ROOM_BELOW_ROOT > path_max:
            raise UserError(f"store {self.uri}: {_over_path_max(self.root, ROOM_BELOW_ROOT, path_max)}")

    def exists(self, path: str) -> bool:
        return self.filesystem.get_file_info(path).type != pafs.FileType.NotFound

    def is_file(self, path: str) -> bool:
        return self.filesystem.get_file_info(path).type == pafs.FileType.File

    def entries(self, path: str, *, recursive: bool = False) -> list[pafs.FileInfo]:
        """File infos under `path` ([] when it does not exist, even if a writer creates it meanwhile).
        fsspec's listing asks "a directory?" and then "exists?": a writer creating the directory in
        between makes it "not a directory" once, so that is asked again."""
        selector = pafs.FileSelector(path, allow_not_found=True, recursive=recursive)
        try:
            try:
                return self.filesystem.get_file_info(selector)
            except NotADirectoryError:
                return self.filesystem.get_file_info(selector)
        except FileNotFoundError:
            return []

    def data_files(self, path: str) -> list[DataFile]:
        """Visible Parquet files under `path`, recursively, sorted by name, but those a symbolic link
        leads to outside the store (see `skips_link`); `NotRegularFile` for one that is a FIFO, a
        device or a socket (or a link to one)."""
        files = []
        directories: dict[str, bool] = {}  # directory -> whether a link leads from it outside
        for info in self.entries(path, recursive=True):
            if not (_visible(info.path, path) and info.base_name.endswith(".parquet")):
                continue
            if info.type == pafs.FileType.Unknown:
                raise self.not_regular(info.path)
            if info.type != pafs.FileType.File:
                continue
            directory = posixpath.dirname(info.path)
            if directory not in directories:
                directories[directory] = self.skips_link(directory)
            if directories[directory] or (self.is_local and os.path.islink(info.path) and self.skips_link(info.path)):
                continue
            files.append(DataFile(info.path, info.base_name, info.size))
        return sorted(files, key=lambda f: (f.name, f.path))

    def skips_link(self, path: str) -> bool:
        """True when `path`, named below the root, is reached through a symbolic link leading outside
        the store (`outside`): then the first such link is warned about, once per Location."""
        if not self.outside(path):
            return False
        link = path
        for depth in range(1, len(parts := posixpath.relpath(path, self.root).split("/")) + 1):
            link = posixpath.join(self.root, *parts[:depth])
            if self.outside(link):
                break
        shown = posixpath.relpath(link, self.root)
        if shown not in self.links_outside:
            self.links_outside.append(shown)
            warnings.warn(
                f"store {self.uri}: skipped {shown}: a symbolic link leads from it outside the store, where "
                "nothing is read, moved or rewritten; remove the link",
                StoreWarning,
                stacklevel=3,
            )
        return True

    def read_small(self, path: str, limit: int) -> bytes:
        """The first `limit` + 1 bytes of the regular file at `path` (so that a longer file shows
        as longer than `limit`). FileNotFoundError when it is absent; `NotRegularFile` for a FIFO,
        device, socket or directory, or a link to one, which is never read (a FIFO would block
        until a writer came, a device like /dev/zero would never end): its kind is checked before
        it is opened (opening a device can act on it) and again on what was opened, without
        blocking, in case it changed meanwhile. `LinkedOutside` (an OSError) when a symbolic link
        leads from inside the store to it outside (`outside`): not read either."""
        if not self.is_local:  # objects are regular files (a directory fails to open)
            with self.filesystem.open_input_stream(path) as stream:
                return stream.read(limit + 1)
        self._check_regular(path, os.stat(path).st_mode)
        if self.outside(path):
            raise LinkedOutside(f"{posixpath.relpath(path, self.root)}: a symbolic link leads outside the store to it")
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        try:
            self._check_regular(path, os.fstat(descriptor).st_mode)
            os.set_blocking(descriptor, True)
            with os.fdopen(descriptor, "rb", closefd=False) as stream:
                return stream.read(limit + 1)
        finally:
            os.close(descriptor)

    def not_regular(self, path: str, mode: int | None = None) -> NotRegularFile:
        """The error naming `path` (below the root), a node that is not a regular file."""
        if mode is None and self.is_local:
            try:
                mode = os.stat(path).st_mode
            except OSError:
                mode = None
        kind = _SPECIAL_KINDS.get(stat.S_IFMT(mode), "not a regular file") if mode is not None else "not a file"
        link = (
            f", through a symbolic link to {os.path.realpath(path)}" if self.is_local and os.path.islink(path) else ""
        )
        return NotRegularFile(
            f"store {self.uri}: {posixpath.relpath(path, self.root)} is {kind}{link}, not a regular file: a store "
            "holds only regular files; remove it"
        )

    def _check_regular(self, path: str, mode: int) -> None:
        if not stat.S_ISREG(mode):
            raise self.not_regular(path, mode)

    def temp_files(self, path: str) -> list[pafs.FileInfo]:
        """Temporary files left under `path` by writers (complete or killed)."""
        return [
            info
            for info in self.entries(path, recursive=True)
            if info.type == pafs.FileType.File
            and info.base_name.startswith(".")
            and info.base_name.endswith(TEMP_SUFFIX)
        ]

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write a small file atomically (temporary name + rename, or one upload)."""
        self._write_atomically(path, lambda sink: sink.write(data))

    def next_sequence(self, scope: str) -> int:
        """The write sequence for a new data file: 1 + the highest among the data files under `scope`."""
        sequences = (file_sequence(info.base_name) for info in self.entries(scope, recursive=True))
        return 1 + max((s for s in sequences if s <= MAX_SEQUENCE), default=0)

    def write_table(self, directory: str, table: pa.Table, name: str) -> str:
        """Write `table` as a new Parquet file `name` in `directory`; return its path.

        The name must not exist (names are never reused): see `new_file_name`.
        """
        path = posixpath.join(directory, name)
        self._write_atomically(
            path,
            lambda sink: pq.write_table(table, sink, row_group_size=ROW_GROUP_ROWS, compression="zstd"),
        )
        return path

    def write_row_groups(self, directory: str, schema: pa.Schema, groups: Iterable[pa.Table], name: str) -> str:
        """Write the tables `groups` yields (each of `schema`) as the row groups, in order, of a
        new Parquet file `name` in `directory`, holding one group in memory at a time; its path.
        Atomic as `write_table`: an error while `groups` yields leaves no file."""
        path = posixpath.join(directory, name)

        def write(sink: pa.NativeFile) -> None:
            with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
                for group in groups:
                    writer.write_table(group, row_group_size=max(group.num_rows, 1))

        self._write_atomically(path, write)
        return path

    def move(self, source: str, target: str) -> None:
        """Move a file to `target` (its directory is created); UserError naming both if it fails."""
        try:
            self.filesystem.create_dir(posixpath.dirname(target), recursive=True)
            self.filesystem.move(source, target)
        except OSError as exc:
            raise UserError(f"store {self.uri}: cannot move {source} to {target}: {exc.strerror or exc}") from None

    def claim(self, directory: str, data: bytes) -> str | None:
        """Put a claim holding `data` into the empty or absent `directory`; its path if it stands, else None.

        Of concurrent claims on one directory at most one stands. Locally the claim is one
        exclusively created file (a hard link, atomic on POSIX), so exactly one of them stands.
        Other filesystems have no exclusive create in pyarrow: each claimant writes its own file,
        lists the directory, and withdraws if it is not alone; claimants that write before either
        lists all withdraw (none stands, nothing is left behind).
        """
        if self.entries(directory):
            return None
        name = f"claim-{uuid.uuid4().hex}.json"
        if self.is_local:
            path = posixpath.join(directory, "claim.json")
            temp = posixpath.join(posixpath.dirname(directory), f".{name}{TEMP_SUFFIX}")
            self._write_atomically(temp, lambda sink: sink.write(data))
            try:
                os.makedirs(directory, exist_ok=True)
                os.link(temp, path)
                _fsync(directory)
            except FileExistsError:
                return None
            except OSError as exc:  # a full disk, say: no claim stands, and no empty directory is left
                self.delete(temp)
                self.prune(directory, self.root)
                raise _write_error(self.uri, path, exc, self.root) from None
            finally:
                self.delete(temp)
            return path
        mine = posixpath.join(directory, name)
        self.write_bytes(mine, data)
        if any(info.path != mine for info in self.entries(directory)):
            self.delete(mine)
            return None
        return mine

    def withdraw(self, claim_path: str) -> None:
        """Delete a claim of `claim`, and (locally) the directories it left empty up to the root."""
        self.delete(claim_path)
        self.prune(posixpath.dirname(claim_path), self.root)

    def existing_ancestor(self, path: str) -> str:
        """Locally, the deepest of `path` and its parents that is a directory (what writing under
        `path` would not create); elsewhere `path`."""
        while self.is_local and path != "/" and not os.path.isdir(path):
            path = posixpath.dirname(path)
        return path

    def prune(self, directory: str, keep: str) -> None:
        """Locally, remove `directory` and its parents below `keep` while they are empty (object
        stores have no empty directories; other filesystems keep theirs). A `directory` that was never
        made (absent, or a name too long to make) is passed over to its parent."""
        while self.is_local and directory.startswith(keep + "/"):
            try:
                os.rmdir(directory)  # only ever removes an empty directory
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENAMETOOLONG):
                    return
            directory = posixpath.dirname(directory)

    def first_claim(self, directory: str) -> bytes | None:
        """The content of a claim in `directory` (the first by name), or None when there is none;
        b"" (a damaged claim, which still counts) for one a link leads to outside the store."""
        claims = sorted(info.path for info in self.entries(directory) if info.type != pafs.FileType.Directory)
        for path in claims:
            try:
                return self.read_small(path, CLAIM_BYTES)
            except FileNotFoundError:  # a claimant withdrew meanwhile
                continue
            except LinkedOutside:
                return b""
        return None

    def delete(self, path: str) -> None:
        """Delete a file; a file already gone (deleted by a concurrent compaction) is fine."""
        try:
            self.filesystem.delete_file(path)
        except FileNotFoundError:
            pass

    def _write_atomically(self, path: str, write: Callable[[pa.NativeFile], object]) -> None:
        """Write `path` whole or not at all; on any failure the temporary file is removed, and
        (locally) the directories this write created (a new store's, a new partition's)."""
        directory, name = posixpath.split(path)
        temp = None
        existing = self.existing_ancestor(directory)
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
            temp = None
            if self.is_local:
                _fsync(directory)
        except BaseException as exc:
            attempted = temp or path  # the path that failed: the temporary name is the longer
            if temp is not None:
                self._remove_quietly(temp)
            self.prune(directory, existing)
            if isinstance(exc, OSError):
                raise _write_error(self.uri, path, exc, self.root, attempted) from None
            raise

    def _remove_quietly(self, path: str) -> None:
        try:
            self.filesystem.delete_file(path)
        except OSError:
            pass  # the disk may be gone too; a compaction removes it after STALE_TEMP_SECONDS


def new_file_name(sequence: int) -> str:
    """A unique data file name with write sequence `sequence`: part-s<sequence>-<host>-<pid>-<uuid4>.parquet."""
    return f"part-s{sequence:0{SEQUENCE_DIGITS}d}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex}.parquet"


def file_sequence(name: str) -> int:
    """The write sequence in a data file name; 0 for names without one (older versions, other tools)."""
    match = _SEQUENCED_NAME.match(name)
    return int(match.group(1)) if match else 0


def _write_error(
    uri: str, path: str, exc: OSError, root: str, attempted: str | None = None
) -> StoreWriteError | UserError:
    """The error of a failed write of `path` (through `attempted`, its temporary name) in the store
    at `root`: StoreWriteError (exit 4), but UserError (exit 2) for a path too long, which the
    store path the user gave makes so (pyarrow gives the errno in its text only)."""
    number = exc.errno if exc.errno is not None else _errno_in(str(exc))
    if number in _DISK_FULL or "No space left" in str(exc):
        return StoreWriteError(
            f"store {uri}: disk full (no space left on device) writing {path}; "
            "files stored before it are kept: free space, then rerun"
        )
    if number == errno.ENAMETOOLONG:
        return UserError(f"store {uri}: {_too_long(attempted or path, root)}")
    return StoreWriteError(f"store {uri}: cannot write {path}: {exc.strerror or exc}")


def _errno_in(text: str) -> int | None:
    match = re.search(r"\[errno (\d+)\]", text)
    return int(match.group(1)) if match else None


def _path_limits(path: str) -> tuple[int, int]:
    """(NAME_MAX, PATH_MAX) in bytes where local `path` is (its deepest existing directory)."""
    directory = path
    while directory not in ("/", "") and not os.path.isdir(directory):
        directory = posixpath.dirname(directory)
    try:
        return os.pathconf(directory or "/", "PC_NAME_MAX"), os.pathconf(directory or "/", "PC_PATH_MAX")
    except (OSError, ValueError):
        return 255, 4096


def _too_long(path: str, root: str) -> str:
    """Why local `path`, below the store's `root`, is too long: a name over NAME_MAX bytes, or the
    whole over PATH_MAX bytes, and how long the store path may be; ends with the system's reason."""
    name_max, path_max = _path_limits(path)
    longest = max(path.split("/"), key=lambda name: len(os.fsencode(name)))
    if len(os.fsencode(longest)) > name_max:
        return (
            f"a name in it is {len(os.fsencode(longest)):,} bytes long, over this filesystem's limit of "
            f"{name_max:,}: {os.strerror(errno.ENAMETOOLONG)}"
        )
    return _over_path_max(root, len(os.fsencode(path)) - len(os.fsencode(root)), path_max)


def _over_path_max(root: str, below: int, path_max: int) -> str:
    """The store's `root` with paths of `below` more bytes under it passes PATH_MAX (`path_max` bytes)."""
    length = len(os.fsencode(root))
    return (
        f"the store path is {length:,} bytes long, and the store's files below it make paths of up to "
        f"{length + below:,} bytes, over this system's limit of {path_max:,}: give a store path under "
        f"{path_max - below:,} bytes: {os.strerror(errno.ENAMETOOLONG)}"
    )


def _visible(path: str, base: str) -> bool:
    """True unless some part of `path` below `base` is hidden ('.' or '_' prefix), as pyarrow reads."""
    if base and path.startswith(base.rstrip("/") + "/"):
        relative = path[len(base.rstrip("/")) + 1 :]
    else:
        relative = posixpath.relpath(path, base) if base else path
    return not any(part.startswith((".", "_")) for part in relative.split("/"))


def _fsync(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _resolve(uri: str, shown: str) -> tuple[pafs.FileSystem, str, bool]:
    """(filesystem, root path on it, is local) for a path or URI; errors name it as `shown`."""
    if "://" not in uri or uri.startswith("file://"):
        local = uri.removeprefix("file://")
        return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(local)), True
    try:
        filesystem, root = pafs.FileSystem.from_uri(uri)
        filesystem = _bounded(filesystem, shown)
    except pa.ArrowInvalid as exc:
        if "Unrecognized filesystem type" not in str(exc):
            raise UserError(f"store {shown}: {redact(str(exc))}") from None
        import fsspec

        try:
            fs, root = fsspec.core.url_to_fs(uri)
        except (ImportError, ValueError) as fsspec_exc:
            raise UserError(
                f"store {shown}: no pyarrow or fsspec filesystem for it ({redact(str(fsspec_exc))})"
            ) from None
        filesystem = bounded_fsspec(fs, remote_timeout(), shown, REMOTE_TIMEOUT_ENV)
    except OSError as exc:
        raise UserError(f"store {shown}: {redact(str(exc))}") from None
    return filesystem, root.rstrip("/") or root, False


def _bounded(filesystem: pafs.FileSystem, shown: str) -> pafs.FileSystem:
    """`filesystem` with every call ending within about $XIALPHA_STORE_TIMEOUT seconds, also where
    a server accepts connections and never answers; without this a stalled server hangs a
    command, even its exit. S3 by its client's own bounds: every request tried REMOTE_TRIES times,
    each try ending after timeout / REMOTE_TRIES seconds without a byte (to connect, or of an
    answer), so that no request is left running. The others (GCS, Azure) through
    `deadline.bounded`, GCS's retries of transient errors also limited to the timeout; fsspec
    filesystems through `deadline.bounded_fsspec` (in `_resolve`)."""
    timeout = remote_timeout()
    if isinstance(filesystem, pafs.S3FileSystem):
        reconstruct, (options, *_) = filesystem.__reduce__()
        each = max(timeout / REMOTE_TRIES, 1.0)
        return reconstruct(
            {
                **options,
                "request_timeout": each,
                "connect_timeout": each,
                "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=REMOTE_TRIES),
            }
        )
    if filesystem.type_name == "gcs":
        reconstruct, (options, *_) = filesystem.__reduce__()
        filesystem = reconstruct({**options, "retry_time_limit": datetime.timedelta(seconds=timeout)})
    return bounded(filesystem, timeout, shown, REMOTE_TIMEOUT_ENV)


def _probe(filesystem: pafs.FileSystem, root: str, uri: str) -> None:
    """UserError unless a remote store answers within $XIALPHA_STORE_TIMEOUT seconds (default 10)
    and, on an object store, its bucket exists: an unreachable host, or a client retrying without
    credentials for minutes, fails fast. On S3 the requests run in a daemon thread, which is left
    behind if it hangs; the other filesystems bound each call themselves (`deadline.bounded`), and
    are asked here: a thread of this function waiting on theirs would be left behind with Python
    frames under pyarrow's C++ (which aborts the exit), and not be counted by `calls_left_behind`."""
    timeout = remote_timeout()
    outcome: dict = {}

    def ask() -> None:
        try:
            if filesystem.get_file_info(root).type == pafs.FileType.NotFound and _is_object_store(filesystem):
                bucket = root.split("/", 1)[0]
                outcome["no bucket"] = filesystem.get_file_info(bucket).type == pafs.FileType.NotFound and bucket
        except Exception as exc:  # any client error means the store cannot be used
            outcome["error"] = exc

    if inner(filesystem) is not filesystem:  # bounded call by call
        ask()
    else:
        thread = threading.Thread(target=ask, name="xialpha-store-probe", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            raise no_answer(uri, timeout, REMOTE_TIMEOUT_ENV)
    if "error" in outcome and isinstance(outcome["error"], UserError):  # no answer to a bounded call
        raise outcome["error"]
    if "error" in outcome:
        reason = redact(" ".join(str(outcome["error"]).split()))
        raise UserError(f"store {uri}: cannot reach it: {reason[:300]}")
    if outcome.get("no bucket"):
        raise UserError(
            f"store {uri}: the bucket {outcome['no bucket']!r} does not exist (or these credentials cannot "
            "see it); create it, or give a store in an existing bucket"
        )


def _is_object_store(filesystem: pafs.FileSystem) -> bool:
    filesystem = inner(filesystem)
    if isinstance(filesystem, pafs.PyFileSystem):
        protocol = filesystem.handler.fs.protocol
        protocols = {protocol} if isinstance(protocol, str) else set(protocol)
        return bool(protocols & _OBJECT_STORE_PROTOCOLS)
    return filesystem.type_name in {"s3", "gcs", "abfs"}
