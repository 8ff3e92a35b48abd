"""The store never reaches outside itself through a link: `store check --quarantine` and `store
compact` leave every file that a symbolic link inside the store leads to where it is, as it is,
and say so; reads still follow such links."""

from __future__ import annotations

import pytest
from store_rows import result_row
from swept import tree_digest

from xialpha.cli import main
from xialpha.storage.store import ResultStore


@pytest.fixture
def two_stores(tmp_path):
    """(inside, outside): a store, and another one whose results partitions the first one links to:
    "x" (two files) from its own results/sweep_id=x, "y" from results/sweep_id=z (where its rows
    are foreign, so `check --quarantine` would move the file)."""
    outside = tmp_path / "other"
    other = ResultStore(str(outside))
    other.datasets.write_results([result_row(0, sweep_id="x")])
    other.datasets.write_results([result_row(1, sweep_id="x")])
    other.datasets.write_results([result_row(2, sweep_id="y", status="failed", error_message="planted")])
    inside = tmp_path / "store"
    store = ResultStore(str(inside))
    store.datasets.write_results([result_row(3, sweep_id="own")])
    store.datasets.write_results([result_row(4, sweep_id="own")])
    (inside / "results" / "sweep_id=x").symlink_to(outside / "results" / "sweep_id=x", target_is_directory=True)
    (inside / "results" / "sweep_id=z").symlink_to(outside / "results" / "sweep_id=y", target_is_directory=True)
    return inside, outside


def test_compact_rewrites_nothing_a_link_leads_to(two_stores, capsys):
    inside, outside = two_stores
    before = tree_digest(outside)
    assert main(["store", "compact", str(inside), "--dataset", "results"]) == 0
    captured = capsys.readouterr()
    assert tree_digest(outside) == before
    assert "outside the store" in captured.err and "sweep_id=x" in captured.err
    assert len(list((inside / "results" / "sweep_id=own").glob("*.parquet"))) == 1  # its own files are merged
    assert len(ResultStore(str(inside)).datasets.read_results("x")) == 2  # and reads still follow the link


def test_quarantine_moves_nothing_a_link_leads_to(two_stores, capsys):
    inside, outside = two_stores
    before = tree_digest(outside)
    code = main(["store", "check", str(inside), "--quarantine"])
    captured = capsys.readouterr()
    assert tree_digest(outside) == before
    assert not (inside / "_quarantine").exists()
    assert code == 1 and "outside the store" in captured.out, captured.out
