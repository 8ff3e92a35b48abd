"""Shared test fixtures: where ../shared is, where Reuters-21578 is, and skips when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

# One BLAS thread, as a sweep's worker processes have (distributed's pre-spawn-environ sets
# OPENBLAS_NUM_THREADS=1 and the like: `xialpha.jobs.worker_processes`). Tests run Dask in process
# too, where several task threads call OpenBLAS's own pthreads pool at once: in CI on 2026-11-29 a
# dpotrf in tests/jobs/test_sweep_auto.py hung there for its whole 600 s (py-spy: the task thread
# waiting on a futex inside LAPACK, nothing else running). Set before any test starts a thread.
threadpool_limits(limits=1, user_api="blas")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# $XIALPHA_REUTERS: a Reuters-21578 SGML directory (`xialpha fetch reuters21578 --dest DIR`), else ../shared's
REUTERS_DIR = Path(os.environ.get("XIALPHA_REUTERS") or SHARED / "corpora" / "reuters21578").expanduser()


def pytest_configure(config: pytest.Config) -> None:
    """With `--dist loadfile` (pytest-xdist), the files are handed out in the order
    `pytest_collection_modifyitems` leaves them, not by xdist's count of tests per file."""
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker (the controller hands files out in the order its workers collected
    them): files with a `slow` test first (a benchmark's quick run or a campaign: minutes each, one
    to seven tests a file), then by their number of tests, most first, as xdist itself orders them.
    When CI runs every test in one session, a worker starts a long file at once, not at the end
    while the other waits (xdist's order would put the one-test campaign last)."""
    if not hasattr(config, "workerinput"):  # not a pytest-xdist worker
        return
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    ordered = sorted(
        files.values(), key=lambda tests: (not any(test.get_closest_marker("slow") for test in tests), -len(tests))
    )
    items[:] = [item for tests in ordered for item in tests]


@pytest.fixture(scope="session")
def reuters_dir() -> Path:
    """The Reuters-21578 SGML directory ($XIALPHA_REUTERS, else under ../shared); skips the test where it is absent."""
    if not (REUTERS_DIR / "reut2-000.sgm").is_file():
        pytest.skip(
            f"Reuters-21578 not found at {REUTERS_DIR} (set XIALPHA_REUTERS to a copy that "
            "`xialpha fetch reuters21578 --dest DIR` made)"
        )
    return REUTERS_DIR


@pytest.fixture(scope="session")
def selection_store(tmp_path_factory):
    """copy(directory) -> directory/"store": a store of SELECTION_SPEC's finished sweep "sel"
    (tests/swept.py), its spec beside it as directory/"sel.toml". The sweep is filled once per
    session and copied for each caller, which may change its copy (issue 43.7: six modules each
    filled their own)."""
    import shutil

    from swept import SELECTION_SPEC, fill_store

    from xialpha.spec.sweep import load_spec
    from xialpha.storage.opening import open_store

    master = tmp_path_factory.mktemp("selection-store")
    (master / "sel.toml").write_text(SELECTION_SPEC, encoding="utf-8")
    fill_store(load_spec(master / "sel.toml"), open_store(str(master / "store"), create=True, writable=True))

    def copy(directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        shutil.copy(master / "sel.toml", directory / "sel.toml")
        shutil.copytree(master / "store", directory / "store")
        return directory / "store"

    return copy


@pytest.fixture(scope="session")
def compared_store(tmp_path_factory):
    """copy(directory) -> a `compared.Compared` of the store tests/compared.py fills (five saved
    selections of four sweeps), filled once per session and copied to directory/"store" for each
    caller."""
    import dataclasses
    import shutil

    from compared import fill_compared

    master = fill_compared(tmp_path_factory.mktemp("compared-store"))

    def copy(directory: Path):
        shutil.copytree(master.uri, directory / "store")
        return dataclasses.replace(master, uri=str(directory / "store"))

    return copy
