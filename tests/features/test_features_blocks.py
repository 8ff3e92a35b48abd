"""Features computed part by part equal the single-task vectoriser's, bit for bit: the same
vocabulary and idf, the same rows of the training and held-out matrices, whatever the parts."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.corpora import load_corpus, load_reuters, make_synthetic
from xialpha.features import Preprocessing
from xialpha.features.blocks import count_part, feature_block, stack
from xialpha.features.preprocessing import DocumentFrequencies

PREPROCESSINGS = [
    Preprocessing(),
    Preprocessing(stemming="porter", stop_words="english", min_df=3, tf="log", idf="smooth"),
    Preprocessing(
        lowercase=False, token_pattern=r"[A-Za-z]+", max_df=0.3, min_df=2, tf="binary", idf="none", norm="none"
    ),
]


def in_parts(corpus, preprocessing, size: int, train_split="train", test_split="test", categories=("a",)):
    """(fitted, stacked block) with the corpus cut into parts of `size` documents, as the cluster does."""
    chunks = [corpus.subset(np.arange(lo, min(lo + size, len(corpus)))) for lo in range(0, len(corpus), size)]
    counts = [count_part(chunk, preprocessing, train_split, held_out_split=test_split) for chunk in chunks]
    halves = [
        DocumentFrequencies.merge([c.frequencies() for c in counts[:2]]),
        DocumentFrequencies.merge([c.frequencies() for c in counts[2:]]),
    ]  # merged in a tree, as on workers
    fitted = preprocessing.fit_frequencies(DocumentFrequencies.merge(halves))
    blocks = [
        feature_block(chunk, train_split, test_split, list(categories), count, fitted)
        for chunk, count in zip(chunks, counts)
    ]
    return fitted, stack(blocks)


def assert_identical(a: sp.csr_matrix, b: sp.csr_matrix) -> None:
    assert a.shape == b.shape
    for part in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(a, part), getattr(b, part)), part


@pytest.mark.parametrize("preprocessing", PREPROCESSINGS, ids=["default", "porter-log-smooth", "binary-raw"])
@pytest.mark.parametrize("size", [1, 97, 10_000])
def test_synthetic_features_in_parts_are_the_single_task_features(preprocessing, size):
    corpus = make_synthetic(n_docs=700, n_categories=3, seed=4)
    train, test = corpus.split("train"), corpus.split("test")
    expected, X_train = preprocessing.fit_transform(train.texts)
    fitted, block = in_parts(corpus, preprocessing, size, categories=["cat00", "cat02"])
    assert fitted.vocabulary == expected.vocabulary and fitted.n_documents == expected.n_documents
    assert (fitted.idf is None) == (expected.idf is None)
    assert fitted.idf is None or np.array_equal(fitted.idf, expected.idf)
    assert_identical(block.X_train, X_train)
    assert_identical(block.X_test, expected.transform(test.texts))
    assert np.array_equal(block.y_train[:, 1], train.y("cat02")) and np.array_equal(block.y_test[:, 0], test.y("cat00"))


@pytest.mark.reuters
@pytest.mark.parametrize("preprocessing", PREPROCESSINGS[:2], ids=["default", "porter-log-smooth"])
def test_reuters_features_in_parts_are_the_single_task_features(reuters_dir, preprocessing):
    corpus = load_reuters(reuters_dir)
    train, test = corpus.split("train"), corpus.split("test")
    expected, X_train = preprocessing.fit_transform(train.texts)
    fitted, block = in_parts(corpus, preprocessing, 1000, categories=["earn", "acq"])
    assert fitted.vocabulary == expected.vocabulary
    assert_identical(block.X_train, X_train)
    assert_identical(block.X_test, expected.transform(test.texts))


def test_feature_vectors_are_taken_as_they_are(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("".join(f"{'+1' if i % 3 else '-1'} {1 + i % 5}:1.5 {7 + i % 3}:0.5\n" for i in range(50)))
    corpus = load_corpus("svmlight", path=path)
    blocks = [feature_block(corpus.subset(np.arange(lo, lo + 10)), None, None, ["1"]) for lo in range(0, 50, 10)]
    stacked = stack(blocks)
    assert_identical(stacked.X_train, corpus.X)
    assert stacked.X_test is None and stacked.y_test.shape == (0, 1)


def test_no_training_document_and_no_term_are_named():
    corpus = make_synthetic(n_docs=50, seed=1)
    with pytest.raises(Exception, match="no training documents"):
        in_parts(corpus, Preprocessing(), 10, train_split="nowhere")
    with pytest.raises(Exception, match="min_df=1000 and max_df=1 keep none of the"):
        in_parts(corpus, Preprocessing(min_df=1000), 10)


def test_a_part_counts_only_its_training_and_held_out_rows():
    """A split the sweep never weights (a sealed test split beside a validation one) is not tokenised;
    a block of rows that were not counted is refused, not weighted as other rows."""
    corpus = make_synthetic(n_docs=60, n_categories=2, seed=2)
    sealed = corpus.splits == "test"
    texts = [text + " sealedonlyterm" if hide else text for text, hide in zip(corpus.texts, sealed)]
    splits = np.where(sealed, "test", np.where(np.arange(len(corpus)) % 4 == 0, "validation", "train"))
    corpus = replace(corpus, texts=texts, splits=splits)
    counts = count_part(corpus, Preprocessing(), "train", held_out_split="validation")
    assert counts.counts.counts.shape[0] == int((splits != "test").sum()) and sealed.any()
    assert "sealedonlyterm" not in counts.counts.terms.tolist()
    assert counts.train.sum() == int((splits == "train").sum())
    fitted = Preprocessing().fit_frequencies(counts.frequencies())
    block = feature_block(corpus, "train", "validation", ["cat00"], counts, fitted)
    assert (
        block.X_train.shape[0] == (splits == "train").sum() and block.X_test.shape[0] == (splits == "validation").sum()
    )
    with pytest.raises(ValueError, match="not counted"):
        feature_block(corpus, "train", "test", ["cat00"], counts, fitted)
