"""Directory-per-category loader: plain trees and archives, splits, multi-label merging, decoding."""

from __future__ import annotations

import tarfile

import pytest
from fuzzing import time_bound

from xialpha.corpora import load_corpus, load_directory
from xialpha.errors import UserError


def write_tree(root, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


BYDATE = {
    "20news-bydate-train/sci.space/101": b"orbit launch shuttle",
    "20news-bydate-train/sci.space/102": b"moon landing",
    "20news-bydate-train/rec.autos/101": b"engine wheels",
    "20news-bydate-test/sci.space/201": "rocket \u00fcber fuel".encode("utf-8"),
    "20news-bydate-test/rec.autos/202": "caf\xe9 car".encode("latin-1"),
}


def test_bydate_tree_gives_splits_labels_and_decoded_texts(tmp_path):
    write_tree(tmp_path / "news", BYDATE)
    corpus = load_directory(tmp_path / "news")
    assert len(corpus) == 5
    assert sorted(corpus.split_names) == ["test", "train"]
    by_id = dict(zip(corpus.ids.tolist(), range(len(corpus))))
    space_101 = by_id["20news-bydate-train/sci.space/101"]
    autos_101 = by_id["20news-bydate-train/rec.autos/101"]  # same file name, other text: its own document
    assert corpus.labels[space_101] == {"sci.space"} and corpus.labels[autos_101] == {"rec.autos"}
    assert corpus.splits[by_id["20news-bydate-test/sci.space/201"]] == "test"
    assert corpus.texts[by_id["20news-bydate-test/sci.space/201"]] == "rocket \u00fcber fuel"  # UTF-8
    assert corpus.texts[by_id["20news-bydate-test/rec.autos/202"]] == "caf\u00e9 car"  # latin-1 fallback
    assert corpus.category_counts() == {"sci.space": 3, "rec.autos": 2}


def test_archive_with_a_wrapping_folder_matches_the_directory(tmp_path):
    write_tree(tmp_path / "news", BYDATE)
    archive = tmp_path / "20news-bydate.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "news", arcname="20news-bydate")
    from_archive = load_corpus("directory", path=archive)
    assert from_archive.fingerprint() == load_directory(tmp_path / "news").fingerprint()
    assert from_archive.split_names == ["test", "train"]


def test_same_file_in_several_categories_is_one_multilabel_document(tmp_path):
    write_tree(
        tmp_path / "cats",
        {
            "grain/0001": b"wheat and corn harvest",
            "wheat/0001": b"wheat and corn harvest",
            "grain/0002": b"barley",
            "wheat/0003": b"durum wheat",
        },
    )
    corpus = load_directory(tmp_path / "cats")
    assert corpus.splits is None
    assert len(corpus) == 3
    assert corpus.labels[corpus.ids.tolist().index("grain/0001")] == {"grain", "wheat"}
    assert corpus.y("wheat").tolist().count(1) == 2


def test_bad_trees(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_directory(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no files"):
        load_directory(tmp_path / "empty")
    write_tree(tmp_path / "mixed", {"a/1": b"x", "b/c/2": b"y"})
    with pytest.raises(UserError, match="different depths"):
        load_directory(tmp_path / "mixed")
    write_tree(tmp_path / "flat", {"a/1": b"x"})
    with pytest.raises(UserError, match="layout 'split/category' needs 2"):
        load_directory(tmp_path / "flat", layout="split/category")
    with pytest.raises(UserError, match="layout: must be one of"):
        load_directory(tmp_path / "flat", layout="nested")


def test_empty_documents_are_refused_or_skipped(tmp_path):
    write_tree(tmp_path / "tree", {"a/1": b"text", "a/2": b"  \n", "b/3": b"more"})
    with pytest.raises(UserError, match=r"document a/2 has no text \(set skip_empty = true in \[corpus\]"):
        load_directory(tmp_path / "tree")
    assert load_directory(tmp_path / "tree", skip_empty=True).ids.tolist() == ["a/1", "b/3"]


@pytest.fixture
def answers_within_a_minute():
    """Fail instead of hanging (reading a FIFO blocks until a writer comes)."""
    with time_bound(60, "this test"):
        yield


TREE = {"space/1": b"orbit launch", "space/2": b"moon landing", "autos/1": b"engine wheels"}


def test_a_fifo_in_the_corpus_is_refused_not_read(tmp_path, answers_within_a_minute):
    import os

    write_tree(tmp_path / "news", TREE)
    os.mkfifo(tmp_path / "news" / "autos" / "2")
    with pytest.raises(UserError, match=r"autos/2: is a FIFO \(named pipe\), not a regular file"):
        load_directory(tmp_path / "news")


def test_a_socket_in_the_corpus_is_refused(tmp_path, answers_within_a_minute):
    import socket

    write_tree(tmp_path / "news", TREE)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "news" / "autos" / "sock"))
        with pytest.raises(UserError, match=r"autos/sock: is a socket, not a regular file"):
            load_directory(tmp_path / "news")
    finally:
        server.close()


def test_symlinks_leaving_the_corpus_are_refused_unless_allowed(tmp_path):
    write_tree(tmp_path / "news", TREE)
    (tmp_path / "secret.txt").write_text("the password is swordfish")
    (tmp_path / "news" / "autos" / "2").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(
        UserError,
        match=r"autos/2 is a symbolic link to .*secret.txt, outside the corpus .*news; "
        r"set follow_symlinks = true",
    ):
        load_directory(tmp_path / "news")
    corpus = load_directory(tmp_path / "news", follow_symlinks=True)
    assert "the password is swordfish" in corpus.texts


def test_symlinks_to_devices_are_refused_even_when_allowed(tmp_path, answers_within_a_minute):
    write_tree(tmp_path / "news", TREE)
    (tmp_path / "news" / "autos" / "zero").symlink_to("/dev/zero")
    with pytest.raises(UserError, match="outside the corpus"):
        load_directory(tmp_path / "news")
    with pytest.raises(UserError, match=r"autos/zero: is a character device, not a regular file"):
        load_directory(tmp_path / "news", follow_symlinks=True)


def test_symlinks_inside_the_corpus_are_read_and_loops_refused(tmp_path):
    write_tree(tmp_path / "news", TREE)
    (tmp_path / "news" / "space" / "3").symlink_to(tmp_path / "news" / "autos" / "1")  # a file seen twice
    assert len(load_directory(tmp_path / "news")) == 4
    (tmp_path / "news" / "space" / "3").unlink()
    (tmp_path / "news" / "space" / "deeper").symlink_to(tmp_path / "news")  # a directory containing itself
    with pytest.raises(UserError, match=r"space/deeper is a symbolic link to .*news, which contains it \(a loop\)"):
        load_directory(tmp_path / "news", follow_symlinks=True)
    (tmp_path / "news" / "space" / "deeper").unlink()
    (tmp_path / "news" / "space" / "a").symlink_to("b")
    (tmp_path / "news" / "space" / "b").symlink_to("a")
    with pytest.raises(UserError, match=r"space/[ab]: Too many levels of symbolic links"):
        load_directory(tmp_path / "news")


def test_archive_members_must_be_regular_files(tmp_path):
    write_tree(tmp_path / "news", TREE)
    (tmp_path / "news" / "autos" / "2").symlink_to("/etc/hostname")
    with tarfile.open(tmp_path / "news.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "news", arcname="news")
    with pytest.raises(UserError, match=r"holds news/autos/2, which is not a regular file"):
        load_directory(tmp_path / "news.tar.gz")


def test_loader_arguments_of_the_wrong_type_are_refused(tmp_path):
    write_tree(tmp_path / "news", TREE)
    with pytest.raises(UserError, match=r"^path: must be a string or a path, got \["):
        load_corpus("directory", path=[str(tmp_path / "news")])
    with pytest.raises(
        UserError, match="^skip_empty: must be true or false, got 'false' \\(corpus loader 'directory'\\)$"
    ):
        load_corpus("directory", path=str(tmp_path / "news"), skip_empty="false")


def _old_archive_files(path, wanted=lambda relative: True):
    """The archive reader before issue 18 (members extracted in sorted name order), kept to compare."""
    from pathlib import PurePosixPath

    with tarfile.open(path) as archive:
        members = sorted((m for m in archive.getmembers() if not m.isdir()), key=lambda m: m.name)
        return [
            (PurePosixPath(m.name), archive.extractfile(m).read())
            for m in members
            if not any(part.startswith(".") for part in PurePosixPath(m.name).parts) and wanted(PurePosixPath(m.name))
        ]


def _add(archive, name: str, data: bytes = b"", **fields) -> None:
    import io

    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    archive.addfile(info, io.BytesIO(data))


def test_archives_are_read_in_one_pass_in_archive_order_with_the_old_result(tmp_path, monkeypatch):
    from pathlib import Path, PurePosixPath

    from xialpha.corpora.sources import iter_tree_files

    path = tmp_path / "news.tar.gz"
    with tarfile.open(path, "w:gz") as archive:  # archive order is not name order: 10 before 9 before 2
        for number in (10, 9, 2, 11, 1):
            _add(archive, f"news/space/{number}", f"text {number} \u00fc".encode())
        _add(archive, "news/autos/.hidden", b"hidden text")
        _add(archive, "news/autos/7", b"same bytes twice")
        _add(archive, "news/autos/3", type=tarfile.LNKTYPE, linkname="news/autos/7")  # hard link, kept bytes
        _add(archive, "news/autos/4", type=tarfile.LNKTYPE, linkname="news/autos/.hidden")  # to an unread member
        _add(archive, "./news/autos/5", b"dot-slash name")
    expected = _old_archive_files(path)
    old_corpus = _corpus_with(monkeypatch, _old_archive_files, path)
    reads = []
    extract = tarfile.TarFile.extractfile
    monkeypatch.setattr(
        tarfile.TarFile,
        "extractfile",
        lambda self, member: reads.append((member.name, member.offset_data)) or extract(self, member),
    )
    files = list(iter_tree_files(Path(path)))
    assert files == expected  # same members, same bytes, same (name) order
    assert files[:3] == [
        (PurePosixPath("news/autos/5"), b"dot-slash name"),  # "./news" sorts first
        (PurePosixPath("news/autos/3"), b"same bytes twice"),
        (PurePosixPath("news/autos/4"), b"hidden text"),
    ]
    # one pass: every member read once, forwards; only the link to the unread hidden member goes back
    assert reads[-3:-1] == [("news/autos/4", reads[-3][1]), ("news/autos/.hidden", reads[-2][1])]
    forwards = [offset for name, offset in reads if name not in ("news/autos/4", "news/autos/.hidden")]
    assert forwards == sorted(forwards) and len(forwards) == 7
    new_corpus = load_directory(path)
    assert new_corpus.ids.tolist() == old_corpus.ids.tolist() and new_corpus.fingerprint() == old_corpus.fingerprint()


def _corpus_with(monkeypatch, archive_files, path):
    """load_directory(path) with the archive reader replaced by `archive_files`."""
    from xialpha.corpora import sources

    with monkeypatch.context() as patch:
        patch.setattr(sources, "_archive_files", lambda path, wanted: iter(archive_files(path, wanted)))
        return load_directory(path)


def test_archive_members_that_are_devices_or_fifos_are_refused(tmp_path):
    for kind in (tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE, tarfile.SYMTYPE):
        path = tmp_path / f"odd{kind!r}.tar"
        with tarfile.open(path, "w") as archive:
            _add(archive, "news/space/1", b"orbit")
            _add(archive, "news/space/2", type=kind, linkname="/dev/zero")
        with pytest.raises(UserError, match=r"holds news/space/2, which is not a regular file"):
            load_directory(path)


def test_archive_hard_link_to_a_missing_member_is_refused(tmp_path):
    path = tmp_path / "broken.tar"
    with tarfile.open(path, "w") as archive:
        _add(archive, "news/space/1", b"orbit")
        _add(archive, "news/space/2", type=tarfile.LNKTYPE, linkname="news/space/9")
    with pytest.raises(UserError, match=r"broken.tar: not a readable tar archive"):
        load_directory(path)
