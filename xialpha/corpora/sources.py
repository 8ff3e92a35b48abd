"""Reading corpus files: a path that must exist, byte ranges of a file (a local path or an fsspec
URI such as s3://bucket/key), the files of a directory tree or a tar archive, and bytes decoded as
UTF-8 with a latin-1 fallback.

Only regular files are read. A FIFO, socket or device in a corpus is refused (reading one would
block or never end), and so is a symbolic link whose target lies outside the corpus root unless
the caller allows it (`follow_symlinks`); links inside the root are read as their targets. Every
call to a file read through fsspec ends within $XIALPHA_STORE_TIMEOUT seconds (`remote_filesystem`).
"""

from __future__ import annotations

import os
import re
import stat
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from xialpha.errors import UserError
from xialpha.time_limits import REMOTE_TIMEOUT_ENV, BoundedFsspec, TimeLimit, remote_timeout

URI = re.compile(r"^[a-z][a-z0-9+.-]*://")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def existing_path(path: str | os.PathLike, field: str = "path") -> Path:
    """`path` as a Path; UserError naming `field` when nothing is there."""
    if path is None or str(path) == "":
        raise UserError("no path given", key=field)
    resolved = Path(path).expanduser()
    try:
        os.stat(resolved)
    except FileNotFoundError:
        raise UserError(f"{resolved} does not exist", key=field) from None
    except OSError as exc:
        raise UserError(f"{resolved}: {exc.strerror}", key=field) from None
    return resolved


def is_uri(path) -> bool:
    """Whether `path` is a URL such as s3://bucket/key or memory://x (read through fsspec), not a local path."""
    return isinstance(path, str) and URI.match(path) is not None


def existing_file(path, field: str = "path") -> Path | str:
    """`path` (a local path or an fsspec URI) when it is a file; UserError naming `field` otherwise."""
    if not is_uri(path):
        found = existing_path(path, field)
        if not found.is_file():
            raise UserError(f"{found} is not a file", key=field)
        return found
    filesystem, inner = remote_filesystem(path, field)
    try:
        found = filesystem.isfile(inner)
    except UserError:  # no answer in time
        raise
    except Exception as exc:  # each filesystem raises its own errors (permissions, network)
        raise UserError(f"cannot reach {path} ({type(exc).__name__}: {exc})", key=field) from None
    if not found:
        raise UserError(f"{path} does not exist or is not a file", key=field)
    return path


def file_size(path) -> int:
    """Bytes in the file at `path` (local or URI)."""
    if not is_uri(path):
        return os.stat(path).st_size
    filesystem, inner = remote_filesystem(path)
    return int(filesystem.size(inner))


def read_range(path, start: int = 0, stop: int | None = None) -> bytes:
    """Bytes start..stop (None: to the end) of the regular file at `path` (local or URI)."""
    if is_uri(path):
        filesystem, inner = remote_filesystem(path)
        return filesystem.cat_file(inner, start=start, end=stop)
    if start == 0 and stop is None:
        return read_regular_file(path, f"path: {path}")
    with open_binary(path) as stream:
        stream.seek(start)
        return stream.read(-1 if stop is None else stop - start)


def open_binary(path):
    """A binary file object of the regular file at `path` (local or URI), for readers that seek."""
    if is_uri(path):
        filesystem, inner = remote_filesystem(path)
        return filesystem.open(inner, "rb")
    _check_regular(f"path: {path}", os.stat(path).st_mode)
    return open(path, "rb")


def remote_filesystem(uri: str, field: str = "path") -> tuple[BoundedFsspec, str]:
    """(the fsspec filesystem of `uri`, the path inside it), every call to it, and to each file it
    opens, ending within $XIALPHA_STORE_TIMEOUT seconds as a remote store's do (a server that stalls
    gives a UserError naming the file, never a hang); UserError naming `field` for a URI fsspec
    cannot read."""
    import fsspec

    try:
        filesystem, inner = fsspec.core.url_to_fs(uri)
    except (ImportError, ValueError) as exc:
        raise UserError(f"cannot read {uri}: {exc}", key=field) from None
    seconds = remote_timeout()

    def expired() -> UserError:
        return UserError(
            f"{uri}: no answer within {seconds:g} s from its server (unreachable, or stalled?); check the "
            f"URI and the network (${REMOTE_TIMEOUT_ENV} sets the wait)",
            key=field,
        )

    return BoundedFsspec(filesystem, TimeLimit(seconds, expired, name="xialpha-corpus-call")), inner


def is_archive(path: Path) -> bool:
    """True for a regular file named like a tar archive (.tar.gz, .tgz, .tar.bz2, .tar.xz, .tar)."""
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


def iter_tree_files(
    path: Path,
    wanted: Callable[[PurePosixPath], bool] = lambda relative: True,
    follow_symlinks: bool = False,
    root: Path | None = None,
) -> Iterator[tuple[PurePosixPath, bytes]]:
    """(relative path, bytes) of every regular, non-hidden file under directory or archive `path`
    for which `wanted(relative path)` is true, in sorted path order.

    UserError for a wanted entry that is not a regular file (FIFO, socket, device), a symbolic link
    loop, or (unless follow_symlinks) a symbolic link leaving `root` (default: `path`, a directory
    of the corpus whose root it is); archive members must be regular files.
    """
    if path.is_dir():
        for relative, target in tree_files(path, follow_symlinks, root):
            if wanted(relative):
                yield relative, read_regular_file(target, f"path: {path / relative}")
    elif is_archive(path):
        yield from _archive_files(path, wanted)
    else:
        raise UserError(f"{path}: expected a directory or a tar archive ({', '.join(ARCHIVE_SUFFIXES)})")


