"""ResultStore on a local directory: opening, validation, resume, newest-wins, evolution, datasets."""

from __future__ import annotations

import datetime
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from store_rows import T0, data_files, result_row

from xialpha.errors import UserError
from xialpha.storage.arrow_schema import RESULT_COLUMNS, SCHEMA_VERSION, results_schema
from xialpha.storage.location import Location
from xialpha.storage.opening import open_store
from xialpha.storage.rows import config_key, pack_bits, unpack_bits


@pytest.fixture
def store_dir(tmp_path):
    return tmp_path / "store"


@pytest.fixture
def store(store_dir):
    return open_store(str(store_dir), create=True, writable=True)


# --- opening -------------------------------------------------------------------------------------


def test_opening_creates_nothing_and_the_first_write_creates_the_store(store, store_dir):
    assert not store_dir.exists()
    assert store.datasets.read_results().num_rows == 0 and store.done_keys("sweep-1") == set() and store.sweeps().empty
    assert not store_dir.exists()
    store.datasets.write_results([result_row(0)])
    marker = json.loads((store_dir / "_xialpha_store.json").read_text())
    assert marker["schema_version"] == SCHEMA_VERSION == store.datasets.schema_version
    assert open_store(str(store_dir), create=False, writable=True).datasets.schema_version == SCHEMA_VERSION


def test_non_empty_directory_without_marker_is_not_a_store(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(UserError, match="not a xialpha store"):
        open_store(str(tmp_path), create=True, writable=True)
    assert not (tmp_path / "_xialpha_store.json").exists()


def test_a_directory_holding_only_a_marker_being_written_is_a_store_being_created(tmp_path):
    # what a writer opening the store sees while another creates it: the marker's temporary file, before its rename
    (tmp_path / "._xialpha_store.json.0123abcd.tmp").write_text("{")
    store = open_store(str(tmp_path), create=True, writable=True)
    store.datasets.write_results([result_row(0)])
    assert store.datasets.read_results().num_rows == 1
    assert json.loads((tmp_path / "_xialpha_store.json").read_text())["schema_version"] == SCHEMA_VERSION
    other = tmp_path / "other"
    other.mkdir()
    (other / ".notes.tmp").write_text("")  # any other hidden file is not ours
    with pytest.raises(UserError, match="not a xialpha store"):
        open_store(str(other), create=True, writable=True)


def test_a_marker_renamed_into_place_while_the_directory_is_listed_opens_the_store(tmp_path, monkeypatch):
    creator = open_store(str(tmp_path / "store"), create=True, writable=True)
    listing = Location.entries

    def rename_meanwhile(self, path, **kwargs):  # another process renames its marker into place first
        creator.datasets.create_if_absent()
        return listing(self, path, **kwargs)

    monkeypatch.setattr(Location, "entries", rename_meanwhile)
    assert open_store(str(tmp_path / "store"), create=True, writable=True).datasets.schema_version == SCHEMA_VERSION


def test_missing_store_is_not_created_without_create(tmp_path):
    with pytest.raises(UserError, match="not a xialpha store"):
        open_store(str(tmp_path / "absent"), create=False, writable=True)
    assert not (tmp_path / "absent").exists()


def test_newer_schema_version_is_refused(store_dir):
    store_dir.mkdir()
    (store_dir / "_xialpha_store.json").write_text(
        json.dumps({"format": "xialpha-store", "schema_version": SCHEMA_VERSION + 1})
    )
    with pytest.raises(UserError, match=r"schema version 2, newer") as info:
        open_store(str(store_dir), create=True, writable=True)
    assert "\n" not in str(info.value)


def test_corrupt_marker_is_refused(store_dir):
    store_dir.mkdir()
    (store_dir / "_xialpha_store.json").write_text("{not json")
    with pytest.raises(UserError, match="not a valid xialpha store marker"):
        open_store(str(store_dir), create=True, writable=True)


def test_unwritable_store_path_is_a_user_error_naming_it(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="cannot write") as info:
        open_store(str(blocker / "store"), create=True, writable=True)
    assert str(blocker / "store") in str(info.value)


def test_store_path_that_is_a_file_is_refused(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(UserError, match="is a file"):
        open_store(str(path), create=True, writable=True)


# --- writing and validation ----------------------------------------------------------------------


def test_rows_round_trip_with_defaults_filled(store):
    path = store.datasets.write_results([result_row(i) for i in range(6)])
    assert "/results/sweep_id=sweep-1/part-" in path
    table = store.datasets.read_results("sweep-1")
    assert table.schema.equals(results_schema(), check_metadata=False)
    assert table.num_rows == 6
    first = table.filter(pc.equal(table["config_key"], config_key(i=0))).to_pylist()[0]
    assert first["pp_min_df"] == 2.0 and first["xa_d_pos"] == 3 and first["gamma"] is None
    assert first["schema_version"] == SCHEMA_VERSION and first["worker"] and first["xialpha_version"]
    assert first["created_at"].tzinfo is not None


def test_unknown_column_is_named_and_nothing_is_written(store, store_dir):
    rows = [result_row(0), result_row(1, xa_eror=0.1, bogus=1)]
    with pytest.raises(UserError, match=r"results row 1: unknown column\(s\) 'xa_eror', 'bogus'"):
        store.datasets.write_results(rows)
    assert data_files(store_dir) == []


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("C", "1.0", r"column 'C' needs float, got str"),
        ("n", 1.5, r"column 'n' needs int, got float"),
        ("pp_lowercase", 1, r"column 'pp_lowercase' needs bool, got int"),
        ("stable", "yes", r"column 'stable' needs bool"),
        ("created_at", datetime.datetime(2026, 1, 1), r"column 'created_at' needs timezone-aware datetime"),
        ("degree", 2**40, r"column 'degree'"),
        ("status", "done", r"column 'status' is 'done'"),
        ("sweep_id", "../etc", r"sweep_id '../etc'"),
        ("kernel", None, r"required column 'kernel' is missing or null"),
    ],
)
def test_bad_value_is_named_and_nothing_is_written(store, store_dir, column, value, message):
    with pytest.raises(UserError, match=message) as info:
        store.datasets.write_results([result_row(0), result_row(1, **{column: value})])
    assert "\n" not in str(info.value)
    assert data_files(store_dir) == []


