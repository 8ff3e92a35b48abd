"""Synthetic corpus: reproducible, skewed multi-label categories, learnable but not trivially, concept shifts."""

from __future__ import annotations

import numpy as np
import pytest

from xialpha.corpora import load_corpus, make_synthetic
from xialpha.errors import UserError
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha
from xialpha.features import Preprocessing, linear_gram


def test_same_seed_same_corpus_other_seed_other_corpus():
    first = make_synthetic(n_docs=300, seed=3)
    assert first.fingerprint() == make_synthetic(n_docs=300, seed=3).fingerprint()
    assert first.fingerprint() != make_synthetic(n_docs=300, seed=4).fingerprint()
    assert first.fingerprint() == load_corpus("synthetic", n_docs=300, seed=3).fingerprint()


def test_categories_are_skewed_multilabel_with_rare_ones():
    corpus = make_synthetic(n_docs=2000, n_categories=10, seed=0)
    counts = corpus.category_counts()
    assert len(corpus) == 2000 and len(counts) == 10
    assert list(counts)[0] == "cat00"
    assert counts["cat00"] > 0.2 * len(corpus)
    assert min(counts.values()) < 0.02 * len(corpus)  # some rare categories
    assert sum(len(labels) > 1 for labels in corpus.labels) > 50  # multi-label documents
    assert 0.2 < np.mean(corpus.splits == "test") < 0.4
    assert corpus.timestamps is None
    assert all(text for text in corpus.texts)
    lengths = np.array([len(text.split()) for text in corpus.texts])
    assert 60 < lengths.mean() < 100 and lengths.min() >= 3


def test_words_follow_a_zipfian_background():
    corpus = make_synthetic(n_docs=1000, seed=1)
    _, counts = np.unique(" ".join(corpus.texts).split(), return_counts=True)
    frequencies = np.sort(counts)[::-1]
    ranks = np.arange(1, 201)
    slope = np.polyfit(np.log(ranks), np.log(frequencies[:200]), 1)[0]
    assert -1.5 < slope < -0.6


def test_most_frequent_category_is_learnable_but_not_separable():
    corpus = make_synthetic(n_docs=2000, seed=0)
    X = Preprocessing().fit(corpus.texts).transform(corpus.texts)
    G = linear_gram(X)
    errors = {}
    for category in ("cat00", "cat03"):
        fit = fit_svm(TrainingProblem(corpus.y(category), gram=G), SVMParameters(1.0))
        errors[category] = xi_alpha(fit.alpha, fit.xi, corpus.y(category), r_delta_squared(gram=G), rho=1.0).error
    assert 0.01 <= errors["cat00"] <= 0.10
    assert 0.005 <= errors["cat03"] <= errors["cat00"]


def _errors_per_batch(corpus, category: str, train_batches: int) -> np.ndarray:
    """Held-out error per batch of a linear SVM trained on the first `train_batches` batches."""
    batch = (corpus.timestamps.astype("datetime64[D]") - np.datetime64("2000-01-01")).astype(int)
    train = corpus.subset(batch < train_batches)
    fitted = Preprocessing().fit(train.texts)
    X_train = fitted.transform(train.texts)
    fit = fit_svm(TrainingProblem(train.y(category), gram=linear_gram(X_train)), SVMParameters(1.0))
    errors = []
    for b in range(batch.max() + 1):
        part = corpus.subset(batch == b)
        decision = fit.decision_function(linear_gram(fitted.transform(part.texts), X_train))
        errors.append(np.mean(np.where(decision > 0, 1, -1) != part.y(category)))
    return np.array(errors)


@pytest.mark.parametrize("shift", [None, "abrupt", "gradual", "abrupt-return"])
def test_concept_shift_changes_the_shifted_category_only(shift):
    corpus = make_synthetic(
        n_docs=2400,
        n_batches=6,
        shift=shift,
        shift_batch=3,
        shift_width=2 if shift == "abrupt-return" else None,
        seed=2,
    )
    assert np.all(np.diff(corpus.timestamps.astype("int64")) > 0)  # time-ordered
    shifted = _errors_per_batch(corpus, "cat00", train_batches=2)
    steady = _errors_per_batch(corpus, "cat01", train_batches=2)
    assert shifted[2] < 0.12 and steady.max() < 0.12
    if shift is None:
        assert shifted.max() < 0.12
    elif shift == "abrupt":
        assert shifted[3:].min() > 0.2
    elif shift == "gradual":
        assert shifted[3] < shifted[4] < shifted[5] and shifted[5] > 0.2
    else:
        assert shifted[3:5].min() > 0.2 and shifted[5] < 0.12


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(shift="abrupt"), "shift: a concept shift needs n_batches"),
        (dict(n_batches=4, shift="sudden"), "shift: must be one of abrupt, gradual, abrupt-return"),
        (dict(n_batches=4, shift="abrupt", shift_batch=4), r"shift_batch: must be < n_batches \(4\)"),
        (dict(n_batches=4, shift="abrupt", shifted_categories=["cat99"]), "shifted_categories: unknown"),
        (dict(n_docs=0), "n_docs: must be an integer >= 1"),
        (dict(signal=1.5), r"signal: must be a number in \[0.0, 1.0\]"),
        (dict(n_categories=200, topic_words=40), "vocabulary_size: 5000 words are too few"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(UserError, match=message):
        make_synthetic(**kwargs)


def test_a_strong_signal_makes_topic_heavy_documents_not_an_error():
    corpus = make_synthetic(n_docs=300, signal=0.9, seed=1)
    assert len(corpus) == 300 and all(text.split() for text in corpus.texts)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_docs": 10**15}, r"n_docs: must be at most 1,000,000,000, got 1,000,000,000,000,000"),  # before: ValueError
        (
            {"n_docs": 100, "mean_length": 1e300},
            r"mean_length: blocks of 100 documents of mean_length 1e\+300",
        ),  # before: lam value too large
        ({"n_docs": 10**6, "n_categories": 2 * 10**4}, r"n_categories: blocks of 10,000 documents x 20,000 categories"),
        ({"vocabulary_size": 10**12}, r"vocabulary_size: must be at most 10,000,000"),
        (
            {"n_docs": 20, "n_batches": 2, "start": "the year 2000"},
            r"start: must be a date like \"2000-01-01\", got 'the year 2000'",
        ),
    ],
)
def test_corpora_too_large_to_generate_are_refused(kwargs, message):
    with pytest.raises(UserError, match=message):
        make_synthetic(**kwargs)
