"""A command that fails leaves the store byte-for-byte as it was, and creates none; a full disk
is exit code 4 with its own message and leaves no temporary file (issue 16, defect 3).

`tree_digest` is the helper other tests use to compare a store before and after a command.
"""

from __future__ import annotations

import errno
import os
import subprocess
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from store_rows import result_row
from swept import SELECTION_SPEC as SELECT_SPEC
from swept import small_spec, tree_digest

from xialpha.cli import main
from xialpha.errors import StoreWriteError
from xialpha.storage import location as location_module
from xialpha.storage.opening import open_store


def _spec(tmp_path: Path, sweep_id: str = "keep", categories: str = "top_k = 2") -> Path:
    path = tmp_path / f"spec-{uuid.uuid4().hex[:6]}.toml"
    path.write_text(small_spec(sweep_id, categories=categories))
    return path


def _run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def selectable(tmp_path_factory, selection_store):
    """A store with a finished sweep "sel" (results, examples and its spec), filled in-process."""
    return selection_store(tmp_path_factory.mktemp("selectable"))


def test_tree_digest_sees_every_change(tmp_path):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    assert tree_digest(tmp_path / "store") is None
    store.datasets.write_results([result_row(0)])
    first = tree_digest(tmp_path / "store")
    assert tree_digest(tmp_path / "store") == first
    store.datasets.append("drift", [{"check_id": "c"}])
    assert tree_digest(tmp_path / "store") != first


@pytest.mark.parametrize("refit", ["exists", "under-a-file", "refit-fails"])
def test_select_refit_that_fails_stores_no_selection(selectable, tmp_path, capsys, refit):
    target = tmp_path / "model"
    extra = []
    if refit == "exists":
        target.mkdir()
        (target / "keep.txt").write_text("mine")
    elif refit == "under-a-file":
        (tmp_path / "file").write_text("x")
        target = tmp_path / "file" / "model"
    else:  # the training data no longer matches the sweep's fingerprint
        other = tmp_path / "other.toml"
        other.write_text(SELECT_SPEC.replace("seed = 3", "seed = 4"))
        extra = ["--spec", other]
    before = tree_digest(selectable)
    code, _, err = _run(capsys, "select", selectable, "--sweep", "sel", "--refit", target, *extra)
    assert code == 2 and err.startswith("xialpha select: error: ") and err.count("\n") == 1, err
    assert {"exists": "already exists", "under-a-file": "cannot create", "refit-fails": "fingerprint"}[refit] in err
    assert tree_digest(selectable) == before
    assert refit == "exists" or not os.path.lexists(target)


def test_select_refit_that_succeeds_stores_the_selection(selectable, tmp_path, capsys):
    code, out, _ = _run(capsys, "select", selectable, "--sweep", "sel", "--refit", tmp_path / "model")
    assert code == 0 and "stored selection sel-" in out and (tmp_path / "model" / "manifest.json").is_file()


@pytest.mark.parametrize("case", ["dry-run", "dot", "dot-dot", "unknown-category"])
def test_a_sweep_that_stops_before_computing_creates_no_store(tmp_path, capsys, case):
    spec = {
        "dry-run": lambda: _spec(tmp_path),
        "dot": lambda: _spec(tmp_path, sweep_id="."),
        "dot-dot": lambda: _spec(tmp_path, sweep_id=".."),
        "unknown-category": lambda: _spec(tmp_path, categories='names = ["nope"]'),
    }[case]()
    for store in (tmp_path / "new-store", tmp_path / "deeper" / "new-store"):
        code, out, err = _run(
            capsys, "sweep", spec, "--store", store, "--quiet", *(["--dry-run"] if case == "dry-run" else [])
        )
        assert code == (0 if case == "dry-run" else 2), err
        assert ("stored as 4 rows" in out) if case == "dry-run" else err.count("\n") == 1
        assert not os.path.lexists(store) and not os.path.lexists(tmp_path / "deeper")


def test_a_sweep_that_stops_before_computing_leaves_an_existing_store_unchanged(selectable, tmp_path, capsys):
    before = tree_digest(selectable)
    assert _run(capsys, "sweep", _spec(tmp_path), "--store", selectable, "--dry-run")[0] == 0
    assert _run(capsys, "sweep", _spec(tmp_path, categories='names = ["nope"]'), "--store", selectable)[0] == 2
    assert _run(capsys, "sweep", _spec(tmp_path, sweep_id=".."), "--store", selectable)[0] == 2
    assert tree_digest(selectable) == before