def test_failed_row_needs_an_error_message(store):
    with pytest.raises(UserError, match="error_message is null"):
        store.datasets.write_results([result_row(0, status="failed")])


def test_one_write_holds_one_sweep_and_unique_keys(store):
    with pytest.raises(UserError, match="2 sweep_id values"):
        store.datasets.write_results([result_row(0), result_row(1, sweep_id="other")])
    with pytest.raises(UserError, match="more than once"):
        store.datasets.write_results([result_row(0), result_row(0)])


def test_arrow_table_input_is_cast_and_checked(store):
    table = pa.Table.from_pylist([result_row(i) for i in range(3)])
    assert table.schema.field("n").type == pa.int64()
    store.datasets.write_results(table.set_column(table.schema.get_field_index("n"), "n", table["n"].cast(pa.int32())))
    assert store.datasets.read_results("sweep-1")["n"].type == pa.int64()
    as_text = table.set_column(table.schema.get_field_index("C"), "C", table["C"].cast(pa.string()))
    with pytest.raises(UserError, match="column 'C' needs double, got string"):
        store.datasets.write_results(as_text)
    with pytest.raises(UserError, match="unknown column"):
        store.datasets.write_results(table.append_column("extra", pa.array([1, 2, 3])))


# --- resume and newest wins ----------------------------------------------------------------------


def test_done_keys_counts_only_ok_rows(store):
    store.datasets.write_results([result_row(0), result_row(1), result_row(2, status="failed", error_message="boom")])
    store.datasets.write_results([result_row(9, sweep_id="sweep-2")])
    assert store.done_keys("sweep-1") == {config_key(i=0), config_key(i=1)}
    assert store.done_keys("sweep-2") == {config_key(i=9)}
    assert store.done_keys("never") == set()


def test_the_row_written_last_wins_whatever_its_created_at(store):
    store.datasets.write_results([result_row(0, xa_error=0.3, created_at=T0), result_row(1, created_at=T0)])
    later = T0 + datetime.timedelta(seconds=1)
    store.datasets.write_results([result_row(0, xa_error=0.1, created_at=later)])
    store.datasets.write_results([result_row(2, status="failed", error_message="first try", created_at=later)])
    store.datasets.write_results([result_row(2, status="failed", error_message="second try", created_at=T0)])
    # a row written afterwards wins even with an older created_at (a driver whose clock is behind)
    store.datasets.write_results([result_row(0, xa_error=0.9, created_at=T0 - datetime.timedelta(days=1))])
    all_rows = {r["config_key"]: r for r in store.datasets.read_results(include_failed=True).to_pylist()}
    assert len(all_rows) == 3
    assert all_rows[config_key(i=0)]["xa_error"] == 0.9
    assert all_rows[config_key(i=2)]["error_message"] == "second try"
    assert store.done_keys("sweep-1") == {config_key(i=0), config_key(i=1)}


def test_equal_created_at_is_broken_by_the_write_order(store):
    store.datasets.write_results([result_row(0, xa_error=0.3, created_at=T0)])
    store.datasets.write_results([result_row(0, xa_error=0.2, created_at=T0)])
    assert store.datasets.read_results()["xa_error"].to_pylist() == [0.2]


