"""Preprocessing: equality with scikit-learn's vectorizers, options, fitting on training texts only,
pickling, validation, and ids that are equal across processes."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from xialpha.corpora import make_synthetic
from xialpha.errors import UserError
from xialpha.features import Kernel, Preprocessing

TEXTS = [
    "The wheat harvest is running late, farmers said.",
    "Wheat and corn prices rose; the harvests were smaller.",
    "Oil prices fell as the cartel raised output.",
    "Crude oil output rose in the Gulf.",
    "The company declared a quarterly dividend.",
]


def test_smooth_idf_equals_sklearn_tfidf():
    texts = make_synthetic(n_docs=200, seed=0).texts + TEXTS
    fitted, X = Preprocessing(min_df=2, idf="smooth").fit_transform(texts)
    reference = TfidfVectorizer(min_df=2)
    X_ref = reference.fit_transform(texts)
    assert fitted.feature_names == reference.get_feature_names_out().tolist()
    np.testing.assert_allclose(X.toarray(), X_ref.toarray(), atol=1e-12)
    assert X.dtype == np.float64 and X.format == "csr"


def test_raw_counts_equal_sklearn_counts():
    spec = Preprocessing(idf="none", norm="none", max_df=0.5)
    fitted, X = spec.fit_transform(TEXTS)
    X_ref = CountVectorizer(max_df=0.5).fit_transform(TEXTS)
    np.testing.assert_array_equal(X.toarray(), X_ref.toarray())


def test_log_idf_is_seed_equation_two_and_rows_are_unit_length():
    fitted, X = Preprocessing().fit_transform(TEXTS)
    column = fitted.vocabulary["wheat"]
    assert fitted.idf[column] == pytest.approx(np.log(5 / 2))
    np.testing.assert_allclose(np.asarray(X.multiply(X).sum(axis=1)).ravel(), 1.0)
    everywhere = Preprocessing(idf="log", norm="none").fit(["a1 b1", "a1 c1"])
    assert everywhere.idf[everywhere.vocabulary["a1"]] == 0.0  # ln(n/n): a term in every document


def test_tf_variants():
    texts = ["grain grain grain corn", "corn oil"]
    raw = Preprocessing(idf="none", norm="none").fit(texts).transform(texts).toarray()
    log = Preprocessing(tf="log", idf="none", norm="none").fit(texts).transform(texts).toarray()
    binary = Preprocessing(tf="binary", idf="none", norm="none").fit(texts).transform(texts).toarray()
    np.testing.assert_allclose(log[raw > 0], 1 + np.log(raw[raw > 0]))
    np.testing.assert_array_equal(binary, (raw > 0).astype(float))


def test_stop_words_and_stemming_change_the_vocabulary():
    plain = Preprocessing().fit(TEXTS).vocabulary
    no_stop = Preprocessing(stop_words="english").fit(TEXTS).vocabulary
    stemmed = Preprocessing(stemming="porter").fit(TEXTS).vocabulary
    assert {"the", "is", "and", "as", "in", "were"} <= set(plain)
    assert not {"the", "is", "and", "as", "in", "were"} & set(no_stop)
    assert {"wheat", "harvest", "prices"} <= set(no_stop)
    assert {"harvest", "harvests", "running", "rose", "prices"} <= set(plain)
    assert "harvests" not in stemmed and "harvest" in stemmed and "run" in stemmed and "price" in stemmed
    assert len(stemmed) < len(plain)


@pytest.mark.parametrize(
    "options", [{}, {"stop_words": "english"}, {"lowercase": False}, {"lowercase": False, "stop_words": "english"}]
)
def test_stemmed_counts_are_the_unstemmed_terms_stemmed_as_stemming_every_token_counts_them(options):
    from collections import defaultdict

    from xialpha.features.preprocessing import _count, make_analyzer

    texts = [*TEXTS, "Connect, connected, CONNECTION and connections: The connecting ran; running runs."]
    texts += list(make_synthetic(n_docs=200, seed=4).texts)
    spec = Preprocessing(stemming="porter", **options)
    terms: defaultdict[str, int] = defaultdict()
    terms.default_factory = terms.__len__
    analyzer = make_analyzer(spec.lowercase, spec.token_pattern, spec.stop_words, "porter")
    every_token = _count(texts, analyzer, terms.__getitem__, n_columns=None)  # each token stemmed, then counted
    unstemmed = spec.unstemmed().count(texts)
    before = unstemmed.counts.copy()
    derived = unstemmed.stemmed("porter")
    assert (unstemmed.counts != before).nnz == 0 and unstemmed.counts.nnz == before.nnz  # left as they were
    assert derived.terms.tolist() == list(terms) and "connect" in terms
    assert (derived.counts != every_token).nnz == 0 and derived.counts.has_sorted_indices
    assert spec.count(texts).terms.tolist() == list(terms) and spec.unstemmed().stemming == "none"


@pytest.mark.parametrize("pattern", [r"(?u)\b\w\w+\b", r"\b\w+\b"])
@pytest.mark.parametrize("options", [{}, {"stop_words": "english"}, {"lowercase": False, "stop_words": "english"}])
def test_word_run_counts_equal_the_analyzers_token_by_token(pattern, options):
    from collections import defaultdict

    from xialpha.features.preprocessing import _count, make_analyzer

    texts = [
        *TEXTS,
        "",
        "a I x_1 __ 42 4.5 don't THE The e-mail snake_case A",
        "Müller's café: naïve Ünïcode and ascii_words, İstanbul ǅ 東京 x",  # not ASCII: the pattern's path
        "tab\tand\nnewline\x0bvt\x0cff\rcr\x00nul",
    ]
    spec = Preprocessing(token_pattern=pattern, **options)
    terms: defaultdict[str, int] = defaultdict()
    terms.default_factory = terms.__len__
    analyzer = make_analyzer(spec.lowercase, pattern, spec.stop_words, "none")
    every_token = _count(texts, analyzer, terms.__getitem__, n_columns=None)
    counted = spec.count(texts)
    assert counted.terms.tolist() == list(terms)
    assert counted.counts.shape == every_token.shape and (counted.counts != every_token).nnz == 0
    assert counted.counts.has_sorted_indices and counted.counts.dtype == np.int64


def test_min_df_max_df_count_training_documents_and_unseen_terms_are_ignored():
    fitted = Preprocessing(min_df=2, max_df=0.5).fit(TEXTS)
    assert set(fitted.vocabulary) == {"wheat", "prices", "oil", "output", "rose"}  # "the": 3 of 5 > 0.5
    X_new = fitted.transform(["unseen words about wheat", "nothing known here"])
    assert X_new.shape == (2, 5)
    assert X_new[0].nnz == 1 and X_new[1].nnz == 0  # an all-unknown text is a zero row


def test_case_and_token_pattern():
    upper = Preprocessing(lowercase=False, token_pattern=r"[A-Za-z]+").fit(["Oil oil OIL a"])
    assert set(upper.vocabulary) == {"Oil", "oil", "OIL", "a"}


def test_fitted_preprocessing_pickles_and_transforms_the_same():
    fitted = Preprocessing(stemming="porter", stop_words="english", min_df=1).fit(TEXTS)
    restored = pickle.loads(pickle.dumps(fitted))
    assert restored.vocabulary_size == fitted.vocabulary_size
    assert (restored.transform(TEXTS) != fitted.transform(TEXTS)).nnz == 0


def test_spec_is_frozen_hashable_with_flat_params():
    spec = Preprocessing(min_df=3)
    assert spec == Preprocessing(min_df=3.0) and hash(spec) == hash(Preprocessing(min_df=3))
    assert spec.id != Preprocessing(min_df=2).id and len(spec.id) == 16
    params = spec.params()
    assert params["min_df"] == 3 and isinstance(params["max_df"], float)
    assert all(isinstance(value, (bool, int, float, str)) for value in params.values())
    with pytest.raises(AttributeError):
        spec.min_df = 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(min_df=0), "min_df: must be a whole number of documents >= 1"),
        (dict(min_df=2.5), "min_df: must be a whole number"),
        (dict(max_df=0), r"max_df: must be a fraction of documents in \(0, 1\]"),
        (dict(max_df=3), r"max_df: must be a fraction"),
        (dict(stemming="snowball"), "stemming: must be one of none, porter"),
        (dict(stop_words="french"), "stop_words: must be one of none, english"),
        (dict(tf="sublinear"), "tf: must be one of raw, log, binary"),
        (dict(idf="bm25"), "idf: must be one of none, log, smooth"),
        (dict(norm="l1"), "norm: must be one of l2, none"),
        (dict(token_pattern="(a)(b)"), "token_pattern: has 2 groups"),
        (dict(token_pattern="[a-"), "token_pattern: not a valid regular expression"),
        (dict(lowercase="yes"), "lowercase: must be true or false"),
    ],
)
def test_bad_specs(kwargs, message):
    with pytest.raises(UserError, match=message):
        Preprocessing(**kwargs)


def test_bad_texts():
    with pytest.raises(UserError, match="texts: expected a list of texts, got one string"):
        Preprocessing().fit("one text")
    with pytest.raises(UserError, match="texts: item 1 is a NoneType"):
        Preprocessing().fit(["fine", None])
    with pytest.raises(UserError, match="texts: no training documents"):
        Preprocessing().fit([])


def test_ids_are_equal_across_processes():
    specs = [Preprocessing(), Preprocessing(stemming="porter", min_df=3, max_df=0.9, tf="log", idf="smooth")]
    kernels = [Kernel(), Kernel("rbf", gamma=0.5), Kernel("poly", degree=2, coef0=1.0)]
    code = (
        "import json\nfrom xialpha.features import Kernel, Preprocessing\n"
        "specs = [Preprocessing(), Preprocessing(stemming='porter', min_df=3, max_df=0.9, tf='log', idf='smooth')]\n"
        "kernels = [Kernel(), Kernel('rbf', gamma=0.5), Kernel('poly', degree=2, coef0=1.0)]\n"
        "print(json.dumps([s.id for s in specs] + [k.id for k in kernels]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert json.loads(output) == [s.id for s in specs] + [k.id for k in kernels]
