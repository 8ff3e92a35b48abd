"""Precedence that cannot lose work: ok rows are only replaced by newer ok rows, write order
comes from the store (not clocks), and compaction keeps every result (issue 16, defect 1)."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from store_rows import T0, result_row
from swept import small_spec

from xialpha.cli import main
from xialpha.storage.opening import open_store
from xialpha.storage.rows import config_key

REPO = Path(__file__).resolve().parents[2]
DAY = datetime.timedelta(days=1)


def _spec(limit: str = "") -> str:
    """2 categories x 3 C x 2 rho = 12 keys, on an rbf kernel (the Gram path, where `gram_memory_limit` applies)."""
    return small_spec(
        "lost", kernel='name = "rbf"\ngamma = 1.0', C="[0.1, 1.0, 10.0]", rho="[1.0, 2.0]", sweep_extra=limit
    )


def _xialpha(*argv) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "xialpha.cli", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )


@pytest.mark.cluster
def test_a_forced_rerun_whose_configs_all_fail_loses_no_result(tmp_path):
    """The reproduction: 12 ok rows, then `--force` with a Gram limit every config exceeds."""
    good, failing, store = tmp_path / "good.toml", tmp_path / "failing.toml", tmp_path / "store"
    good.write_text(_spec())
    failing.write_text(_spec('gram_memory_limit = "1kB"'))
    assert _xialpha("sweep", good, "--store", store, "--quiet").returncode == 0
    ok_rows = open_store(str(store), create=True, writable=True).read_results_df("lost")
    assert len(ok_rows) == 12

    rerun = _xialpha("sweep", failing, "--store", store, "--quiet", "--force")
    assert rerun.returncode == 1 and "12 failed" in rerun.stdout, rerun.stdout + rerun.stderr

    selected = _xialpha("select", store, "--sweep", "lost", "--save")
    assert selected.returncode == 0, selected.stderr
    assert _xialpha("store", "compact", store).returncode == 0
    after = open_store(str(store), create=False, writable=True)
    assert after.read_results_df("lost").equals(ok_rows)
    listing = _xialpha("store", "ls", store).stdout.splitlines()
    row = next(line.split() for line in listing if line.split()[:1] == ["lost"])
    assert row[4:6] == ["12", "0"]  # rows ok, failed
    # the failed attempts are kept beside the results, as history
    raw = [pq.read_table(p) for p in (store / "results").rglob("*.parquet")]
    statuses = sorted(s for table in raw for s in table["status"].to_pylist())
    assert statuses == ["failed"] * 12 + ["ok"] * 12


def test_failed_attempts_never_hide_an_ok_row_and_compaction_keeps_it(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(i, xa_error=0.1 * i) for i in range(3)])
    for attempt in range(3):
        store.datasets.write_results([result_row(i, status="failed", error_message=f"oom {attempt}") for i in range(2)])
    store.datasets.write_results([result_row(5, status="failed", error_message="never worked")])
    expected = {config_key(i=i): 0.1 * i for i in range(3)}

    for _ in range(2):  # before and after compaction
        rows = {r["config_key"]: r for r in store.datasets.read_results(include_failed=True).to_pylist()}
        assert {key: rows[key]["xa_error"] for key in expected} == expected
        assert {rows[key]["status"] for key in expected} == {"ok"}
        assert rows[config_key(i=5)]["error_message"] == "never worked"
        assert store.done_keys("sweep-1") == set(expected)
        assert store.datasets.read_results(filters=[("xa_error", ">", 0.15)]).num_rows == 1
        store.compact()
    kept = pq.read_table(next((tmp_path / "store" / "results").rglob("*.parquet")))
    # per key: the ok row and the newest failed attempt
    assert sorted(
        zip(kept["config_key"].to_pylist(), kept["status"].to_pylist(), kept["error_message"].to_pylist())
    ) == sorted(
        [(config_key(i=i), "ok", None) for i in range(3)]
        + [(config_key(i=i), "failed", "oom 2") for i in range(2)]
        + [(config_key(i=5), "failed", "never worked")]
    )


def test_an_ok_row_is_replaced_only_by_a_newer_ok_row(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(0, xa_error=0.3)])
    store.datasets.write_results([result_row(0, status="failed", error_message="killed worker")])
    store.datasets.write_results([result_row(0, xa_error=0.2)])
    store.datasets.write_results([result_row(0, status="failed", error_message="killed worker")])
    assert store.datasets.read_results(include_failed=True)["xa_error"].to_pylist() == [0.2]
    store.compact()
    assert store.datasets.read_results(include_failed=True)["xa_error"].to_pylist() == [0.2]


def test_two_drivers_with_skewed_clocks_the_later_write_wins(tmp_path):
    """Driver "behind" has a clock a day late, "ahead" a day early: created_at does not decide."""
    uri = str(tmp_path / "store")
    behind, ahead = open_store(uri, create=True, writable=True), open_store(uri, create=True, writable=True)
    ahead.datasets.write_results(
        [result_row(0, xa_error=0.5, created_at=T0 + DAY), result_row(1, xa_error=0.5, created_at=T0 + DAY)]
    )
    behind.datasets.write_results([result_row(0, xa_error=0.1, created_at=T0 - DAY)])
    ahead.compact()
    behind.datasets.write_results([result_row(1, xa_error=0.1, created_at=T0 - DAY)])
    for reader in (ahead, behind, open_store(uri, create=False, writable=True)):
        assert reader.datasets.read_results()["xa_error"].to_pylist() == [0.1, 0.1]
    ahead.compact()
    assert open_store(uri, create=False, writable=True).datasets.read_results()["xa_error"].to_pylist() == [0.1, 0.1]


def test_file_names_carry_the_write_sequence_and_compaction_keeps_it(tmp_path):
    from xialpha.storage.location import file_sequence

    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    partition = tmp_path / "store" / "results" / "sweep_id=sweep-1"
    for i in range(3):
        store.datasets.write_results([result_row(i)])
    assert sorted(file_sequence(p.name) for p in partition.glob("*.parquet")) == [1, 2, 3]
    store.compact()
    assert [file_sequence(p.name) for p in partition.glob("*.parquet")] == [3]
    store.datasets.write_results([result_row(9)])
    assert sorted(file_sequence(p.name) for p in partition.glob("*.parquet")) == [3, 4]
    # an older version's file (time-stamped name) counts as sequence 0: anything written now wins
    pq.write_table(
        pq.read_table(next(partition.glob("*.parquet"))), partition / "part-20991231T000000000000Z-old.parquet"
    )
    assert store.datasets.read_results().num_rows == 4 and file_sequence("part-20991231T000000000000Z-old.parquet") == 0
    store.datasets.write_results([result_row(0, xa_error=0.7)])
    assert store.datasets.read_results(filters=[("config_key", "=", config_key(i=0))])["xa_error"].to_pylist() == [0.7]


def test_select_after_the_failed_rerun_in_process(tmp_path, capsys):
    """`xialpha select` chooses from the ok rows although the newest row of every key failed."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(i, xa_f1=0.5 + 0.01 * i, xa_d_pos=2, xa_d_neg=1) for i in range(6)])
    store.datasets.write_results([result_row(i, status="failed", error_message="GramTooLarge") for i in range(6)])
    assert main(["select", store.uri, "--sweep", "sweep-1", "--estimator", "xa", "--rho", "2", "--save"]) == 0
    assert "stored selection" in capsys.readouterr().out