def test_filters_apply_after_the_newest_row_is_chosen(store):
    store.datasets.write_results([result_row(0, C=1.0, created_at=T0)])
    store.datasets.write_results([result_row(0, C=2.0, created_at=T0 - datetime.timedelta(seconds=1))])
    assert store.datasets.read_results(filters=[("C", "==", 1.0)]).num_rows == 0
    assert store.datasets.read_results(filters=pc.field("C") == 2.0).num_rows == 1
    with pytest.raises(UserError, match="filters"):
        store.datasets.read_results(filters=[("no_such_column", "==", 1)])


def test_columns_selection_and_dataframe(store):
    store.datasets.write_results([result_row(i) for i in range(4)])
    table = store.datasets.read_results(columns=["config_key", "C"])
    assert table.column_names == ["config_key", "C"]
    frame = store.datasets.read_results("sweep-1", filters=[("category", "==", "earn")]).to_pandas()
    assert set(frame["category"]) == {"earn"} and len(frame) == 2
    frame = store.read_results_df("sweep-1", columns=["config_key", "category"])
    assert list(frame.columns) == ["config_key", "category"] and len(frame) == 4
    with pytest.raises(UserError, match=r"unknown column\(s\) 'nope'"):
        store.datasets.read_results(columns=["nope"])


def test_old_file_without_a_later_column_still_reads(store, store_dir):
    """Schema evolution: a file written before `xa_ext_depth` existed reads it as null."""
    store.datasets.write_results([result_row(0, xa_ext_depth=3)])
    old_schema = pa.schema([f for f in results_schema() if f.name != "xa_ext_depth"])
    old_row = {c.name: result_row(1).get(c.name) for c in RESULT_COLUMNS if c.name != "xa_ext_depth"}
    old_row.update(created_at=T0, schema_version=1, worker="old-host", xialpha_version="0.0.1")
    directory = store_dir / "results" / "sweep_id=sweep-1"
    pq.write_table(
        pa.Table.from_pylist([old_row], schema=old_schema), directory / "part-20250101T000000000000Z-old.parquet"
    )
    depths = {r["config_key"]: r["xa_ext_depth"] for r in store.datasets.read_results().to_pylist()}
    assert depths == {config_key(i=0): 3, config_key(i=1): None}


def test_sweeps_summary(store):
    store.datasets.write_results([result_row(i) for i in range(5)])
    store.datasets.write_results([result_row(5, status="failed", error_message="x")])
    store.datasets.write_results([result_row(0, sweep_id="b", created_at=T0)])
    summary = store.sweeps().set_index("sweep_id")
    assert summary.loc["sweep-1", "rows_ok"] == 5 and summary.loc["sweep-1", "rows_failed"] == 1
    assert summary.loc["sweep-1", "categories"] == 3 and summary.loc["sweep-1", "configs"] == 4
    assert summary.loc["b", "first_created_at"] == summary.loc["b", "last_created_at"] == T0
    assert list(summary.index) == ["b", "sweep-1"]


# --- config keys and indicator bits --------------------------------------------------------------


def test_config_key_is_stable_and_canonical():
    key = config_key(C=0.5, kernel="rbf", params={"gamma": 1, "degree": None}, j=np.int64(2))
    assert key == config_key(j=2.0, params={"degree": None, "gamma": 1.0}, kernel="rbf", C=float("0.50"))
    assert len(key) == 32 and int(key, 16) >= 0
    assert key != config_key(C=0.5, kernel="rbf", params={"gamma": 1, "degree": None}, j=3)
    assert config_key(flag=True) != config_key(flag=1)
    assert config_key(x=-0.0) == config_key(x=0)
    assert config_key(a=1) == "c29a44abc114a1d75486434c013102c9"  # frozen: stored keys must not drift
    with pytest.raises(UserError, match="config_key field 'when'"):
        config_key(when=datetime.date(2026, 1, 1))


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 1000])
def test_bits_round_trip_little_endian(n):
    rng = np.random.default_rng(n)
    vector = rng.random(n) < 0.3
    packed = pack_bits(vector)
    assert len(packed) == math.ceil(n / 8)
    np.testing.assert_array_equal(unpack_bits(packed, n), vector)
    if n >= 9:
        vector = np.zeros(n, bool)
        vector[[0, 8]] = True
        assert pack_bits(vector)[:2] == b"\x01\x01"


