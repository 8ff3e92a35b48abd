"""Shared test fixtures: where ../shared is, where Reuters-21578 is, and skips when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# $XIALPHA_REUTERS: a Reuters-21578 SGML directory (`xialpha fetch reuters21578 --dest DIR`), else ../shared's
REUTERS_DIR = Path(os.environ.get("XIALPHA_REUTERS") or SHARED / "corpora" / "reuters21578").expanduser()


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
    from xialpha.storage.store import ResultStore

    master = tmp_path_factory.mktemp("selection-store")
    (master / "sel.toml").write_text(SELECTION_SPEC, encoding="utf-8")
    fill_store(load_spec(master / "sel.toml"), ResultStore(str(master / "store")))

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
