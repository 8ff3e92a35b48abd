"""Directory-per-category loader: plain trees and archives, splits, multi-label merging, decoding."""

from __future__ import annotations

import tarfile

import pytest

from xialpha.corpora import load_corpus, load_directory
from xialpha.errors import UserError


def write_tree(root, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


BYDATE = {
    "20news-bydate-train/sci.space/101": "orbit launch shuttle".encode(),
    "20news-bydate-train/sci.space/102": "moon landing".encode(),
    "20news-bydate-train/rec.autos/101": "engine wheels".encode(),
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
    write_tree(tmp_path / "cats", {
        "grain/0001": b"wheat and corn harvest",
        "wheat/0001": b"wheat and corn harvest",
        "grain/0002": b"barley",
        "wheat/0003": b"durum wheat",
    })
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
    with pytest.raises(UserError, match=r"document a/2 has no text .*skip_empty"):
        load_directory(tmp_path / "tree")
    assert load_directory(tmp_path / "tree", skip_empty=True).ids.tolist() == ["a/1", "b/3"]
