"""Stores on non-local filesystems: fsspec's in-memory filesystem and an S3 server (moto) on localhost."""

from __future__ import annotations

import datetime
import uuid

import numpy as np
import pyarrow.compute as pc
import pytest
from s3_server import s3_endpoint  # noqa: F401 (a fixture)
from store_rows import T0, result_row

from xialpha.errors import UserError
from xialpha.storage.opening import open_store
from xialpha.storage.rows import config_key
from xialpha.storage.store import ResultStore


def _exercise(uri: str) -> ResultStore:
    """Write, overwrite, read, compact and reopen a store at `uri`; return it."""
    store = open_store(uri, create=True, writable=True)
    store.datasets.write_results([result_row(i, created_at=T0) for i in range(4)])
    store.datasets.write_results([result_row(0, xa_error=0.5, created_at=T0 + datetime.timedelta(seconds=1))])
    store.datasets.write_results(
        [
            result_row(1, status="failed", error_message="oom", created_at=T0 + datetime.timedelta(seconds=1)),
            result_row(4, status="failed", error_message="oom"),
        ]
    )
    store.datasets.write_examples(
        [{"sweep_id": "sweep-1", "config_key": "k", "category": "earn", "estimator": "xa", "bits": np.ones(11, bool)}]
    )
    store.datasets.append(
        "certifications", [{"certification_id": "c1", "category": "earn", "sweep_id": "sweep-1", "bound": 0.1}]
    )

    before = store.datasets.read_results(include_failed=True)
    assert before.num_rows == 5
    assert store.done_keys("sweep-1") == {config_key(i=i) for i in range(4)}  # a failed retry hides no result
    assert before.filter(pc.field("config_key") == config_key(i=0))["xa_error"].to_pylist() == [0.5]
    assert store.compact() == (3, 1)
    assert store.datasets.read_results(include_failed=True).equals(before)

    reopened = open_store(uri, create=False, writable=True)
    assert reopened.read_examples(["k"])["k"].tolist() == [True] * 11
    assert reopened.datasets.read("certifications")["bound"].to_pylist() == [0.1]
    assert reopened.sweeps()[["rows_ok", "rows_failed"]].values.tolist() == [[4, 1]]
    return store


def test_memory_filesystem_store():
    uri = f"memory://xialpha-test-{uuid.uuid4().hex}"
    store = _exercise(uri)
    assert store.datasets.location.temp_files(store.datasets.location.root) == []  # temporary names were renamed away
    with pytest.raises(UserError, match="not a xialpha store"):
        open_store(f"memory://xialpha-absent-{uuid.uuid4().hex}", create=False, writable=True)


def test_s3_store_on_a_local_s3_server(s3_endpoint):
    # allow_delayed_open: small files go up in one PutObject (moto mishandles pyarrow's multipart completion)
    uri = f"s3://xialpha/stores/{uuid.uuid4().hex}?endpoint_override={s3_endpoint}&scheme=http&allow_delayed_open=true"
    store = _exercise(uri)
    assert store.datasets.location.is_object_store
    names = [info.base_name for info in store.datasets.location.entries(store.datasets.location.root, recursive=True)]
    assert not [name for name in names if name.endswith(".tmp")]  # object stores get no temporary names
    with pytest.raises(UserError, match="not a xialpha store"):
        open_store(uri.replace("/stores/", "/absent/"), create=False, writable=True)
    # claims: write-then-list, no exclusive create on S3 (see xialpha.storage.location.Location.claim)
    first = store.claims.claim("certifications", "test-set-x", {"certification_id": "c1"})
    assert first is not None and store.claims.claim("certifications", "test-set-x", {"certification_id": "c2"}) is None
    assert open_store(uri, create=False, writable=True).claims.claimed("certifications", "test-set-x") == {
        "certification_id": "c1"
    }
    store.claims.withdraw(first)
    assert store.claims.claimed("certifications", "test-set-x") is None
