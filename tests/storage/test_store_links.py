"""The store never reaches outside itself through a link: `store check --quarantine` and `store
compact` leave every file that a symbolic link inside the store leads to where it is, as it is,
and say so; reads skip such links with one warning naming the link (issue 48, item 5: a link in
a partition added every Parquet file it led to to the sweep, and a summary linked to a file
outside was read and part of it echoed)."""

from __future__ import annotations

import json
import warnings

import pytest
from store_rows import result_row
from swept import tree_digest

from xialpha.cli import main
from xialpha.errors import StoreWarning
from xialpha.storage.opening import open_store
from xialpha.storage.summary import SUMMARY_NAME


@pytest.fixture
def two_stores(tmp_path):
    """(inside, outside): a store, and another one whose results partitions the first one links to:
    "x" (two files) from its own results/sweep_id=x, "y" from results/sweep_id=z (where its rows
    are foreign, so `check --quarantine` would move the file)."""
    outside = tmp_path / "other"
    other = open_store(str(outside), create=True, writable=True)
    other.datasets.write_results([result_row(0, sweep_id="x")])
    other.datasets.write_results([result_row(1, sweep_id="x")])
    other.datasets.write_results([result_row(2, sweep_id="y", status="failed", error_message="planted")])
    inside = tmp_path / "store"
    store = open_store(str(inside), create=True, writable=True)
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
    with pytest.warns(StoreWarning, match="skipped results/sweep_id=x: a symbolic link leads from it outside"):
        assert (
            len(open_store(str(inside), create=True, writable=True).datasets.read_results("x")) == 0
        )  # nor do reads follow the link


def test_quarantine_moves_nothing_a_link_leads_to(two_stores, capsys):
    inside, outside = two_stores
    before = tree_digest(outside)
    code = main(["store", "check", str(inside), "--quarantine"])
    captured = capsys.readouterr()
    assert tree_digest(outside) == before
    assert not (inside / "_quarantine").exists()
    assert code == 1 and "outside the store" in captured.out, captured.out


def _read_warned(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer = call()
    return answer, [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]


@pytest.fixture
def linked_rows(tmp_path):
    """A store whose sweep "g" holds 4 rows and links (results/sweep_id=g/ext) to 4 more of sweep g
    outside it, after the sweep ended (its summary stamps its own file only)."""
    elsewhere = open_store(str(tmp_path / "elsewhere"), create=True, writable=True)
    elsewhere.datasets.write_results([result_row(i, sweep_id="g") for i in range(4, 8)])
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(i, sweep_id="g") for i in range(4)])
    store.finish_sweep("g")
    partition = tmp_path / "store" / "results" / "sweep_id=g"
    (partition / "ext").symlink_to(tmp_path / "elsewhere" / "results" / "sweep_id=g", target_is_directory=True)
    return store


def test_reads_and_listings_skip_a_link_in_a_partition_with_one_warning(linked_rows, capsys):
    uri = linked_rows.uri
    rows, warned = _read_warned(lambda: open_store(uri, create=True, writable=True).datasets.read_results("g"))
    assert rows.num_rows == 4, rows.num_rows  # was 8: the linked rows were part of the sweep
    assert warned == [
        f"store {uri}: skipped results/sweep_id=g/ext: a symbolic link leads from it outside the store, where "
        "nothing is read, moved or rewritten; remove the link"
    ]
    sweeps, warned = _read_warned(lambda: open_store(uri, create=True, writable=True).sweeps())
    assert sweeps.set_index("sweep_id").loc["g", "rows_ok"] == 4 and len(warned) == 1, (sweeps, warned)
    assert main(["store", "ls", uri, "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[1].split(",")[:7] == ["sweeps", "g", "0", "3", "4", "4", "0"], captured.out
    assert "skipped results/sweep_id=g/ext" in captured.err and "elsewhere" not in captured.err
    assert main(["store", "check", uri]) == 1
    assert "results/sweep_id=g/ext: outside: a symbolic link leads outside the store" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["SECRET-TOKEN-1234\n", "summary"], ids=["any-file", "a-summary"])
def test_a_summary_linked_outside_is_not_read_and_named_without_its_content(linked_rows, tmp_path, content):
    partition = tmp_path / "store" / "results" / "sweep_id=g"
    (partition / "ext").unlink()
    outside = tmp_path / "outside.json"
    if content == "summary":  # the sweep's own summary, claiming 10 more failed rows, moved outside
        summary = json.loads((partition / SUMMARY_NAME).read_text())
        outside.write_text(json.dumps({**summary, "rows_failed": 10, "stored_keys": 14}))
    else:
        outside.write_text(content)
    (partition / SUMMARY_NAME).unlink()
    (partition / SUMMARY_NAME).symlink_to(outside)
    sweeps, warned = _read_warned(lambda: open_store(linked_rows.uri, create=True, writable=True).sweeps())
    assert sweeps.set_index("sweep_id").loc["g", ["rows_ok", "rows_failed"]].tolist() == [4, 0]
    assert warned == [
        f"store {linked_rows.uri}: ignored results/sweep_id=g/{SUMMARY_NAME}: a symbolic link leads outside the "
        "store to it: not read; the rows are read instead"
    ]