def test_examples_round_trip_by_config_key(store):
    a, b = np.array([1, 0, 0, 1, 1, 0, 0, 0, 1], bool), np.zeros(20, bool)
    store.datasets.write_examples(
        [
            {"sweep_id": "sweep-1", "config_key": "k1", "category": "earn", "estimator": "xa", "bits": a},
            {
                "sweep_id": "sweep-1",
                "config_key": "k2",
                "category": "earn",
                "estimator": "xa",
                "bits": pack_bits(b),
                "n": 20,
            },
            {"sweep_id": "sweep-1", "config_key": "k1", "category": "earn", "estimator": "loo", "bits": ~a},
        ]
    )
    newer = np.ones(9, bool)
    store.datasets.write_examples(
        [{"sweep_id": "sweep-1", "config_key": "k1", "category": "earn", "estimator": "xa", "bits": newer}]
    )
    got = store.read_examples(["k1", "k2", "missing"])
    assert set(got) == {"k1", "k2"}
    np.testing.assert_array_equal(got["k1"], newer)
    np.testing.assert_array_equal(got["k2"], b)
    np.testing.assert_array_equal(store.read_examples(["k1"], estimator="loo")["k1"], ~a)


def test_bad_example_rows_are_refused(store):
    row = {"sweep_id": "s", "config_key": "k", "category": "c", "estimator": "xa"}
    with pytest.raises(UserError, match="bits has 1 bytes, n=20 needs 3"):
        store.datasets.write_examples([{**row, "bits": b"\x00", "n": 20}])
    with pytest.raises(UserError, match="column 'estimator' is 'guess'"):
        store.datasets.write_examples([{**row, "estimator": "guess", "bits": np.ones(3, bool)}])
    with pytest.raises(UserError, match="n=4 but bits has 3"):
        store.datasets.write_examples([{**row, "bits": np.ones(3, bool), "n": 4}])


# --- generic datasets ----------------------------------------------------------------------------


def test_generic_dataset_append_and_read_newest_per_id(store, store_dir):
    store.datasets.append(
        "selections", [{"selection_id": "s1", "category": "earn", "sweep_id": "sweep-1", "score": 0.5, "chosen": "k1"}]
    )
    store.datasets.append(
        "selections",
        pa.table(
            {"selection_id": ["s1", "s2"], "category": ["earn"] * 2, "sweep_id": ["sweep-1"] * 2, "score": [0.7, 0.1]}
        ),
    )
    store.datasets.append("drift", [{"check_id": "d1", "psi": 0.2}])
    table = store.datasets.read("selections")
    assert table["selection_id"].to_pylist() == ["s1", "s2"]
    assert table["score"].to_pylist() == [0.7, 0.1] and table["chosen"].to_pylist() == [None, None]
    assert store.datasets.read("selections", filters=[("score", ">", 0.5)]).num_rows == 1
    assert store.datasets.read("drift")["psi"].to_pylist() == [0.2]
    assert list((store_dir / "selections").iterdir())[0].name == "sweep_id=sweep-1"


def test_generic_dataset_refuses_bad_rows(store):
    with pytest.raises(UserError, match="column 'tags' has type list"):
        store.datasets.append("selections", [{"selection_id": "s1", "category": "earn", "tags": ["a", "b"]}])
    with pytest.raises(UserError, match="column 'check_id' is missing or null"):
        store.datasets.append("drift", [{"psi": 0.2}])
    with pytest.raises(UserError, match="naive timestamps"):
        store.datasets.append("drift", pa.table({"check_id": ["c"], "at": pa.array([datetime.datetime(2026, 1, 1)])}))
    store.datasets.append("drift", [{"check_id": "c1", "psi": 0.2}])
    with pytest.raises(UserError, match="do not match the stored column types"):
        store.datasets.append("drift", [{"check_id": "c2", "psi": "high"}])
    with pytest.raises(UserError, match="use write_results"):
        store.datasets.append("results", [result_row(0)])
    with pytest.raises(UserError, match="dataset: must be one of results"):
        store.datasets.read("nope")


def test_reading_a_dataset_nothing_was_appended_to_gives_an_empty_table(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    assert store.datasets.read("drift").num_rows == 0
    assert store.datasets.read("selections", filters=[("x", ">", 1)]).num_rows == 0


def test_a_column_that_was_all_null_in_one_append_still_reads_and_filters(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.append("selections", [{"selection_id": "a", "category": "earn", "note": None, "x": 1}])
    store.datasets.append("selections", [{"selection_id": "b", "category": "earn", "note": None, "x": 2}])
    assert store.datasets.read("selections", filters=[("x", ">", 1)]).column("selection_id").to_pylist() == ["b"]
    store.datasets.append("selections", [{"selection_id": "c", "category": "earn", "note": "typed now", "x": 3}])
    table = store.datasets.read("selections")
    assert table.column("note").to_pylist() == [None, None, "typed now"]
