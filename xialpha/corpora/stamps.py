"""What a corpus file was when its parts were planned (`stamp_of`), and the check that it still is
when a part is read (`check`), so that nothing read from another version of the file is stored
under the planned one's data fingerprint.

A local file's stamp: its size, modification time and status-change time (ctime, in ns), and a
CRC-32 of its content: of every byte for files up to WHOLE_DIGEST_BYTES, else of the first and last
ENDS_DIGEST_BYTES. The kernel sets ctime on every write and on every change of the times, so a
rewrite whose modification time was put back (`touch -d`, `os.utime`) still shows; the digest
covers filesystems whose times are coarse or not kept. A file read through fsspec (s3://, gs://,
...): its size and the version its filesystem's info() reports (ETag, version id, generation, or
else a modification or creation time), as far as it reports one.
"""

from __future__ import annotations

import os
import stat
import zlib
from dataclasses import dataclass
from typing import NoReturn

from xialpha.corpora.sources import is_uri, remote_filesystem
from xialpha.errors import UserError

WHOLE_DIGEST_BYTES = 4 * 2**20  # files up to this size: a digest of all of it (Reuters-21578's are 1.3 MB)
ENDS_DIGEST_BYTES = 64 * 2**10  # larger ones: of their first and last this many bytes
# fields of fsspec's info() that change with an object's content, most telling first
VERSION_FIELDS = (
    "ETag",
    "etag",
    "VersionId",
    "version_id",
    "generation",
    "md5Hash",
    "LastModified",
    "last_modified",
    "updated",
    "mtime",
    "created",
)


@dataclass(frozen=True)
class Stamp:
    """A file as planned: `path` (a local path or a URI), `size` in bytes, `times` (local: mtime
    and ctime in ns; a URI: the (field, value) pairs of VERSION_FIELDS its info() gave) and, for a
    local file, `digest` (CRC-32 as described in the module)."""

    path: str
    size: int
    times: tuple
    digest: int | None = None


def stamp_of(path: str) -> Stamp | None:
    """The stamp of the regular file at `path` (a local path or a URI), None when there is none there."""
    if is_uri(path):
        info = _remote_info(path)
        return None if info is None or info.get("type") != "file" else Stamp(path, int(info["size"]), _versions(info))
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return Stamp(path, found.st_size, (found.st_mtime_ns, found.st_ctime_ns), _digest(path, found.st_size))


def check(stamp: Stamp, content: bool = False) -> None:
    """UserError naming the file when it is gone or differs from `stamp`: its size, its times or
    version, and with `content` (after a part was read from it) its digest."""
    if is_uri(stamp.path):
        info = _remote_info(stamp.path)
        if info is None:
            _removed(stamp.path)
        _compare(stamp, int(info["size"]), _versions(info) == stamp.times)
        return
    try:
        now = os.stat(stamp.path)
    except FileNotFoundError:
        _removed(stamp.path)
    same = (now.st_mtime_ns, now.st_ctime_ns) == stamp.times
    if same and content and stamp.digest is not None:
        try:
            same = _digest(stamp.path, now.st_size) == stamp.digest
        except FileNotFoundError:
            _removed(stamp.path)
    _compare(stamp, now.st_size, same)


def _compare(stamp: Stamp, size: int, same: bool) -> None:
    if size != stamp.size or not same:
        change = f"{stamp.size:,} -> {size:,} bytes" if size != stamp.size else "modified"
        raise UserError(
            f"{stamp.path}: changed while the corpus was read ({change}); start again once it stays unchanged"
        )


def _removed(path: str) -> NoReturn:
    raise UserError(f"{path}: was removed after the corpus was planned; restore it, or start again") from None


def _digest(path: str, size: int) -> int:
    """CRC-32 of the file's bytes (all of them up to WHOLE_DIGEST_BYTES, else its two ends)."""
    with open(path, "rb") as stream:
        if size <= WHOLE_DIGEST_BYTES:
            return zlib.crc32(stream.read())
        digest = zlib.crc32(stream.read(ENDS_DIGEST_BYTES))
        stream.seek(-ENDS_DIGEST_BYTES, os.SEEK_END)
        return zlib.crc32(stream.read(ENDS_DIGEST_BYTES), digest)


def _remote_info(uri: str) -> dict | None:
    filesystem, inner = remote_filesystem(uri)
    try:
        return filesystem.info(inner)
    except FileNotFoundError:
        return None
    except UserError:  # no answer in time
        raise
    except Exception as exc:  # each filesystem raises its own errors (permissions, network)
        raise UserError(f"cannot reach {uri} ({type(exc).__name__}: {exc})") from None


def _versions(info: dict) -> tuple:
    return tuple((name, str(info[name])) for name in VERSION_FIELDS if info.get(name) is not None)