# --- a full disk --------------------------------------------------------------------------------


def _fail_after(monkeypatch, writes: int, fail) -> list[str]:
    """Make every data file write after the first `writes` call `fail(sink)`; return the written paths."""
    original = location_module.Location.write_table
    written = []

    def write_table(self, directory, table, name):
        if len(written) >= writes:
            original_write = location_module.pq.write_table
            monkeypatch.setattr(location_module.pq, "write_table", lambda t, sink, **kw: fail(sink))
            try:
                return original(self, directory, table, name)
            finally:
                monkeypatch.setattr(location_module.pq, "write_table", original_write)
        written.append(original(self, directory, table, name))
        return written[-1]

    monkeypatch.setattr(location_module.Location, "write_table", write_table)
    return written


def _half_then_enospc(sink):
    sink.write(b"PAR1" + b"\0" * 4096)
    raise OSError(errno.ENOSPC, "No space left on device")


def _temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def test_a_full_disk_while_writing_removes_the_temporary_file(tmp_path, monkeypatch):
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(0)])
    _fail_after(monkeypatch, 0, _half_then_enospc)
    with pytest.raises(
        StoreWriteError, match=r"disk full \(no space left on device\) writing .*results/sweep_id=sweep-1/part-s"
    ):
        store.datasets.write_results([result_row(1)])
    assert _temp_files(tmp_path / "store") == []
    assert open_store(store.uri, create=True, writable=True).datasets.read_results().num_rows == 1


@pytest.mark.cluster
def test_a_full_disk_during_a_sweep_is_exit_4_and_keeps_the_stored_batches(tmp_path, capsys, monkeypatch):
    written = _fail_after(monkeypatch, 3, _half_then_enospc)  # the spec row, then a batch's examples and results
    store = tmp_path / "store"
    code, out, err = _run(capsys, "sweep", _spec(tmp_path), "--store", store, "--quiet")
    assert code == 4, err
    assert err.startswith("xialpha sweep: error: store ") and "disk full" in err and err.count("\n") == 1, err
    assert _temp_files(store) == []
    monkeypatch.undo()
    kept = open_store(str(store), create=True, writable=True).datasets.read_results("keep").num_rows
    (results,) = [path for path in written if "/results/" in path]
    assert len(written) == 3 and kept == pq.read_metadata(results).num_rows >= 1  # the batch stored before
    code, out, _ = _run(capsys, "sweep", _spec(tmp_path), "--store", store, "--quiet")
    assert code == 0 and f"{4 - kept} rows stored, {kept} skipped" in out


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs mounted at tmp_path/disk (skips where mounting is not allowed)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'not root'}); the monkeypatched tests cover it"
        )
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(disk: Path) -> None:
    """Write a filler file until the device is full."""
    with open(disk / "filler", "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def test_a_real_full_disk_is_reported_as_such_and_leaves_no_temporary_file(small_disk):
    store = open_store(str(small_disk / "store"), create=True, writable=True)
    store.datasets.write_results([result_row(i) for i in range(5)])
    _fill(small_disk)
    with pytest.raises(StoreWriteError, match="disk full"):
        store.datasets.write_results([result_row(i) for i in range(5, 400)])
    assert _temp_files(small_disk) == []
    (small_disk / "filler").unlink()
    assert open_store(store.uri, create=True, writable=True).datasets.read_results().num_rows == 5


@pytest.mark.cluster
def test_a_real_full_disk_during_a_sweep_is_exit_4(small_disk, tmp_path, capsys, monkeypatch):
    original = location_module.Location.write_table
    calls = []

    def write_then_fill(self, directory, table, name):
        calls.append(original(self, directory, table, name))
        if len(calls) == 3:
            _fill(small_disk)
        return calls[-1]

    monkeypatch.setattr(location_module.Location, "write_table", write_then_fill)
    code, _, err = _run(capsys, "sweep", _spec(tmp_path), "--store", small_disk / "store", "--quiet")
    assert code == 4 and "disk full" in err and err.count("\n") == 1, err
    assert _temp_files(small_disk) == []
    (small_disk / "filler").unlink()
    (results,) = [path for path in calls if "/results/" in path]  # the batch written before the disk filled
    assert open_store(str(small_disk / "store"), create=True, writable=True).datasets.read_results("keep").num_rows == (
        pq.read_metadata(results).num_rows
    )
