"""Files xialpha writes for the user (a report page, predictions, an artefact's directory): never
into a store, whole or not at all, and only where the path points.

One rule decides where a command may write, wherever the path comes from (a flag, `--watch`, an
API argument, `select --refit DIR`, `predict --output`): `check_output`, which `write_file` calls
and every other writer of a user's path (`xialpha.models.artifact.check_target`, `fetch --dest`)
calls before it creates anything. A path is refused when it is, or lies in, a xialpha store: a
directory holding the store marker (`_xialpha_store.json`), found among the path's own
directories or, once its symbolic links are resolved, among those of what it points at (so a
link into a store is refused too); and when it falls in what the command reads (`protected`: the
store in use, which may not have its marker yet, the artefact `predict` loads, its --input).
`tests/test_outputs.py` scans the source for writers that skip it.

A regular file (or a path that does not exist yet) is written whole or not at all: a full disk, a
read-only directory or a missing one must not leave a truncated CSV or an empty page behind that
looks like a result, so the text goes to a hidden temporary file beside the file and is renamed
over it once complete (the old file's permission bits are kept). A symbolic link is followed into
the regular file it names, which is replaced the same way and the link kept; a link to nothing is
refused. `-`, a device (/dev/null, a terminal), a FIFO, a socket and the descriptors' names
(/dev/stdout, /dev/fd/N) are written through, never replaced. A directory is refused, and so is a
file in a store or that the command reads (`check_output`). Every failure is one line naming the
parameter and the file (UserError).
"""

from __future__ import annotations

import os
import re
import stat
import sys
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from xialpha.errors import UserError
from xialpha.storage import STORE_MARKER

STDOUT = "-"  # the path that means standard output
# what a descriptor is open on (/dev/stdout, /dev/fd/1, /proc/self/fd/1): written through, even a regular file
_DESCRIPTOR = re.compile(r"/dev/std(in|out|err)|/dev/fd/.*|/proc/[^/]+/fd/.*")


def write_file(
    path: str | os.PathLike,
    write: Callable[[TextIO], object],
    parameter: str,
    protected: Iterable[tuple[str, str | os.PathLike]] = (),
) -> None:
    """Call `write(stream)` with a UTF-8 text stream (no newline translation) for `path` and complete
    the file as the module docstring says; UserError naming `parameter` ("html": `html=`, `--html`) and
    `path` if it cannot be written or must not be. protected: (name of the parameter, path) of
    files and directories the command reads, which `path` must not fall in, e.g. ("ARTIFACT", dir)."""
    if str(path) == STDOUT:
        _write_stream(sys.stdout, write, parameter, "standard output")
        return
    target = check_output(path, parameter, protected)
    try:
        mode = os.stat(target).st_mode  # through links: what the path points at
    except FileNotFoundError:
        if target.is_symlink():
            raise UserError(
                f"{path} is a symbolic link to {os.readlink(target)}, which does not exist; give the file itself",
                parameter=parameter,
            ) from None
        mode = None
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}", parameter=parameter) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise UserError(f"{path} is a directory; give a file name", parameter=parameter)
    if (mode is not None and not stat.S_ISREG(mode)) or _names_a_descriptor(target):
        _write_through(target, write, parameter)
    else:
        _replace(Path(os.path.realpath(target)) if target.is_symlink() else target, write, parameter, mode)


def check_output(
    path: str | os.PathLike, parameter: str, protected: Iterable[tuple[str, str | os.PathLike]] = ()
) -> Path:
    """`path` as a Path if a command may write it (a file, or a directory it creates): not in a
    xialpha store, nor in what the command reads (see the module docstring). UserError naming
    `parameter` and the store or protected path otherwise; nothing is created. `-` (standard
    output) is always allowed."""
    target = Path(path)
    if str(path) == STDOUT:
        return target
    for name, read in protected:
        if _falls_in(target, Path(read)):
            raise UserError(
                f"{path} is {'inside ' if _inside(target, Path(read)) else ''}{name} {read}, which "
                "this command reads: choose another path",
                parameter=parameter,
            )
    store = _store_holding(target)
    if store is not None:
        raise UserError(
            f"{path} is inside the xialpha store {store}, which it would overwrite: choose a path outside the store",
            parameter=parameter,
        )
    return target


def _store_holding(target: Path) -> Path | None:
    """The directory holding a store marker that `target` is or lies in, by its own path or by the
    path its links resolve to; None when there is none."""
    for candidate in dict.fromkeys((Path(os.path.abspath(target)), Path(os.path.realpath(target)))):
        for directory in (candidate, *candidate.parents):
            if os.path.lexists(directory / STORE_MARKER):
                return directory
    return None


def _replace(target: Path, write: Callable[[TextIO], None], parameter: str, mode: int | None) -> None:
    """Write a hidden temporary file beside the regular file `target` and rename it over it."""
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(temp, "x", encoding="utf-8", newline="") as stream:
            write(stream)
            stream.flush()
            if mode is not None:
                os.chmod(stream.fileno(), stat.S_IMODE(mode))
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise UserError(f"cannot write {target}: {exc.strerror or exc}", parameter=parameter) from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _write_through(target: Path, write: Callable[[TextIO], None], parameter: str) -> None:
    """Open the device, FIFO or descriptor `target` for writing and write into it (a FIFO waits for
    its reader, as a shell's redirection does)."""
    try:
        with open(target, "w", encoding="utf-8", newline="") as stream:
            write(stream)
            stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # /dev/full says ENOSPC as the stream is closed
        raise UserError(f"cannot write {target}: {exc.strerror or exc}", parameter=parameter) from None


def _write_stream(stream: TextIO, write: Callable[[TextIO], None], parameter: str, name: str) -> None:
    try:
        write(stream)
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise UserError(f"cannot write {name}: {exc.strerror or exc}", parameter=parameter) from None


def _names_a_descriptor(target: Path) -> bool:
    """True for /dev/stdout, /dev/fd/N, /proc/PID/fd/N: what a descriptor is open on, written through
    even when that is a regular file (a shell's `> file`), which a rename would unlink from it."""
    return _DESCRIPTOR.fullmatch(os.path.abspath(target)) is not None


def _inside(target: Path, read: Path) -> bool:
    """Whether `target`, which falls in `read`, is a path under it (not `read` itself, nor a hard
    link to the file `read`)."""
    return os.path.realpath(target) != os.path.realpath(read) and not read.is_file()


def _falls_in(target: Path, read: Path) -> bool:
    """True when writing `target` would write `read` or a file inside the directory `read`: the
    same path once links are resolved, or (a hard link) the same file as `read` or one of its files."""
    try:
        written: os.stat_result | None = os.stat(target)
    except OSError:
        written = None
    if written is not None and not (stat.S_ISREG(written.st_mode) or stat.S_ISDIR(written.st_mode)):
        return False  # a device or FIFO is written through, whatever else reads it
    resolved, read_resolved = Path(os.path.realpath(target)), Path(os.path.realpath(read))
    if resolved == read_resolved or resolved.is_relative_to(read_resolved):
        return True
    if written is None:
        return False
    candidates = [read] + (list(read.iterdir()) if read.is_dir() else [])
    for candidate in candidates:
        try:
            if os.path.samestat(written, os.stat(candidate)):
                return True
        except OSError:
            continue
    return False
