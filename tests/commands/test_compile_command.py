"""`xialpha compile`: the kernels a sweep's tasks call compiled into numba's cache at install time, so
that no sweep compiles; a second run only loads them, and a damaged entry is compiled again with a note.

Each run is a fresh `xialpha` process with its own NUMBA_CACHE_DIR (numba keeps specialisations per
process; only its on-disk cache carries them from one run to the next), as after a fresh install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from xialpha.jobs.compiled import COMPILED_KERNELS

SPECIALISATIONS = sum(len(kernel.signatures) for kernel in COMPILED_KERNELS)
DAMAGED = "xialpha.estimators.kernel_rows._scatter_columns"  # one specialisation


def _compile(cache: Path) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "compile"], capture_output=True, text=True, env=environ, timeout=600
    )


@pytest.fixture(scope="module")
def compiled_once(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    cache = tmp_path_factory.mktemp("numba-cache")
    return cache, _compile(cache)


def test_a_cold_cache_is_compiled_saying_so_and_where(compiled_once):
    cache, done = compiled_once
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"xialpha compile: compiling {SPECIALISATIONS} kernel specialisations for this machine\n"
    assert done.stdout.startswith(f"compiled {SPECIALISATIONS} kernel specialisations in "), done.stdout
    shown = done.stdout.split("numba's cache: ", 1)[1].strip().split(", ")
    assert shown and all(Path(directory).is_relative_to(cache) for directory in shown), shown
    indexed = {path.name.split(".", 1)[0] for path in cache.rglob("*.nbi")}  # "<module tail>.<kernel>-..."
    assert {kernel.module.rsplit(".", 1)[1] for kernel in COMPILED_KERNELS} <= indexed, sorted(indexed)


def test_a_second_run_only_loads_them(compiled_once):
    cache, _ = compiled_once
    done = _compile(cache)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith(f"all {SPECIALISATIONS} kernel specialisations were compiled already: loaded in ")


def test_a_damaged_entry_is_compiled_again_with_a_note_the_rest_loaded(compiled_once):
    cache, _ = compiled_once
    data = next(cache.rglob("*_scatter_columns*.nbc"))
    data.write_bytes(data.read_bytes()[:100])
    done = _compile(cache)
    assert done.returncode == 0, done.stderr
    note, start = done.stderr.splitlines()
    assert note.startswith(f"xialpha compile: numba's cache of {DAMAGED} in ") and note.endswith(": compiling it again")
    assert start == "xialpha compile: compiling 1 kernel specialisation for this machine"
    assert done.stdout.startswith(f"compiled 1 of {SPECIALISATIONS} kernel specialisations in "), done.stdout
    assert _compile(cache).stdout.startswith(f"all {SPECIALISATIONS} kernel specialisations were compiled already")
