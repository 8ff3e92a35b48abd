"""A store the user cannot write (issue 25): `sweep --dry-run` writes nothing and so runs on it;
a real sweep is refused in one line before anything starts. Root ignores file modes, so the
store's write probe is made to fail as a read-only filesystem's would."""

from __future__ import annotations

import pytest

from swept import fill_store, small_spec, tree_digest
from xialpha.cli import main
from xialpha.errors import UserError
from xialpha.spec.sweep import parse_spec
from xialpha.storage.store import ResultStore


def test_a_dry_run_reads_a_read_only_store_and_a_sweep_is_refused(tmp_path, capsys, monkeypatch):
    spec = tmp_path / "ro.toml"
    spec.write_text(small_spec("ro", C="[0.5, 5.0, 50.0]"))
    store = tmp_path / "store"
    fill_store(parse_spec(small_spec("ro", C="[0.5, 5.0, 50.0]"), source="spec"), ResultStore(str(store)), batches=1)

    def read_only(location):
        raise UserError(f"store {location.uri}: cannot write {location.root}: Read-only file system")

    monkeypatch.setattr("xialpha.storage.marker._probe_writable", read_only)
    before = tree_digest(store)
    assert main(["sweep", str(spec), "--store", str(store), "--dry-run"]) == 0
    assert "6 configs x rho (3 already stored), 3 fits" in capsys.readouterr().out
    assert main(["sweep", str(spec), "--store", str(store), "--quiet"]) == 2
    assert capsys.readouterr().err.endswith("Read-only file system\n")
    assert tree_digest(store) == before
