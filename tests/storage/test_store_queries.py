"""The store's named queries (`xialpha.storage.contract.StoreQueries`), written once against that
interface and run on a local store, fsspec's in-memory filesystem and a local S3 server (moto,
as in test_storage_remote), each opened by the one factory (`xialpha.storage.opening.open_store`):
typed rows in (as a sweep's tasks build them), DataFrames and records out; the Arrow layer
(`datasets`) and the claims (`claims`, a `Claims`) are parts of the store, not its methods, and
nothing outside xialpha/storage builds a store or reaches into its layers."""

from __future__ import annotations

import ast
import datetime
import inspect
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from s3_server import s3_endpoint  # noqa: F401 (a fixture)

import xialpha
from xialpha.errors import UserError
from xialpha.storage.claims import Claims
from xialpha.storage.contract import StoreQueries
from xialpha.storage.datasets import Datasets
from xialpha.storage.opening import open_store
from xialpha.storage.rows import BatchColumns, ExampleRow, FailedRow, ResultRow, RunRow, Training, pack_bits

T0 = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
BATCH = BatchColumns(
    "s1", "run-1", "fp-1", {"preprocessing_id": "pp-1", "pp_min_df": 2.0, "kernel": "linear", "kernel_id": "linear"}
)
TRAINING = Training(
    n=20, n_pos=5, n_sv=7, n_bounded_sv=3, stable=True, r_delta2=1.5, fit_seconds=0.01, estimate_seconds=0.02
)


@pytest.fixture(params=["local", "memory", "s3"])
def store(request, tmp_path) -> StoreQueries:
    name = f"xialpha-queries-{uuid.uuid4().hex}"
    uri = {
        "local": lambda: str(tmp_path / "store"),
        "memory": lambda: f"memory://{name}",
        # small files in one PutObject, as in test_storage_remote
        "s3": lambda: (
            f"s3://xialpha/{name}?endpoint_override={request.getfixturevalue('s3_endpoint')}"
            "&scheme=http&allow_delayed_open=true"
        ),
    }[request.param]()
    return open_store(uri, create=True, writable=True)


def _ok(i: int, category: str = "earn", **estimates) -> ResultRow:
    return ResultRow(
        BATCH,
        category,
        0.5 * (i + 1),
        1.0,
        1.0,
        f"key-{i}",
        TRAINING,
        {"xa_d_pos": 1, "xa_d_neg": 2, "xa_error": 0.15, **estimates},
        "host-a",
        "9.9.9",
    )


def _failed(i: int, message: str = "y: has a single class (-1); an SVM needs both -1 and +1") -> FailedRow:
    return FailedRow(BATCH, "grain", 0.5 * (i + 1), 1.0, 1.0, f"key-{i}", message, 20, 0)


def test_typed_result_rows_come_back_as_their_columns(store):
    store.write_results([_ok(0), _ok(1, "acq"), _failed(2)])
    ok = store.read_results_df("s1").set_index("config_key")
    assert sorted(ok.index) == ["key-0", "key-1"]
    row = ok.loc["key-0"]
    assert (row.sweep_id, row.run_id, row.data_fingerprint, row.status) == ("s1", "run-1", "fp-1", "ok")
    assert (row.preprocessing_id, row.pp_min_df, row.kernel, row.kernel_id) == ("pp-1", 2.0, "linear", "linear")
    assert (row.category, row.C, row.j, row.rho) == ("earn", 0.5, 1.0, 1.0)
    assert (row.n, row.n_pos, row.n_sv, row.n_bounded_sv, row.stable) == (20, 5, 7, 3, True)
    assert (row.r_delta2, row.fit_seconds, row.estimate_seconds) == (1.5, 0.01, 0.02)
    assert (row.xa_d_pos, row.xa_d_neg, row.xa_error) == (1, 2, 0.15)
    assert (row.worker, row.xialpha_version) == ("host-a", "9.9.9")
    assert pd.isna(row.span_error) and pd.isna(row.error_message)  # not computed; not failed

    every = store.read_results_df(
        "s1",
        include_failed=True,
        columns=["config_key", "status", "error_message", "n_pos", "worker", "xialpha_version"],
    )
    failed = every.set_index("config_key").loc["key-2"]
    assert (failed.status, failed.n_pos) == ("failed", 0) and "single class" in failed.error_message
    assert failed.worker and failed.xialpha_version  # a failed row without them gets the storing host's
    assert store.done_keys("s1") == {"key-0", "key-1"}  # failed keys are retried
    assert store.stored_keys("s1") == {"key-0", "key-1", "key-2"}
    summary = store.sweeps().iloc[0]
    assert (summary.sweep_id, summary.rows_ok, summary.rows_failed, summary.categories) == ("s1", 2, 1, 3)


def test_example_rows_come_back_as_indicator_vectors(store):
    errors = np.array([True, False, False, True, True, False, False, False, True, False, True])
    store.write_examples(
        [
            ExampleRow("s1", "key-0", "earn", "xa", errors.size, pack_bits(errors)),
            ExampleRow("s1", "key-0", "earn", "span", errors.size, pack_bits(~errors)),
        ]
    )
    assert store.read_examples(["key-0", "key-9"], "xa", sweep_id="s1")["key-0"].tolist() == errors.tolist()
    assert store.read_examples(["key-0"], "span")["key-0"].tolist() == (~errors).tolist()


