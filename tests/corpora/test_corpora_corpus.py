"""Corpus: validation, subsets, splits, category choice, targets and fingerprints."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.corpora import Corpus
from xialpha.errors import UserError


def small_corpus(**changes) -> Corpus:
    fields = dict(
        ids=np.array(["a", "b", "c", "d", "e"]),
        texts=["wheat corn", "oil crude", "wheat", "dividend earn", "earn profit"],
        labels=[{"grain", "wheat"}, {"crude"}, {"grain"}, {"earn"}, {"earn"}],
        name="small",
        splits=np.array(["train", "train", "test", "train", "test"]),
        timestamps=np.array(["2000-01-01", "2000-01-02", "NaT", "2000-01-04", "2000-01-05"], dtype="datetime64[s]"),
    )
    fields.update(changes)
    return Corpus(**fields)


def test_fields_are_normalised():
    corpus = small_corpus()
    assert len(corpus) == 5
    assert corpus.ids.dtype.kind == "U"
    assert corpus.labels[0] == frozenset({"grain", "wheat"})
    assert corpus.timestamps.dtype == np.dtype("datetime64[s]")
    assert corpus.split_names == ["test", "train"]
    assert small_corpus(labels=["grain", {"crude"}, set(), ["earn"], "earn"]).labels[0] == {"grain"}  # one name


def test_subset_keeps_every_field_aligned():
    corpus = small_corpus()
    part = corpus.subset([4, 0])
    assert part.ids.tolist() == ["e", "a"]
    assert part.texts == ["earn profit", "wheat corn"]
    assert part.labels == [frozenset({"earn"}), frozenset({"grain", "wheat"})]
    assert part.splits.tolist() == ["test", "train"]
    assert part.timestamps[0] == np.datetime64("2000-01-05")
    masked = corpus.subset(np.array([True, False, False, False, True]))
    assert masked.ids.tolist() == ["a", "e"]


def test_subset_of_feature_matrix_corpus():
    X = sp.csr_matrix(np.arange(10, dtype=float).reshape(5, 2))
    corpus = small_corpus(texts=None, X=X)
    part = corpus.subset([3, 1])
    assert part.X.toarray().tolist() == [[6.0, 7.0], [2.0, 3.0]]
    assert part.texts is None


def test_split_and_unknown_split():
    corpus = small_corpus()
    assert corpus.split("test").ids.tolist() == ["c", "e"]
    with pytest.raises(UserError, match="no split 'validation'"):
        corpus.split("validation")
    with pytest.raises(UserError, match="splits: none"):
        small_corpus(splits=None).split("train")


def test_category_counts_and_choice():
    corpus = small_corpus()
    assert corpus.category_counts() == {"earn": 2, "grain": 2, "crude": 1, "wheat": 1}
    assert corpus.choose_categories(top_k=2) == ["earn", "grain"]
    assert corpus.choose_categories(min_positives=2) == ["earn", "grain"]
    assert corpus.choose_categories(names=["wheat", "crude"]) == ["wheat", "crude"]
    assert corpus.choose_categories(names=["wheat", "earn"], min_positives=2) == ["earn"]
    with pytest.raises(UserError, match="unknown category 'corn'"):
        corpus.choose_categories(names=["corn"])
    with pytest.raises(UserError, match="no category"):
        corpus.choose_categories(min_positives=3)
    with pytest.raises(UserError, match="top_k: must be an integer >= 1"):
        corpus.choose_categories(top_k=0)


def test_y_is_int8_plus_minus_one():
    y = small_corpus().y("grain")
    assert y.dtype == np.int8
    assert y.tolist() == [1, -1, 1, -1, -1]
    with pytest.raises(UserError, match="'corn' is not a category"):
        small_corpus().y("corn")


def test_fingerprint_is_stable_and_sensitive():
    base = small_corpus().fingerprint()
    assert base == small_corpus().fingerprint()
    assert len(base) == 64
    assert (
        small_corpus(texts=["wheat corn", "oil crude", "wheat", "dividend earn", "earn  profit"]).fingerprint() != base
    )
    assert small_corpus(labels=[{"grain"}, {"crude"}, {"grain"}, {"earn"}, {"earn"}]).fingerprint() != base
    assert small_corpus(ids=np.array(["a", "b", "c", "d", "f"])).fingerprint() != base
    X = sp.csr_matrix(np.eye(5))
    assert small_corpus(texts=None, X=X).fingerprint() != small_corpus(texts=None, X=2 * X).fingerprint()


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(ids=np.array(["a", "a", "c", "d", "e"])), "document id 'a' occurs more than once"),
        (dict(texts=["x", None, "y", "z", "w"]), "document 'b' has no text"),
        (dict(texts=["x"]), "1 texts for 5 ids"),
        (dict(labels=[set()]), "1 label sets for 5 ids"),
        (dict(X=sp.eye(5, format="csr")), "exactly one of texts and X"),
    ],
)
def test_inconsistent_fields_are_refused(changes, message):
    with pytest.raises(UserError, match=message):
        small_corpus(**changes)
