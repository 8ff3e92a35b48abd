"""A corpus file that changes or goes while a sweep reads it (issue 35, findings 1 and 5): its parts
were read from the new version under the plan (and the fingerprint) of the old one, and a file
deleted after planning raised a bare FileNotFoundError from library code. Now every part is read
with the file's size and modification time as planned, and a change or a removal is a UserError
naming the file (one line, exit 2 on the command line) before anything is fitted or stored."""

from __future__ import annotations

import hashlib
import os

import pytest
from distributed import Client

import xialpha.corpora.table as table_module
import xialpha.jobs.data as data
from xialpha.errors import UserError
from xialpha.spec.sweep import parse_spec


@pytest.fixture(scope="module")
def client():
    with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        yield client


def _table(tmp_path, monkeypatch, word: str = "wheat"):
    path = tmp_path / "news.csv"
    path.write_text("id,text,label\n" + "".join(f"n{i},story {i} about {word},grain\n" for i in range(3000)))
    monkeypatch.setattr(table_module, "PART_BYTES", 4096)  # many parts; the workers are threads of this process
    return path, parse_spec(f'[corpus]\nloader = "table"\npath = "{path}"\nid_column = "id"\n', source="s.toml")


def _after_planning(monkeypatch, change):
    """Run `change()` once the parts are planned (cut into byte ranges), before they are read."""
    refine = data.refine_part

    def refine_then_change(part):
        pieces = refine(part)
        change()
        return pieces

    monkeypatch.setattr(data, "refine_part", refine_then_change)


def test_a_file_rewritten_after_planning_is_named_not_read(client, tmp_path, monkeypatch):
    path, spec = _table(tmp_path, monkeypatch)
    _after_planning(monkeypatch, lambda: path.write_text(path.read_text().replace("wheat", "maize")))
    with pytest.raises(UserError, match=rf"{path}: changed while the corpus was read \(modified\)"):
        data.load_on_cluster(client, spec.corpus, "rewritten")


def test_a_file_grown_after_planning_is_named_with_its_sizes(client, tmp_path, monkeypatch):
    path, spec = _table(tmp_path, monkeypatch)
    size = path.stat().st_size
    _after_planning(monkeypatch, lambda: path.write_text(path.read_text() + "n9999,one more,grain\n"))
    grown = rf"\({size:,} -> {size + 21:,} bytes\)"
    with pytest.raises(UserError, match=rf"{path}: changed while the corpus was read {grown}"):
        data.load_on_cluster(client, spec.corpus, "grown")


def test_a_file_removed_after_planning_is_named(client, tmp_path, monkeypatch):
    path, spec = _table(tmp_path, monkeypatch)
    _after_planning(monkeypatch, path.unlink)
    with pytest.raises(UserError, match=rf"{path}: was removed after the corpus was planned"):
        data.load_on_cluster(client, spec.corpus, "removed")


def test_an_unchanged_file_reads_as_before(client, tmp_path, monkeypatch):
    path, spec = _table(tmp_path, monkeypatch)
    loaded = data.load_on_cluster(client, spec.corpus, "unchanged")
    assert loaded.summary.n_documents == 3000 and all(part.stamp.path == str(path) for part in loaded.parts)
    assert loaded.fingerprint(None) == spec.corpus.load().fingerprint()


def _rewrite_keeping_size_and_mtime(path):
    """The same number of bytes, other words, and the modification time put back to the nanosecond."""
    before = path.stat()
    text = path.read_text()
    path.write_text(text.replace("wheat", "maize"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns


@pytest.mark.cluster
def test_a_same_size_rewrite_with_its_mtime_put_back_is_refused_and_nothing_stored(tmp_path, monkeypatch, capsys):
    """Size and mtime alone let it through (read under the planned fingerprint): one line, exit 2,
    no row stored."""
    from distributed import LocalCluster

    from xialpha.cli import main
    from xialpha.storage.opening import open_store

    path, _ = _table(tmp_path, monkeypatch)
    path.write_text(  # two categories: the old code swept it and stored rows, exit 0
        "id,text,label\n" + "".join(f"n{i},story {i} about wheat,{('grain', 'oil')[i % 2]}\n" for i in range(3000))
    )
    _after_planning(monkeypatch, lambda: _rewrite_keeping_size_and_mtime(path))
    cluster = LocalCluster(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None, protocol="tcp", host="127.0.0.1"
    )
    with cluster:  # its workers are threads of this process, which the monkeypatch reaches
        spec = tmp_path / "s.toml"
        spec.write_text(
            f'[sweep]\nid = "same-size"\n[corpus]\nloader = "table"\npath = "{path}"\nid_column = "id"\n'
            f'[svm]\nC = [1.0]\n[cluster]\naddress = "{cluster.scheduler_address}"\n',
            encoding="utf-8",
        )
        capsys.readouterr()
        code = main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.endswith(
        f": {path}: changed while the corpus was read (modified); start again once it stays unchanged\n"
    ), err
    store = tmp_path / "store"
    assert not store.exists() or open_store(str(store), create=False, writable=True).read_results_df("same-size").empty


def test_the_content_digest_finds_a_change_the_times_do_not_show(tmp_path):
    """Where a filesystem keeps no ctime (or coarse times), the CRC-32 of the content read is what
    differs: here a stamp with the file's times as they are now and the digest of other content."""
    from dataclasses import replace

    from xialpha.corpora.stamps import check, stamp_of

    path = tmp_path / "news.csv"
    path.write_text("id,text\n1,wheat\n")
    planned = stamp_of(str(path))
    path.write_text("id,text\n1,maize\n")
    now = stamp_of(str(path))
    assert planned.digest != now.digest
    check(now, content=True)  # unchanged
    with pytest.raises(UserError, match=r"changed while the corpus was read \(modified\)"):
        check(replace(now, digest=planned.digest), content=True)
    check(replace(now, digest=planned.digest))  # before a read only times and size are compared


def test_a_file_of_an_object_store_is_checked_by_its_version(monkeypatch):
    """fsspec URIs had no stamp at all: a rewritten object was read under the planned fingerprint.
    Now its size and the version info() reports (here an ETag; memory:// gives its creation time)."""
    import importlib

    from fsspec.implementations.memory import MemoryFileSystem

    from xialpha.corpora.stamps import check, stamp_of

    class Tagged(MemoryFileSystem):
        protocol = ("tagged",)
        store: dict = {}
        pseudo_dirs = [""]

        def info(self, path, **kwargs):
            found = super().info(path, **kwargs)
            if found["type"] == "file":
                found["ETag"] = hashlib.md5(self.cat_file(path)).hexdigest()
            return found

    monkeypatch.setitem(importlib.import_module("fsspec.registry")._registry, "tagged", Tagged)
    for uri in ("tagged://corpus/news.csv", "memory://corpus/news.csv"):
        import fsspec

        fsspec.filesystem(uri.split(":")[0]).pipe(uri, b"id,text\n1,wheat\n")
        planned = stamp_of(uri)
        assert planned is not None and planned.times, uri
        check(planned, content=True)
        fsspec.filesystem(uri.split(":")[0]).pipe(uri, b"id,text\n1,maize\n")
        with pytest.raises(UserError, match=rf"{uri}: changed while the corpus was read \(modified\)"):
            check(planned)
