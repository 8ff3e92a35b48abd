"""Unreadable and foreign files in a store: reads skip them with one warning, `store check`
lists them, `--quarantine` moves them aside, compaction never merges them (issue 16, defect 2)."""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_rows import result_row
from swept import fill_store, small_spec

from xialpha.cli import main
from xialpha.errors import StoreWarning
from xialpha.spec.sweep import load_spec
from xialpha.storage.opening import open_store
from xialpha.storage.rows import config_key, pack_bits
from xialpha.storage.store import ResultStore


def _first_file(partition: Path) -> Path:
    return sorted(partition.glob("*.parquet"))[0]


def _truncated(partition: Path) -> None:
    data = _first_file(partition).read_bytes()
    (partition / "part-truncated.parquet").write_bytes(data[: len(data) // 2])


def _not_parquet(partition: Path) -> None:
    (partition / "part-notes.parquet").write_text("sweep_id,config_key\nx,y\n")


def _corrupt_page(partition: Path) -> None:
    """A complete footer over data pages overwritten with garbage: only reading the data fails."""
    data = bytearray(_first_file(partition).read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    data[4 : len(data) - footer] = b"\xff" * (len(data) - footer - 4)
    (partition / "part-corrupt-page.parquet").write_bytes(bytes(data))


def _unknown_column(partition: Path) -> None:
    pq.write_table(
        pa.Table.from_pylist([{**result_row(50, sweep_id="s"), "shoe_size": 44}]), partition / "part-extra.parquet"
    )


def _wrong_type(partition: Path) -> None:
    row = {**result_row(51, sweep_id="s"), "C": "large"}
    pq.write_table(pa.Table.from_pylist([row]), partition / "part-typed.parquet")


def _examples_in_results(partition: Path) -> None:
    row = {
        "sweep_id": "s",
        "config_key": "k",
        "category": "c",
        "estimator": "xa",
        "n": 3,
        "bits": pack_bits(np.ones(3, bool)),
    }
    pq.write_table(pa.Table.from_pylist([row]), partition / "part-examples.parquet")


def _other_sweep(partition: Path, name: str = "part-elsewhere.parquet") -> None:
    """A file of the results dataset, as xialpha writes it, of sweep "elsewhere"."""
    with tempfile.TemporaryDirectory() as scratch:
        path = open_store(f"{scratch}/store", create=True, writable=True).datasets.write_results(
            [result_row(52, sweep_id="elsewhere")]
        )
        shutil.copy(path, partition / name)


def _future_sequence(partition: Path) -> None:
    """A copy of a good file whose name claims a write sequence no store reaches (it would win every tie)."""
    shutil.copy(_first_file(partition), partition / "part-s9999999999999999-host-1-forged.parquet")


PLANTS = {
    "truncated": (_truncated, "unreadable"),
    "not-parquet": (_not_parquet, "unreadable"),
    "corrupt-page": (_corrupt_page, "unreadable"),
    "unknown-column": (_unknown_column, "foreign"),
    "wrong-type": (_wrong_type, "foreign"),
    "examples-in-results": (_examples_in_results, "foreign"),
    "other-sweep": (_other_sweep, "foreign"),
    "future-sequence": (_future_sequence, "foreign"),
}


@pytest.fixture
def store(tmp_path) -> ResultStore:
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(i, sweep_id="s") for i in range(3)])
    store.datasets.write_results([result_row(i, sweep_id="s", xa_error=0.5) for i in range(3, 5)])
    return store


@pytest.mark.parametrize("plant", PLANTS, ids=list(PLANTS))
def test_reads_skip_a_bad_file_with_one_warning_and_check_quarantines_it(store, plant):
    partition = Path(store.datasets.location.root) / "results" / "sweep_id=s"
    before = store.read_results_df(include_failed=True)
    good = set(partition.glob("*.parquet"))
    make, kind = PLANTS[plant]
    make(partition)
    (bad,) = set(partition.glob("*.parquet")) - good

    reader = open_store(store.uri, create=False, writable=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert reader.read_results_df(include_failed=True).equals(before)
        assert reader.done_keys("s") == set(before["config_key"])
        assert reader.sweeps()["rows_ok"].tolist() == [5]
        assert reader.datasets.read_results(filters=[("xa_error", ">", 0.1)]).num_rows == 2
    messages = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    assert len(messages) == 1 and f"results/sweep_id=s/{bad.name} ({kind}:" in messages[0], messages

    problems = reader.check()
    assert [(Path(p.path), p.kind) for p in problems] == [(bad, kind)]
    with pytest.warns(StoreWarning, match=bad.name):
        assert open_store(store.uri, create=True, writable=True).compact("results") == (
            3,
            2,
        )  # the good files merged, the bad one left alone
    assert bad.exists() and reader.read_results_df(include_failed=True).equals(before)
    merged = [pq.read_table(p) for p in partition.glob("*.parquet") if p != bad]
    assert sorted(merged[0]["config_key"].to_pylist()) == sorted(before["config_key"])  # no foreign row merged

    (moved,) = reader.quarantine(problems)
    assert (
        not bad.exists()
        and Path(moved) == Path(store.datasets.location.root) / "_quarantine" / "results" / "sweep_id=s" / bad.name
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert open_store(store.uri, create=True, writable=True).read_results_df(include_failed=True).equals(before)
        assert open_store(store.uri, create=True, writable=True).check() == []


def test_appending_to_a_row_typed_dataset_ignores_foreign_files(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.append("drift", [{"check_id": "c1", "psi": 0.2}])
    pq.write_table(
        pa.table({"check_id": ["c9"], "psi": ["high"], "created_at": pa.array([0], pa.timestamp("us", tz="UTC"))}),
        tmp_path / "store" / "drift" / "part-zz-typed.parquet",
    )
    pq.write_table(pa.table({"whatever": [1]}), tmp_path / "store" / "drift" / "part-zz-nokey.parquet")
    with pytest.warns(StoreWarning) as caught:
        store.datasets.append("drift", [{"check_id": "c2", "psi": 0.4}])
        assert store.datasets.read("drift")["psi"].to_pylist() == [0.2, 0.4]
    assert len(caught) == 1 and "part-zz-typed.parquet (foreign: column types disagree" in str(caught[0].message)
    assert "part-zz-nokey.parquet (foreign: no column(s) 'check_id', 'created_at')" in str(caught[0].message)


@pytest.fixture
def planted(tmp_path):
    """(spec path, store dir) of a finished sweep "files" with a truncated and a foreign file planted."""
    spec = tmp_path / "files.toml"
    spec.write_text(small_spec("files"))
    store_dir = tmp_path / "store"
    fill_store(load_spec(spec), open_store(str(store_dir), create=True, writable=True))
    partition = store_dir / "results" / "sweep_id=files"
    _truncated(partition)
    _unknown_column(partition)
    shutil.copy(partition / "part-extra.parquet", store_dir / "examples" / "sweep_id=files" / "part-results.parquet")
    return spec, store_dir


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv",
    [
        ("store", "ls", "{store}"),
        ("select", "{store}", "--sweep", "files"),
        ("report", "{store}", "--sweep", "files"),
        ("sweep", "{spec}", "--store", "{store}", "--quiet"),
        ("store", "compact", "{store}"),
    ],
    ids=["ls", "select", "report", "sweep-resume", "compact"],
)
def test_every_command_works_beside_a_truncated_and_a_foreign_file(planted, argv, capsys):
    spec, store_dir = planted
    keys = _quiet_done_keys(store_dir)
    code, out, err = _run(capsys, *(a.format(spec=spec, store=store_dir) for a in argv))
    assert code == 0, err
    warning_lines = [line for line in err.splitlines() if ": warning: store " in line]
    assert len(warning_lines) == 1 and err.count("Traceback") == 0, err
    for name in (
        "results/sweep_id=files/part-truncated.parquet",
        "results/sweep_id=files/part-extra.parquet",
        "examples/sweep_id=files/part-results.parquet",
    ):
        assert name in warning_lines[0]
    if argv[0] == "sweep":
        assert "0 rows stored, 4 skipped (already stored)" in out
    assert _quiet_done_keys(store_dir) == keys and len(keys) == 4


def _quiet_done_keys(store_dir: Path) -> set[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)
        return open_store(str(store_dir), create=True, writable=True).done_keys("files")


def test_store_check_lists_then_quarantines(planted, capsys):
    _, store_dir = planted
    code, out, err = _run(capsys, "store", "check", store_dir)
    assert code == 1 and not err
    lines = out.splitlines()
    assert lines[0] == (
        "results/sweep_id=files/part-extra.parquet: foreign: column(s) 'shoe_size' not in the results schema"
    )
    assert lines[1].startswith("results/sweep_id=files/part-truncated.parquet: unreadable: ")
    assert lines[2].startswith("examples/sweep_id=files/part-results.parquet: foreign: column(s) ")
    assert "--quarantine" in lines[3]
    code, out, _ = _run(capsys, "store", "check", store_dir, "--quarantine")
    assert code == 0 and "moved 3 file(s) under _quarantine/" in out
    assert sorted(p.name for p in (store_dir / "_quarantine").rglob("*.parquet")) == [
        "part-extra.parquet",
        "part-results.parquet",
        "part-truncated.parquet",
    ]
    code, out, err = _run(capsys, "select", store_dir, "--sweep", "files")
    assert code == 0 and "warning" not in err
    assert _run(capsys, "store", "check", store_dir)[0] == 0


def test_a_key_of_a_foreign_file_never_counts_as_done(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(0, sweep_id="s")])
    partition = tmp_path / "store" / "results" / "sweep_id=s"
    _other_sweep(partition, "part-zz.parquet")
    with pytest.warns(StoreWarning, match="rows of sweep 'elsewhere' in directory sweep_id=s"):
        assert store.done_keys("s") == {config_key(i=0)}


def test_a_path_too_long_to_write_is_the_users_error_not_a_write_error(tmp_path):
    """ENAMETOOLONG from a write was a StoreWriteError (exit 4, the code of a full disk); the store
    path the user gave makes it so: a UserError (exit 2) naming the length and the limit, the
    system's reason kept, and nothing left behind."""
    from xialpha.errors import StoreWriteError, UserError
    from xialpha.storage.location import Location

    location = Location(str(tmp_path / "store"))
    with pytest.raises(UserError) as raised:
        location.write_bytes(location.path("d" * 300, "file.json"), b"{}")
    assert not isinstance(raised.value, StoreWriteError)
    assert "a name in it is 300 bytes long, over this filesystem's limit of 255: File name too long" in str(
        raised.value
    )
    assert list(tmp_path.iterdir()) == []
