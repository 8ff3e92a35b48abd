"""`xialpha fetch reuters21578 [--dest DIR] [--from PATH]`: download (or copy) and verify Reuters-21578.

The files are unpacked into a hidden staging folder next to DEST, checked against the SHA-256
manifest of the 22 SGML files, and only then moved to DEST, so a failed fetch leaves nothing behind.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from xialpha.corpora import reuters_files
from xialpha.errors import UserError
from xialpha.outputs import check_output
from xialpha.time_limits import timeout_seconds

DATASETS = ("reuters21578",)
DEFAULT_DEST = reuters_files.FETCH_DEST


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", choices=DATASETS, help="the corpus to fetch")
    parser.add_argument(
        "--dest", type=Path, default=DEFAULT_DEST, help=f"directory to put the files in (default: {DEFAULT_DEST})"
    )
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=None,
        help="a local copy (.tar.gz or directory) instead of downloading",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="network timeout in seconds (default: 60)")


def run(args: argparse.Namespace) -> int:
    timeout_seconds(args.timeout, "--timeout")  # a wait that is no duration, or one so long it overflows
    dest = check_output(args.dest.expanduser(), "dest")
    if dest.exists() and not dest.is_dir():
        raise UserError(f"--dest: {dest} exists and is not a directory")
    if dest.is_symlink() and not dest.is_dir():
        raise UserError(
            f"--dest: {dest} is a symbolic link to {os.readlink(dest)}, which is not a directory; "
            "give the directory itself"
        )
    if dest.is_symlink() and not any(dest.iterdir()):  # the files would replace the link, not fill its directory
        raise UserError(f"--dest: {dest} is a symbolic link (to {os.readlink(dest)}); give the directory itself")
    if dest.is_dir() and not any(dest.iterdir()):
        dest.rmdir()
    elif dest.is_dir():
        try:
            reuters_files.verify_reuters_files(dest)
        except UserError as exc:
            raise UserError(
                f"--dest: {dest} exists and is not a verified Reuters-21578 copy ({exc}); "
                "remove it or choose another --dest"
            ) from None
        print(f"reuters21578: already present and verified in {dest}")
        return 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        unpacked = staging / "files"
        if args.source is None:
            archive = staging / "reuters21578.tar.gz"
            digest = _download(reuters_files.REUTERS_URL, archive, args.timeout)
            print(f"reuters21578: downloaded {reuters_files.REUTERS_URL} (SHA-256 {digest})")
            _unpack(archive, unpacked)
        elif args.source.is_dir():
            _copy_files(args.source, unpacked)
        elif args.source.is_file():
            _unpack(args.source, unpacked)
        else:
            raise UserError(f"--from: {args.source} does not exist")
        root = _sgml_folder(unpacked)
        reuters_files.verify_reuters_files(root)
        root.rename(dest)
    except OSError as exc:  # a full disk or a read-only --dest; the network's errors are UserErrors already
        raise UserError(f"--dest: cannot write {dest}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"reuters21578: {len(list(dest.glob('reut2-*.sgm')))} SGML files verified (SHA-256) in {dest}")
    print(f'a spec reads it with path = "{dest.resolve()}" (a relative path is relative to the spec file)')
    return 0


def _download(url: str, target: Path, timeout: float) -> str:
    """Stream `url` into `target`; return the SHA-256 of the bytes. UserError when unreachable."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as out:
            for chunk in iter(lambda: response.read(2**20), b""):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise UserError(
            f"cannot download {url}: HTTP {exc.code} {exc.reason}; "
            "pass --from PATH with a local copy (.tar.gz or directory)"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        if not isinstance(exc, urllib.error.URLError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
            raise  # writing the archive failed, not the network
        reason = getattr(exc, "reason", exc)
        raise UserError(
            f"cannot download {url}: no network connection ({reason}); "
            "pass --from PATH with a local copy (.tar.gz or directory)"
        ) from None
    return digest.hexdigest()


def _unpack(archive: Path, target: Path) -> None:
    """Extract the files and folders of `archive` under `target`, never outside it: the "data" filter
    where this Python has it (3.11.4+), else members whose names leave `target` are refused."""
    try:
        with tarfile.open(archive) as tar:
            members = [member for member in tar.getmembers() if member.isfile() or member.isdir()]
            if hasattr(tarfile, "data_filter"):
                tar.extractall(target, members=members, filter="data")
                return
            root = target.resolve()
            for member in members:
                if not (root / member.name).resolve().is_relative_to(root):
                    raise tarfile.TarError(f"member {member.name!r} would be written outside {target}")
            tar.extractall(target, members=members)
    except (tarfile.TarError, EOFError) as exc:
        raise UserError(f"--from: {archive} is not a readable tar archive ({exc})") from None


def _copy_files(source: Path, target: Path) -> None:
    """Copy the regular files under `source` (contents only: the copies are writable by the user)."""
    for path in sorted(source.rglob("*")):
        if path.is_file():
            copy = target / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)


def _sgml_folder(unpacked: Path) -> Path:
    """The folder holding reut2-000.sgm inside the unpacked tree."""
    found = sorted(unpacked.rglob("reut2-000.sgm"))
    if not found:
        raise UserError("reuters21578: the archive or directory holds no reut2-000.sgm")
    return found[0].parent
