"""Resource limits and a full standard output (issue 35, finding 4): a local cluster started under
`ulimit -n 20` or a small address space (`ulimit -v`) printed "internal error: RuntimeError: Nanny
failed to start" after Dask's tracebacks, or hung; standard output on a full device was "internal
error: OSError: [Errno 28]", exit 1. Now one line naming the limit and what to raise (exit 2), and
a full standard output is exit 4, as a full store is."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from sweep_processes import sweep_spec
from test_resilience_artifacts import _trained


def _sweep_under(tmp_path: Path, limit: int, value: int) -> subprocess.CompletedProcess:
    spec = sweep_spec(tmp_path / "s.toml", "limits", cluster='kind = "local"\nworkers = 2')

    def limited():
        resource.setrlimit(limit, (value, value))

    return subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )


def test_too_few_file_descriptors_is_one_line_naming_the_limit(tmp_path):
    done = _sweep_under(tmp_path, resource.RLIMIT_NOFILE, 20)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-3000:]
    assert done.stderr.startswith("xialpha sweep: error: file descriptors: this process may open 20 files (ulimit -n)")
    assert "`ulimit -n 1024`" in done.stderr and not (tmp_path / "store").exists()


def test_a_small_address_space_is_one_line_naming_the_limit(tmp_path):
    done = _sweep_under(tmp_path, resource.RLIMIT_AS, 2 * 2**30)  # the old code hung here
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-3000:]
    assert done.stderr.startswith("xialpha sweep: error: memory: the address-space limit is 2.0 GiB (ulimit -v)")
    assert "`ulimit -v unlimited`" in done.stderr


def test_the_limits_are_not_in_the_way_of_an_ordinary_machine():
    from xialpha.jobs.cluster import check_local_limits

    files, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if files != resource.RLIM_INFINITY and files < 1024:
        pytest.skip(f"this machine allows {files} open files")
    check_local_limits(8)


def test_standard_output_on_a_full_device_is_exit_4_and_one_line(tmp_path):
    """stdout on a copy of /dev/full's node made in tmp_path (the real one is not touched)."""
    from xialpha.models.artifact import save_artifact

    full = tmp_path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except OSError as exc:
        pytest.skip(f"cannot make a device node here ({exc.strerror})")
    artifact = save_artifact(tmp_path / "model", _trained(), {"sweep_id": "s"})
    (tmp_path / "docs.txt").write_text("wheat\noil\n" * 2000)
    with open(full, "w") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "xialpha.cli", "predict", str(artifact), "--input", str(tmp_path / "docs.txt")],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 4, done.stderr
    assert done.stderr == "xialpha predict: error: cannot write standard output: No space left on device\n"
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_a_very_long_store_path_keeps_the_reason_of_its_error(tmp_path, capsys):
    """A 4,000-character store path: the message was cut at 2,000 characters, before its reason."""
    from xialpha.cli import main

    store = tmp_path.joinpath(*["d" * 200] * 21)
    capsys.readouterr()
    code = main(["store", "ls", str(store)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and len(err) < 1000, err
    assert err.rstrip().endswith("File name too long") and "..." in err, err


def test_a_sweep_into_a_too_long_store_path_is_exit_2_naming_the_lengths(tmp_path):
    """A 4,0xx-byte store path: its files' paths pass PATH_MAX. The user's input, so exit 2 (it was
    4, the code of a full disk, as storage wrapped ENAMETOOLONG as a write error), one line with the
    lengths and the limit, the reason kept, and no directory left behind."""
    spec = sweep_spec(tmp_path / "s.toml", "long", cluster='kind = "local"\nworkers = 1')
    store = tmp_path.joinpath(*["d" * 200] * 20)
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(store), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    length = len(os.fsencode(str(store)))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-3000:]
    assert f": the store path is {length:,} bytes long, and the store's files below it make paths" in done.stderr
    assert f"over this system's limit of {os.pathconf(tmp_path, 'PC_PATH_MAX'):,}" in done.stderr
    assert done.stderr.rstrip().endswith("bytes: File name too long"), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


FILLS_AFTER_TWO_WRITES = """
import errno, sys
from xialpha.storage.location import Location

written = []
real = Location._write_atomically

def write_atomically(self, path, write):  # the third file finds the disk full, as a small one does
    written.append(path)
    if len(written) < 3:
        return real(self, path, write)
    def full(sink):
        raise OSError(errno.ENOSPC, "No space left on device")
    return real(self, path, full)

Location._write_atomically = write_atomically
sys.argv = ["xialpha", "sweep", {spec!r}, "--store", {store!r}, "--quiet"]
from xialpha.cli import console
console()
"""


@pytest.fixture(params=["simulated", "tmpfs"])
def small_disk(request, tmp_path):
    """Where a sweep's store fills its disk: a full disk simulated at the third file written, or a
    32 KiB tmpfs (mounted where this test may: as root)."""
    if request.param == "simulated":
        yield request.param, tmp_path / "store"
        return
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs needs root (mount -t tmpfs)")
    try:
        yield request.param, mount / "store"
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_a_sweep_whose_store_fills_its_disk_is_exit_4_and_one_line(tmp_path, small_disk):
    """Issue 42: a sweep on a full small filesystem exited 4, as documented, with a second line: a
    worker closing with a cancelled task logged "Async instruction ... ended with CancelledError"."""
    kind, store = small_disk
    spec = sweep_spec(tmp_path / "s.toml", "full", n_docs=400, C="[0.01, 0.1, 1.0, 10.0, 100.0]", cluster="workers = 1")
    argv = ["sweep", str(spec), "--store", str(store), "--quiet"]
    if kind == "simulated":
        command = [sys.executable, "-c", FILLS_AFTER_TWO_WRITES.format(spec=str(spec), store=str(store))]
    else:
        command = [sys.executable, "-m", "xialpha.cli", *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 4, done.stderr[-3000:]
    assert done.stderr.count("\n") == 1, done.stderr[-3000:]
    assert done.stderr.startswith(f"xialpha sweep: error: store {store}: disk full (no space left on device) writing ")
