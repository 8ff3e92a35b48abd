"""The report's count of failed rows: from the summary a sweep stores when it ends, as from its rows."""

from __future__ import annotations

import re

from store_rows import result_rows

from xialpha.cli import main
from xialpha.storage.opening import open_store
from xialpha.storage.store import ResultStore


def _counts(uri: str, capsys) -> str:
    assert main(["report", uri, "--sweep", "r1"]) == 0
    # the value after its label: beside it in a box, or under it when a long store path makes the
    # table print a block per row
    return re.search(r"result rows \(ok / failed\)\D*(\d+ / \d+)", capsys.readouterr().out).group(1)


def test_the_failed_count_from_the_summary_equals_the_one_from_the_rows(tmp_path, capsys, monkeypatch):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    rows = result_rows("r1")
    store.datasets.write_results(rows[:-2])
    failed = [{**row, "status": "failed", "error_message": "diverged"} for row in rows[-2:]]
    store.datasets.write_results(failed)
    from_rows = _counts(store.uri, capsys)
    store.finish_sweep("r1")
    read = ResultStore.read_results_df
    monkeypatch.setattr(
        ResultStore,
        "read_results_df",
        lambda self, *a, **k: read(self, *a, **k) if not k.get("include_failed") else 1 / 0,
    )
    assert _counts(store.uri, capsys) == from_rows == f"{len(rows) - 2} / 2"