def tree_files(path: Path, follow_symlinks: bool = False, root: Path | None = None) -> list[tuple[PurePosixPath, Path]]:
    """(relative path, path to open) of the non-hidden non-directories under directory `path`,
    sorted, without reading them; symbolic links checked as `iter_tree_files` says."""
    return _tree_files(path, Path(os.path.realpath(root or path)), follow_symlinks)


def read_regular_file(file: Path | str, name: str) -> bytes:
    """The bytes of `file`, which must be a regular file (checked before and after opening it
    without blocking, so a FIFO or device is refused, never read); UserError naming `name` otherwise."""
    try:
        _check_regular(name, os.stat(file).st_mode)  # before opening: opening a device can act on it
        descriptor = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UserError(f"{name}: {exc.strerror}") from None
    try:
        _check_regular(name, os.fstat(descriptor).st_mode)  # what was opened, if it changed meanwhile
        os.set_blocking(descriptor, True)
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            return stream.read()
    finally:
        os.close(descriptor)


def decode_text(data: bytes) -> str:
    """`data` decoded as UTF-8, or as latin-1 (which accepts every byte) where it is not valid UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _tree_files(path: Path, root: Path, follow_symlinks: bool) -> list[tuple[PurePosixPath, Path]]:
    """(relative path, path to open) of the non-hidden non-directories under directory `path`, sorted;
    symbolic links are checked (no loop; inside `root` unless follow_symlinks) and their
    directories descended."""
    found = []
    stack = [(PurePosixPath(), path, (root,))]  # (relative dir, dir, real paths of it and its ancestors)
    while stack:
        relative_dir, directory, ancestors = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            raise UserError(f"{directory}: {exc.strerror}", key="path") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            relative, entry_path = relative_dir / entry.name, Path(entry.path)
            if entry.is_symlink():
                target = _link_target(entry_path, root, follow_symlinks)
                if target.is_dir():
                    if any(target == a or a.is_relative_to(target) for a in ancestors):
                        raise UserError(
                            f"{entry_path} is a symbolic link to {target}, which contains it (a loop)", key="path"
                        )
                    stack.append((relative, entry_path, (*ancestors, target)))
                else:
                    found.append((relative, target))
            elif entry.is_dir(follow_symlinks=False):
                stack.append((relative, entry_path, (*ancestors, Path(os.path.realpath(entry_path)))))
            else:
                found.append((relative, entry_path))
    return sorted(found, key=lambda pair: pair[0].parts)  # as PurePosixPath orders them, without its slow comparisons


def _link_target(link: Path, root: Path, follow_symlinks: bool) -> Path:
    try:
        target = Path(os.path.realpath(link, strict=True))
    except FileNotFoundError:
        raise UserError(f"{link} is a symbolic link to {os.readlink(link)}, which does not exist", key="path") from None
    except OSError as exc:
        raise UserError(f"{link}: {exc.strerror} (a symbolic link loop)", key="path") from None
    if not follow_symlinks and not target.is_relative_to(root):
        raise UserError(
            f"{link} is a symbolic link to {target}, outside the corpus {root}; set follow_symlinks = true to read it",
            key="path",
        )
    return target


def _archive_files(path: Path, wanted) -> Iterator[tuple[PurePosixPath, bytes]]:
    """The wanted regular members of tar archive `path`, read in ONE pass in archive order (going
    back in a compressed stream means decompressing it again from the start), then yielded in
    member-name order like a directory's files. A hard link takes the bytes of the member it names,
    kept from earlier in the pass (read again from the archive only when that member was not wanted)."""
    found: list[tuple[str, PurePosixPath, bytes]] = []
    read: dict[str, bytes] = {}  # normalised member name -> bytes, for hard links to earlier members
    try:
        with tarfile.open(path) as archive:
            for member in archive:
                relative = PurePosixPath(member.name)
                if member.isdir() or _hidden(relative) or not wanted(relative):
                    continue
                if not (member.isfile() or member.islnk()):
                    raise UserError(
                        f"{path} holds {member.name}, which is not a regular file "
                        "(a symbolic link or special file); archives must hold regular files",
                        key="path",
                    )
                data = read.get(os.path.normpath(member.linkname)) if member.islnk() else None
                if data is None:
                    data = archive.extractfile(member).read()
                read[os.path.normpath(member.name)] = data
                found.append((member.name, relative, data))
    except (tarfile.TarError, EOFError, OSError, KeyError) as exc:
        raise UserError(f"{path}: not a readable tar archive ({exc})") from None
    found.sort(key=lambda item: item[0])
    for _, relative, data in found:
        yield relative, data


def _check_regular(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((kind for test, kind in _KINDS if test(mode)), "not a file")
        raise UserError(f"{name}: is {kind}, not a regular file")


def _hidden(relative: PurePosixPath) -> bool:
    return any(part.startswith(".") for part in relative.parts)
