"""`xialpha sweep --dry-run` on a directory corpus reads no document but a small sample (issue 49.6:
17-28 s on 8,000 files): its counts come from the file listing, and no cluster is started for it."""

from __future__ import annotations

import pytest

from xialpha.corpora import sources

CATEGORIES = ("alt.atheism", "rec.autos", "sci.space")
PER_FOLDER = {"train": 120, "test": 80}  # 600 files in all, three times the survey's sample


def write_news(root) -> int:
    """A 20 Newsgroups "bydate"-like tree: <split>/<category>/<file>; the number of files."""
    n = 0
    for split, count in PER_FOLDER.items():
        for category in CATEGORIES:
            folder = root / f"news-bydate-{split}" / category
            folder.mkdir(parents=True)
            for i in range(count):
                n += 1
                (folder / str(1000 + i)).write_text(f"{category} message {i} words {n} more words", encoding="utf-8")
    return n


@pytest.fixture()
def reads(monkeypatch) -> list[str]:
    """The files whose bytes are read from now on (every loader reads a file through `read_regular_file`)."""
    read: list[str] = []
    original = sources.read_regular_file

    def counted(file, name):
        read.append(str(file))
        return original(file, name)

    monkeypatch.setattr(sources, "read_regular_file", counted)
    monkeypatch.setattr("xialpha.corpora.directory.read_regular_file", counted, raising=False)
    return read


def test_a_dry_run_counts_a_directory_from_its_listing_and_reads_only_a_sample(tmp_path, capsys, reads, monkeypatch):
    from xialpha.cli import main
    from xialpha.jobs import cluster

    n_files = write_news(tmp_path / "news")
    spec = tmp_path / "news.toml"
    spec.write_text(
        f'[sweep]\nid = "news"\n[corpus]\nloader = "directory"\npath = "{tmp_path / "news"}"\n'
        'train_split = "train"\ntest_split = "test"\n[svm]\nC = [1.0, 10.0]\n[cluster]\nworkers = 2\n',
        encoding="utf-8",
    )

    connected = []
    original = cluster.connect

    def recorded(*args, **kwargs):
        connected.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(cluster, "connect", recorded)
    assert main(["sweep", str(spec), "--store", str(tmp_path / "store"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert 0 < len(reads) <= n_files // 3, f"{len(reads)} of {n_files} files read"
    assert not connected, "a dry run of a listed corpus started a cluster"
    assert "2 configs x 3 categories = 6 fits" in out
    assert "3 categories, 360 training documents" in out
    assert "corpus: 600 documents in 2 parts, counted from its file listing, not read" in out
    assert "estimated from 200 documents" in out and "(2 workers)" in out
    assert not (tmp_path / "store").exists()


def test_a_surveyed_corpus_is_summarised_as_its_reading_is(tmp_path):
    """The survey's split sizes and category counts, the validation split carved, equal the read corpus's."""
    from xialpha.corpora import load_directory
    from xialpha.corpora.corpus import carve_validation
    from xialpha.corpora.parted import survey
    from xialpha.corpora.parts import summarize

    write_news(tmp_path / "news")
    surveyed = survey("directory", {"path": str(tmp_path / "news")}, "train", 0.25, 3)
    assert surveyed is not None and len(surveyed.sample) == 200
    read = summarize(carve_validation(load_directory(tmp_path / "news"), "train", 0.25, 3))
    assert surveyed.summary.split_sizes == read.split_sizes
    assert surveyed.summary.category_counts == read.category_counts
    assert surveyed.summary.name == read.name


def test_an_archive_or_another_loader_is_not_surveyed(tmp_path):
    import tarfile

    from xialpha.corpora.parted import survey

    write_news(tmp_path / "news")
    with tarfile.open(tmp_path / "news.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "news", arcname="news")
    assert survey("directory", {"path": str(tmp_path / "news.tar.gz")}) is None
    assert survey("synthetic", {"n_docs": 100}) is None
