"""A store the user cannot write (issue 25): `sweep --dry-run` writes nothing and so runs on it;
a real sweep is refused in one line before anything starts. Root ignores file modes, so the
store's write probe is made to fail as a read-only filesystem's would."""

from __future__ import annotations

import pytest
from swept import fill_store, small_spec, tree_digest

from xialpha.cli import main
from xialpha.errors import UserError
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store


def test_a_dry_run_reads_a_read_only_store_and_a_sweep_is_refused(tmp_path, capsys, monkeypatch):
    spec = tmp_path / "ro.toml"
    spec.write_text(small_spec("ro", C="[0.5, 5.0, 50.0]"))
    store = tmp_path / "store"
    fill_store(
        parse_spec(small_spec("ro", C="[0.5, 5.0, 50.0]"), source="spec"),
        open_store(str(store), create=True, writable=True),
        batches=1,
    )

    def read_only(location):
        raise UserError(f"store {location.uri}: cannot write {location.root}: Read-only file system")

    monkeypatch.setattr("xialpha.storage.marker._probe_writable", read_only)
    before = tree_digest(store)
    assert main(["sweep", str(spec), "--store", str(store), "--dry-run"]) == 0
    assert "to run: 3 fits (3 of 6 rows already stored)" in capsys.readouterr().out
    assert main(["sweep", str(spec), "--store", str(store), "--quiet"]) == 2
    assert capsys.readouterr().err.endswith("Read-only file system\n")
    assert tree_digest(store) == before


def test_a_full_disk_leaves_no_empty_directories(tmp_path, capsys, monkeypatch):
    """ENOSPC on a first write into a dataset (select --save) or a new store used to leave their
    empty directories behind; now the store is as it was, and a new store is not there at all."""
    import errno

    from store_rows import result_row

    store = tmp_path / "store"
    fill_store(parse_spec(small_spec("full"), source="spec"), open_store(str(store), create=True, writable=True))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("xialpha.storage.location.pq.write_table", full)
    before = tree_digest(store)
    assert main(["select", str(store), "--save"]) == 4
    assert "disk full" in capsys.readouterr().err
    assert tree_digest(store) == before
    with pytest.raises(Exception, match="disk full"):
        open_store(str(tmp_path / "new" / "store"), create=True, writable=True).datasets.write_results([result_row(0)])
    assert not (tmp_path / "new").exists()


def test_a_full_disk_while_claiming_the_test_set_leaves_it_unclaimed(tmp_path, monkeypatch):
    """ENOSPC as the claim is linked into place: one StoreWriteError naming the disk, no claim and
    no empty claim directory left, so a certify after space is freed can claim the test set."""
    import errno
    import os

    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(parse_spec(small_spec("claim"), source="spec"), store)
    before = tree_digest(tmp_path / "store")
    link = os.link

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("xialpha.storage.location.os.link", full)
    with pytest.raises(Exception, match="disk full"):
        store.claims.claim_test_set("fp-test", {"certification_id": "cert-1"})
    assert tree_digest(tmp_path / "store") == before and store.claims.test_set_claim("fp-test") is None
    assert not [p for p in (tmp_path / "store").rglob("*") if p.is_dir() and not any(p.iterdir())]
    monkeypatch.setattr("xialpha.storage.location.os.link", link)
    assert store.claims.claim_test_set("fp-test", {"certification_id": "cert-2"}) is not None
