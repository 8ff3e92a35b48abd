"""Running out of file descriptors later in a command, not at a cluster's start (issue 35, third
pass): a store file that could not be opened for it was skipped as "unreadable" with a warning
and the command went on with the rest, exit 0 (select chose from part of the rows), or the error
was "internal error: OSError: [Errno 24] Too many open files", exit 1. Now one line naming the
limit (`ulimit -n`) and what to raise it to, exit 2, the store as it was."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest
from swept import tree_digest

from xialpha.errors import out_of_files

OUT_OF_FILES = """
import os, resource, sys
from xialpha.cli import build_parser, main

store = sys.argv[1]
build_parser()  # every command's module imported, as when a command has started
main(["store", "ls", store])  # and what reading a store imports
n_open = len(os.listdir("/proc/self/fd")) - 1  # without the listing's own descriptor
resource.setrlimit(resource.RLIMIT_NOFILE, (n_open, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
sys.exit(main([arg.replace("STORE", store) for arg in sys.argv[2:]]))
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory, selection_store) -> Path:
    return selection_store(tmp_path_factory.mktemp("out-of-files"))


@pytest.mark.parametrize(
    "argv",
    [["select", "STORE"], ["store", "compact", "STORE"], ["report", "STORE", "--html", "{tmp}/page.html"]],
    ids=["select", "store compact", "report --html"],
)
def test_no_descriptor_left_later_in_a_command_is_one_line_naming_the_limit(store, tmp_path, argv):
    before = tree_digest(store)
    done = subprocess.run(
        [sys.executable, "-c", OUT_OF_FILES, str(store), *[arg.format(tmp=tmp_path) for arg in argv]],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-3000:]
    assert done.stderr.startswith(f"xialpha {argv[0]}: error: too many open files (EMFILE): this process may open")
    assert "(ulimit -n)" in done.stderr and "raise the limit (`ulimit -n 1024`)" in done.stderr, done.stderr
    assert "warning" not in done.stderr and "internal error" not in done.stderr
    assert tree_digest(store) == before
    assert list(tmp_path.iterdir()) == []


def test_running_out_of_descriptors_is_found_however_it_is_wrapped():
    pyarrow_text = OSError("Failed to open local file 'x.parquet'. Detail: [errno 24] Too many open files")
    assert out_of_files(pyarrow_text) == errno.EMFILE
    try:
        try:
            raise OSError(errno.ENFILE, os_text := "Too many open files in system")
        except OSError as exc:
            raise RuntimeError("Nanny failed to start") from exc
    except RuntimeError as wrapped:
        assert out_of_files(wrapped) == errno.ENFILE, os_text
    assert out_of_files(OSError(errno.ENOENT, "No such file or directory")) is None
    assert out_of_files(ValueError("not a Parquet file")) is None