def test_a_run_row_is_recorded_and_its_end_read(store):
    run = RunRow("s1", "run-1", "[sweep]\nid = 's1'\n", None, "fp-1", "earn,acq", "9.9.9", "xialpha sweep s.toml", T0)
    assert store.newest_run("s1") is None
    store.add_run(run)
    assert store.sweep_ended_at("s1") is None  # still running
    assert store.newest_run("s1") == run
    store.add_run(
        RunRow(
            **{
                **{name: getattr(run, name) for name in RunRow.__slots__},
                "finished_at": T0 + datetime.timedelta(minutes=5),
            }
        )
    )
    runs = store.runs("s1")
    assert runs["run_id"].tolist() == ["run-1"] and runs["command"].iloc[0] == "xialpha sweep s.toml"
    assert store.sweep_ended_at("s1") == T0 + datetime.timedelta(minutes=5)
    assert store.newest_run("s1").finished_at == T0 + datetime.timedelta(minutes=5)


def test_a_test_set_claim_and_its_heartbeat_live_in_the_claims(store):
    assert isinstance(store.claims, Claims)
    path = store.claims.claim_test_set("fp-test", {"certification_id": "c1"})
    assert path is not None and store.claims.claim_test_set("fp-test", {"certification_id": "c2"}) is None
    assert store.claims.test_set_claim("fp-test") == {"certification_id": "c1"}
    store.claims.beat_test_set("fp-test", {"at": "now"})
    assert store.claims.test_set_beat("fp-test") == {"at": "now"}
    store.claims.withdraw(path)
    assert store.claims.test_set_claim("fp-test") is None and store.claims.test_set_beat("fp-test") is None


def test_a_store_opened_to_read_sees_what_was_written_and_says_where_it_lives(store, tmp_path):
    store.write_results([_ok(0)])
    reader = open_store(store.uri, create=False, writable=False)
    assert reader.done_keys("s1") == {"key-0"}
    local = store.uri == str(tmp_path / "store")
    assert reader.local_directory() == (store.uri if local else None)  # what a report must not write into
    absent = store.uri.replace("xialpha-queries-", "xialpha-absent-") if not local else str(tmp_path / "absent")
    with pytest.raises(UserError, match="not a xialpha store"):
        open_store(absent, create=False, writable=False)
    assert open_store(absent, create=True, writable=False).sweeps().empty  # a dry run's store: absent, empty


def test_nothing_outside_the_storage_package_builds_a_store_or_reaches_into_its_layers():
    """One way to open a store (`open_store`), one contract (`StoreQueries`): a module of xialpha
    outside xialpha/storage that named the backend's class or its Arrow layer (`.datasets`) would
    have to change with a new backend."""
    package = Path(xialpha.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.parent.name == "storage":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            imported = [alias.name for alias in node.names] if isinstance(node, ast.ImportFrom) else []
            if named in ("ResultStore", "datasets") or "ResultStore" in imported:
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert not found, found


def test_tests_and_benchmarks_open_their_stores_as_users_do():
    """Tests and benchmarks open a store through `open_store`, as the API and the commands do, so
    that they would run unchanged over a new backend: a call of the backend's class would not."""
    root = Path(xialpha.__file__).parent.parent
    found = []
    for path in sorted([*(root / "tests").rglob("*.py"), *(root / "bench").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ResultStore":
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, found


def test_the_store_answers_every_named_query_and_composes_its_layers(store):
    named = {name for name, _ in inspect.getmembers(StoreQueries, inspect.isfunction) if not name.startswith("_")}
    missing = [name for name in named if getattr(type(store), name) is getattr(StoreQueries, name)]
    assert not missing, missing  # each query is answered, not left as the protocol's stub
    assert isinstance(store.datasets, Datasets) and not isinstance(store, Datasets)
    # the Arrow-level datasets and the claims are parts of the store, not inherited methods
    for low_level in (
        "read",
        "append",
        "read_results",
        "claim",
        "claimed",
        "beat",
        "last_beat",
        "withdraw",
        "claim_test_set",
        "location",
    ):
        assert not hasattr(store, low_level), low_level


def test_the_named_result_columns_are_the_schemas_descriptive_columns():
    from xialpha.estimators.registry import ESTIMATORS, NAMES
    from xialpha.storage.arrow_schema import RESULT_COLUMNS
    from xialpha.storage.schema import PP_PREFIX, ResultColumn, estimate_columns

    estimates = {name for prefix in NAMES for name in estimate_columns(prefix)}
    own = {column.name for estimator in ESTIMATORS for column in estimator.columns}
    descriptive = [c.name for c in RESULT_COLUMNS if c.name not in estimates | own and not c.name.startswith(PP_PREFIX)]
    assert [member.value for member in ResultColumn] == descriptive


def test_a_frame_keyed_by_result_columns_writes_plain_column_names(tmp_path):
    """Selection and reports key frames and rows by ResultColumn members: what they write (CSV,
    JSON, Parquet, text) must say the column's name ("C"), never the member ("ResultColumn.C")."""
    import json

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from xialpha.storage.schema import ResultColumn

    frame = pd.DataFrame({ResultColumn.C: [0.5], ResultColumn.CATEGORY: ["earn"]})
    assert frame.to_csv(index=False).splitlines()[0] == "C,category"
    assert json.loads(frame.to_json(orient="records")) == [{"C": 0.5, "category": "earn"}]
    assert json.dumps({ResultColumn.C: ResultColumn.KERNEL}) == '{"C": "kernel"}'
    assert (f"{ResultColumn.C}", str(ResultColumn.C), "%s" % ResultColumn.C) == ("C", "C", "C")
    table = pa.Table.from_pylist([{ResultColumn.C: 0.5}])
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "frame.parquet")
    assert table.schema.names == ["C"]
    assert pq.read_table(tmp_path / "frame.parquet").schema.names == ["C", "category"]
    assert frame["C"].iloc[0] == frame[ResultColumn.C].iloc[0] == 0.5
