"""A corpus file that changes or goes while a sweep reads it (issue 35, findings 1 and 5): its parts
were read from the new version under the plan (and the fingerprint) of the old one, and a file
deleted after planning raised a bare FileNotFoundError from library code. Now every part is read
with the file's size and modification time as planned, and a change or a removal is a UserError
naming the file (one line, exit 2 on the command line) before anything is fitted or stored."""

from __future__ import annotations

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
    assert loaded.summary.n_documents == 3000 and all(part.stamp[0] == str(path) for part in loaded.parts)
    assert loaded.fingerprint(None) == spec.corpus.load().fingerprint()
