"""Reading corpus files: a path that must exist, the files of a directory tree or a tar archive, and
bytes decoded as UTF-8 with a latin-1 fallback."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from xialpha.errors import UserError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


def existing_path(path: str | os.PathLike, field: str = "path") -> Path:
    """`path` as a Path; UserError naming `field` when nothing is there."""
    if path is None or str(path) == "":
        raise UserError(f"{field}: no path given")
    resolved = Path(path).expanduser()
    if not resolved.exists():
        raise UserError(f"{field}: {resolved} does not exist")
    return resolved


def is_archive(path: Path) -> bool:
    """True for a regular file named like a tar archive (.tar.gz, .tgz, .tar.bz2, .tar.xz, .tar)."""
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


def iter_tree_files(path: Path, wanted: Callable[[PurePosixPath], bool] = lambda relative: True
                    ) -> Iterator[tuple[PurePosixPath, bytes]]:
    """(relative path, bytes) of every regular, non-hidden file under directory or archive `path`
    for which `wanted(relative path)` is true, in sorted path order."""
    if path.is_dir():
        files = sorted(
            PurePosixPath(Path(root, name).relative_to(path).as_posix())
            for root, _, names in os.walk(path)
            for name in names
        )
        for relative in files:
            if not _hidden(relative) and wanted(relative):
                yield relative, (path / relative).read_bytes()
    elif is_archive(path):
        try:
            with tarfile.open(path) as archive:
                members = sorted((m for m in archive.getmembers() if m.isfile()), key=lambda m: m.name)
                for member in members:
                    relative = PurePosixPath(member.name)
                    if not _hidden(relative) and wanted(relative):
                        yield relative, archive.extractfile(member).read()
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise UserError(f"{path}: not a readable tar archive ({exc})") from None
    else:
        raise UserError(f"{path}: expected a directory or a tar archive ({', '.join(ARCHIVE_SUFFIXES)})")


def decode_text(data: bytes) -> str:
    """`data` decoded as UTF-8, or as latin-1 (which accepts every byte) where it is not valid UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _hidden(relative: PurePosixPath) -> bool:
    return any(part.startswith(".") for part in relative.parts)
