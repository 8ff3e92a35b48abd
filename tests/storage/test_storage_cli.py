"""`xialpha store ls/compact` through the CLI, and DuckDB reading the same files."""

from __future__ import annotations

import csv
import datetime
import json
import os
import time
from pathlib import Path

import duckdb
import numpy as np
import pytest
from store_rows import CATEGORIES, T0, certify_by_hand, data_files, result_row, result_rows, saved_selections

from xialpha.cli import main
from xialpha.storage.opening import open_store
from xialpha.storage.reading import __doc__ as READ_RULE_DOC
from xialpha.storage.store import ResultStore

SECOND = datetime.timedelta(seconds=1)


@pytest.fixture
def filled(tmp_path):
    """A store with two sweeps, many small files, superseded rows, failures (one after an ok row,
    one never ok), examples, selections."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    for i in range(8):
        store.datasets.write_results([result_row(i, created_at=T0)])
    store.datasets.write_results([result_row(0, xa_error=0.5, created_at=T0 + SECOND)])
    store.datasets.write_results(
        [result_row(3, status="failed", error_message="solver diverged", created_at=T0 + SECOND)]
    )
    store.datasets.write_results(
        [result_row(8, status="failed", error_message="out of memory", created_at=T0 + SECOND)]
    )
    store.datasets.write_results([result_row(4, created_at=T0 + SECOND)])  # same content, newer
    store.datasets.write_results([result_row(4, xa_error=0.2, created_at=T0 + SECOND)])  # tie: later file name wins
    for i in range(3):
        store.datasets.write_results([result_row(i, sweep_id="other", created_at=T0 + 2 * SECOND)])
    for i in range(3):
        bits = np.arange(13) % (i + 2) == 0
        store.datasets.write_examples(
            [{"sweep_id": "sweep-1", "config_key": f"k{i}", "category": "earn", "estimator": "xa", "bits": bits}]
        )
    store.datasets.write_examples(
        [{"sweep_id": "sweep-1", "config_key": "k0", "category": "earn", "estimator": "xa", "bits": np.ones(13, bool)}]
    )
    store.datasets.append(
        "selections", [{"selection_id": "s1", "category": "earn", "sweep_id": "sweep-1", "config_key": "k0"}]
    )
    store.datasets.append(
        "selections", [{"selection_id": "s1", "category": "earn", "sweep_id": "sweep-1", "config_key": "k1"}]
    )
    return store


def _snapshot(store: ResultStore) -> dict:
    return {
        "results": store.datasets.read_results(include_failed=True).to_pylist(),
        "ok": store.read_results_df().to_json(orient="records", date_format="iso"),
        "done": store.done_keys("sweep-1"),
        "examples": {k: v.tolist() for k, v in store.read_examples(["k0", "k1", "k2"]).items()},
        "selections": store.datasets.read("selections").to_pylist(),
        "sweeps": store.sweeps().to_dict("list"),
    }


def test_ls_lists_sweeps_with_counts(filled, capsys):
    assert main(["store", "ls", filled.uri]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80  # not a terminal: 80 columns
    lines = [line.split() for line in out.splitlines()]
    assert ["sweep", "runs", "categories", "configs", "rows", "ok", "failed", "last", "run", "(UTC)"] in lines
    sweeps = [line for line in lines if line and line[0] in ("other", "sweep-1")]
    assert [line[:6] for line in sweeps] == [["other", "0", "3", "3", "3", "0"], ["sweep-1", "0", "3", "4", "8", "1"]]
    assert sweeps[1][6:] == ["2026-01-02", "03:04"]
    assert ["s1", "sweep-1", "-", "-"] in lines  # the hand-made selection: no mode, no objective stored


def test_ls_lists_selections_certifications_and_drift_checks_with_their_ids(tmp_path, capsys):

    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    assert main(["select", store.uri, "--estimator", "xa"]) == 0
    assert store.datasets.read("selections").num_rows == 0  # without --save nothing is stored
    assert main(["select", store.uri, "--estimator", "xa", "--save"]) == 0
    certify_by_hand(store, saved_selections(store))
    store.datasets.append(
        "drift",
        [
            {
                "check_id": f"c{i}",
                "run_id": "drift-run-1",
                "sweep_id": "d1",
                "newest_batch": "2026-W01",
                "category": category,
                "window": window,
                "verdict": verdict,
            }
            for i, (category, window, verdict) in enumerate(
                [
                    ("acq", 1, "drift"),
                    ("acq", 2, "drift"),
                    ("earn", 1, "no drift"),
                    ("earn", 2, "no drift"),
                    ("wheat", 1, "no drift"),
                ]
            )
        ],
    )
    selection_id = saved_selections(store)["selection_id"].iloc[0]
    capsys.readouterr()
    assert main(["store", "ls", store.uri]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    lines = [line.split() for line in out.splitlines()]
    assert [selection_id, "r1", "category", "f1", "of", "xa"] in lines
    assert any(line[:3] == ["cert-hand", selection_id, "test"] for line in lines)
    assert ["drift-run-1", "d1", "2026-W01", "1", "drift,", "2", "no", "drift"] in lines  # per category, not window
    assert main(["store", "ls", store.uri, "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    ids = {"sweeps": "sweep_id", "selections": "selection_id", "certifications": "certification_id", "drift": "run_id"}
    assert [(r["kind"], r[ids[r["kind"]]]) for r in records] == [
        ("sweeps", "r1"),
        ("selections", selection_id),
        ("certifications", "cert-hand"),
        ("drift", "drift-run-1"),
    ]
    assert records[1]["categories"] == len(CATEGORIES) and records[3]["verdicts"] == "1 drift, 2 no drift"
    # counts stay whole numbers where other kinds' rows lack the column (no "3.0" of a table's NaN)
    assert type(records[0]["runs"]) is int and type(records[1]["categories"]) is int
    assert main(["store", "ls", store.uri, "--format", "csv"]) == 0
    header, sweep, selection = (next(csv.reader([line])) for line in capsys.readouterr().out.splitlines()[:3])
    assert header[:3] == ["kind", "sweep_id", "runs"]
    assert sweep[2] == str(records[0]["runs"]) and selection[header.index("categories")] == str(len(CATEGORIES))


def test_compact_keeps_every_query_result(filled, capsys):
    store_dir = filled.datasets.location.root
    before = _snapshot(filled)
    files_before = len(data_files(Path(store_dir)))
    assert main(["store", "compact", filled.uri]) == 0
    output = capsys.readouterr().out
    assert "results: 16 files -> 2 files" in output and "examples: 4 files -> 1 file" in output.splitlines()
    assert _snapshot(open_store(filled.uri, create=True, writable=True)) == before
    assert len(data_files(Path(store_dir))) == 4 < files_before
    assert before["examples"]["k0"] == [True] * 13 and before["selections"][0]["config_key"] == "k1"
    assert main(["store", "compact", filled.uri, "--dataset", "results"]) == 0
    assert _snapshot(open_store(filled.uri, create=True, writable=True)) == before


def test_crash_between_merge_and_delete_leaves_invisible_duplicates(filled, monkeypatch):
    before = _snapshot(filled)
    monkeypatch.setattr(type(filled.datasets.location), "delete", lambda self, path: None)  # the "crash": no deletes
    filled.compact("results")
    monkeypatch.undo()
    assert _snapshot(filled) == before
    assert filled.compact("results") == (2 + 16, 2)
    assert _snapshot(filled) == before


def test_cli_errors_are_one_line_with_exit_code_2(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("x")
    assert main(["store", "ls", str(tmp_path)]) == 2
    assert main(["store", "compact", str(tmp_path / "absent")]) == 2
    open_store(str(tmp_path / "s"), create=True, writable=True).datasets.write_results([result_row(0)])
    assert main(["store", "compact", str(tmp_path / "s"), "--dataset", "nope"]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert (
        len(errors) == 3
        and "not a xialpha store" in errors[0]
        and "dataset: must be one of results, examples" in errors[2]
    )


def test_every_command_names_the_store_the_same_way(filled, tmp_path, monkeypatch, capsys):
    """Positional STORE or --store, else $XIALPHA_STORE, else ./xialpha-store."""
    monkeypatch.delenv("XIALPHA_STORE", raising=False)
    assert main(["store", "ls", filled.uri]) == 0
    listing = capsys.readouterr().out
    assert main(["store", "ls", "--store", filled.uri]) == 0
    assert capsys.readouterr().out == listing
    monkeypatch.setenv("XIALPHA_STORE", filled.uri)
    assert main(["store", "ls"]) == 0 and capsys.readouterr().out == listing
    assert main(["store", "check"]) == 0 and filled.uri in capsys.readouterr().out
    open_store(str(tmp_path / "xialpha-store"), create=True, writable=True).datasets.write_results(
        [result_row(0, sweep_id="local")]
    )
    monkeypatch.chdir(tmp_path)
    assert main(["store", "ls", "xialpha-store"]) == 0 and "local" in capsys.readouterr().out  # STORE beats the env
    monkeypatch.delenv("XIALPHA_STORE")
    assert main(["store", "ls"]) == 0 and "local" in capsys.readouterr().out  # the default ./xialpha-store
    for command in (["select"], ["report"], ["certify", "--selection", "sel-x", "--test-split", "test"]):
        monkeypatch.setenv("XIALPHA_STORE", filled.uri)
        assert main([*command, "--sweep", "nope"] if command[0] != "certify" else command) == 2
        assert filled.uri in capsys.readouterr().err, command
    assert main(["store", "ls", "a", "--store", "b"]) == 2
    assert "--store: given twice, as 'a' and --store 'b'" in capsys.readouterr().err


def test_a_missing_default_store_says_how_to_name_one(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("XIALPHA_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["select"]) == 2
    err = capsys.readouterr().err
    assert "store xialpha-store: not a xialpha store" in err and "give STORE, --store or $XIALPHA_STORE" in err


def test_sweep_may_be_left_out_only_when_the_store_holds_one(filled, tmp_path, capsys):
    assert main(["select", filled.uri]) == 2
    err = capsys.readouterr().err
    assert "--sweep: store" in err and "holds 2 sweeps; choose one with --sweep: other, sweep-1" in err
    assert main(["report", "--store", filled.uri, "--sweep", "sweep1"]) == 2
    assert "--sweep: no sweep 'sweep1' in store" in (err := capsys.readouterr().err)
    assert "did you mean sweep-1? (stored: other, sweep-1)" in err
    single = open_store(str(tmp_path / "one"), create=True, writable=True)
    single.datasets.write_results([result_row(0, sweep_id="only")])
    assert main(["report", single.uri]) == 2  # resolved to "only"; these rows have no estimates to show
    assert "sweep 'only'" in capsys.readouterr().err
    empty = open_store(str(tmp_path / "empty"), create=True, writable=True)
    empty.datasets.append("drift", [{"check_id": "c1"}])
    assert main(["select", empty.uri]) == 2 and "holds no sweep yet" in capsys.readouterr().err
    assert main(["certify", filled.uri, "--selection", "s11", "--test-split", "test"]) == 2
    assert (
        "no selection 's11' in store" in (err := capsys.readouterr().err)
        and "did you mean s1? (newest stored: s1)" in err
    )


def test_ls_on_a_store_without_results(tmp_path, capsys):
    open_store(str(tmp_path / "s"), create=True, writable=True).datasets.append("drift", [{"check_id": "c1"}])
    assert main(["store", "ls", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "sweeps" not in out and "c1" in out  # a kind with nothing stored is left out
    open_store(str(tmp_path / "empty"), create=True, writable=True).datasets.append("sweeps", [{"run_id": "r"}])
    assert main(["store", "ls", str(tmp_path / "empty")]) == 0
    assert "empty (no sweep, selection, certification or drift check stored)" in capsys.readouterr().out


def test_duckdb_reads_the_results_with_standard_types_and_the_documented_rule(filled):
    glob = f"{filled.datasets.location.root}/results/*/*.parquet"
    types = {name: type_ for name, type_, *_ in duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{glob}')").fetchall()}
    assert types["created_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["C"] == "DOUBLE" and types["n"] == "BIGINT" and types["degree"] == "INTEGER"
    assert types["stable"] == "BOOLEAN" and types["config_key"] == "VARCHAR" and types["sweep_id"] == "VARCHAR"
    raw = duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}')").fetchall()[0][0]
    assert raw == 16

    query = READ_RULE_DOC.split("\n\n")[-1].replace("STORE", filled.datasets.location.root)
    ours = filled.datasets.read_results(include_failed=True)
    theirs = duckdb.sql(f"SELECT config_key, xa_error, status FROM ({query}) ORDER BY sweep_id, config_key").fetchall()
    assert theirs == list(zip(*(ours[c].to_pylist() for c in ("config_key", "xa_error", "status"))))


def test_duckdb_reads_the_other_datasets(filled):
    root = filled.datasets.location.root
    examples = duckdb.sql(f"SELECT n, octet_length(bits) FROM read_parquet('{root}/examples/*/*.parquet')").fetchall()
    assert set(examples) == {(13, 2)}
    selections = duckdb.sql(f"SELECT count(*) FROM read_parquet('{root}/selections/*/*.parquet')").fetchall()
    assert selections == [(2,)]


def test_compact_deletes_only_stale_temporary_files(filled):
    partition = Path(filled.datasets.location.root) / "results" / "sweep_id=sweep-1"
    stale, fresh = partition / ".part-old.parquet.1234abcd.tmp", partition / ".part-new.parquet.5678abcd.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"PAR1 half a file")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(stale, (two_days_ago, two_days_ago))
    before = _snapshot(filled)
    filled.compact("results")
    assert not stale.exists() and fresh.exists()
    assert _snapshot(filled) == before
