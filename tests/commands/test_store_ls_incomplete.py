"""Issue 43.3: `store ls` marks a sweep that misses rows its newest run planned (interrupted, or
still running) instead of showing it as complete ("12 configs, 12 rows ok, 0 failed")."""

from __future__ import annotations

import json

from swept import fill_store, small_spec

from xialpha.cli import main
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store


def test_store_ls_says_how_many_rows_an_interrupted_sweep_misses(tmp_path, capsys):
    spec = parse_spec(small_spec("cut", C="[0.5, 5.0, 50.0]", sweep_extra="batch_size = 1"), base_dir=tmp_path)
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    fill_store(spec, store, batches=1)  # the first batch stored, then the sweep stopped
    assert main(["store", "ls", str(tmp_path / "store")]) == 0
    out = capsys.readouterr().out
    assert main(["store", "ls", str(tmp_path / "store"), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)[0]
    planned, missing = listed["rows_planned"], listed["rows_missing"]
    assert planned == 6 and 0 < missing < planned, listed
    note = f"sweep cut: {missing} of {planned} rows missing (still running, or interrupted): run it again to finish"
    assert note in out


def test_a_complete_sweep_gets_no_note(tmp_path, capsys):
    spec = parse_spec(small_spec("whole"), base_dir=tmp_path)
    fill_store(spec, open_store(str(tmp_path / "store"), create=True, writable=True))
    assert main(["store", "ls", str(tmp_path / "store"), "--format", "csv"]) == 0
    assert main(["store", "ls", str(tmp_path / "store")]) == 0
    out = capsys.readouterr().out
    assert "rows_missing" in out and "missing" not in out.split("rows_planned")[-1]
