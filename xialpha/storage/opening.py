"""`open_store`: the one way to open a result store, whatever holds it.

The API, the commands, the jobs and the plots open their store here and see its named queries
(`xialpha.storage.contract.StoreQueries`, with the test-set claims behind the `Claims` protocol),
never a backend's class or its layers. As in Optuna's storages (one typed contract, one factory,
one test suite run against every backend: tests/storage/test_store_queries.py), a new backend is
a class answering `StoreQueries` and a branch here on its URIs; no caller changes. Today one class
answers every URI: `ResultStore`, over a local directory or a pyarrow/fsspec filesystem (s3://,
gs://, memory://, ...).

This module imports no backend until a store is opened, so a command's parser can import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries


def open_store(uri: str, *, create: bool, writable: bool) -> StoreQueries:
    """The store at `uri`: a local path or a pyarrow/fsspec URI (credentials in it are never shown).

    create: an absent or empty directory is a new store, made at the first write (it reads as
        empty until then); without it the store must exist.
    writable: the caller may write. With `create`, opening checks that the store can be written
        (so a sweep fails before it computes anything); without `create` it checks nothing more,
        and a read-only store opens. writable=False tries no write at all (a dry run).
    UserError naming the store when it cannot be opened so: a file, a directory of other things, a
    damaged marker or one of a newer xialpha, absent without `create`, an object store that does
    not answer.
    """
    from xialpha.storage.store import ResultStore  # pandas and pyarrow: imported when a store is opened

    return ResultStore(uri, create=create, writable=writable)
