"""Exclusive claims (`ResultStore.claims`): of concurrent claims of one name at most one stands,
and on a local store exactly one; a withdrawn claim leaves the store as it was."""

from __future__ import annotations

import threading
import uuid

import pytest
from store_rows import result_row
from swept import tree_digest

from xialpha.errors import UserError
from xialpha.storage.opening import open_store


def _race(uri: str, name: str, claimants: int) -> list[str | None]:
    """`claimants` threads, each with its own store object, claim `name` at the same moment.

    The store objects are opened before the race: fsspec's memory filesystem hands every reader
    of a file the same file object (one shared position), so concurrent opens of the store
    marker would read garbage there. The claims themselves only list, write and delete.
    """
    stores = [open_store(uri, create=True, writable=True) for _ in range(claimants)]
    barrier = threading.Barrier(claimants, timeout=60)
    results: list[str | None] = [None] * claimants
    errors: list[BaseException] = []

    def claim(index: int) -> None:
        try:
            barrier.wait()
            results[index] = stores[index].claims.claim("certifications", name, {"certification_id": f"c{index}"})
        except BaseException as exc:  # re-raised in the test's thread below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(claimants)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def test_on_a_local_store_exactly_one_of_concurrent_claims_stands(tmp_path):
    uri = str(tmp_path / "store")
    open_store(uri, create=True, writable=True).datasets.write_results([result_row(0)])
    for round_ in range(20):
        results = _race(uri, f"test-set-{round_}", claimants=6)
        (winner,) = [r for r in results if r is not None]
        holder = open_store(uri, create=True, writable=True).claims.claimed("certifications", f"test-set-{round_}")
        assert holder == {"certification_id": f"c{results.index(winner)}"}


def test_a_claim_creates_an_absent_store_and_withdrawing_it_leaves_the_store_as_it_was(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    claim = store.claims.claim("certifications", "test-set-a", {"certification_id": "c1"})
    assert claim and (tmp_path / "store" / "_xialpha_store.json").is_file()
    assert store.claims.claim("certifications", "test-set-a", {"certification_id": "c2"}) is None
    assert store.claims.claimed("certifications", "test-set-b") is None
    before = tree_digest(tmp_path / "store")
    other = store.claims.claim("certifications", "test-set-b", {"certification_id": "c3"})
    store.claims.withdraw(other)
    assert tree_digest(tmp_path / "store") == before
    assert store.datasets.read("certifications").num_rows == 0 and store.check() == []  # claims are no data files


def test_claim_names_are_checked(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    for name in ("", "../x", "a/b", "x" * 129):
        with pytest.raises(UserError, match="claim name"):
            store.claims.claim("certifications", name, {})


def test_on_other_filesystems_concurrent_claims_never_both_stand():
    uri = f"memory://xialpha-claims-{uuid.uuid4().hex}"
    open_store(uri, create=True, writable=True).datasets.write_results([result_row(0)])
    store = open_store(uri, create=True, writable=True)
    first = store.claims.claim("certifications", "sequential", {"certification_id": "c1"})
    assert first is not None and store.claims.claim("certifications", "sequential", {"certification_id": "c2"}) is None
    assert store.claims.claimed("certifications", "sequential") == {"certification_id": "c1"}
    for round_ in range(10):
        results = _race(uri, f"raced-{round_}", claimants=4)
        standing = [r for r in results if r is not None]
        assert len(standing) <= 1
        holder = store.claims.claimed("certifications", f"raced-{round_}")
        assert (holder is None) == (not standing)  # losers leave nothing behind


def test_two_saves_of_one_selection_at_once_store_it_once(tmp_path):
    """Issue 48.9: two `select --save` made the same selection (each under a new id) before either
    stored it; the second stores it under the id the first claimed, and reads show one selection."""
    from store_rows import result_rows

    from xialpha.reports.labels import sweep_labels
    from xialpha.selection.options import SelectionOptions
    from xialpha.selection.workflow import select_sweep
    from xialpha.selection_saving import store_selection

    uri = str(tmp_path / "store")
    open_store(uri, create=True, writable=True).datasets.write_results(result_rows())
    first, second = (
        select_sweep(open_store(uri, create=True, writable=True), "r1", SelectionOptions(estimator="xa", save=True))
        for _ in "ab"
    )
    assert first.to_store and second.to_store and first.selection.selection_id != second.selection.selection_id
    labels = sweep_labels(first.results)
    saved = [store_selection(open_store(uri, create=True, writable=True), chosen, labels) for chosen in (first, second)]
    assert [done.selection_id for done in saved] == [first.selection.selection_id] * 2
    stored = open_store(uri, create=True, writable=True).selections()
    assert set(stored["selection_id"]) == {first.selection.selection_id} and len(stored) == len(first.frame)
