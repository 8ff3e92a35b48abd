"""The estimators' input checks (scikit-learn's check_scalar / check_array from issue 15 to issue 47.2,
hand-written since, which keeps scikit-learn out of a sweep's workers): on the project's inputs (a
synthetic corpus's tf-idf features and Gram, the specs' C, j and gamma values, and the bad inputs the
estimators refuse) they return what the hand-written checks before issue 15 returned, kept in
validation_before.py, or refuse with the same one-line message. The kernel table is one object."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import validation_before as before

from xialpha import search_grid
from xialpha.corpora.loading import make_synthetic
from xialpha.estimators import KERNEL_PARAMETERS, KERNELS
from xialpha.estimators import validation as after
from xialpha.estimators.svm import DEFAULT_TOL
from xialpha.features import Preprocessing, linear_gram
from xialpha.features import kernels as feature_kernels

CORPUS = make_synthetic(n_docs=120, n_categories=2, seed=3, vocabulary_size=400)
_, FEATURES = Preprocessing().fit_transform(CORPUS.texts)
GRAM = linear_gram(FEATURES)
N = FEATURES.shape[0]


def _with(array, index, value):
    out = np.array(array, dtype=float)
    out[index] = value
    return out


def _explicit_zeros(X):
    X = sp.csr_matrix(X, copy=True)
    X.data[::7] = 0.0  # stored zeros, as a weighting that zeroes a term leaves them
    return X


def _outcome(check, *args, **kwargs):
    """("ok", value) or ("error", message) of one call."""
    try:
        return "ok", check(*args, **kwargs)
    except ValueError as error:
        return "error", str(error)


def _same(old, new) -> None:
    assert old[0] == new[0], (old, new)
    if old[0] == "error":
        assert new[1] == old[1]
        return
    a, b = old[1], new[1]
    assert type(a) is type(b)
    if sp.issparse(a):
        assert a.dtype == b.dtype and a.shape == b.shape
        for part in ("indptr", "indices", "data"):  # the stored structure, explicit zeros included
            np.testing.assert_array_equal(getattr(a, part), getattr(b, part))
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b or (a != a and b != b)


NUMBERS = [
    *(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    1,
    3,
    2.0,
    np.float64(0.3),
    np.float32(0.1),
    np.int64(7),
    True,
    1e300,
    5e-324,
    0,
    0.0,
    -1,
    -0.5,
    float("nan"),
    float("inf"),
    -float("inf"),
    np.float64("nan"),
    None,
    "big",
    [1.0],
    object(),
]


@pytest.mark.parametrize("value", NUMBERS, ids=lambda v: "object()" if type(v) is object else repr(v))  # no address
@pytest.mark.parametrize("name", ["C", "j", "rho", "r_delta2", "kernel_params.gamma"])
def test_check_positive_agrees(value, name):
    _same(_outcome(before.check_positive, value, name), _outcome(after.check_positive, value, name))


@pytest.mark.parametrize("value", ["1.5", np.array(2.0)], ids=repr)
def test_check_positive_now_refuses_text_and_arrays(value):
    # the one intended difference: float() used to turn "1.5" and a 0-d array into numbers; the
    # estimators' callers pass real numbers, and a string C is now an error, not a silent cast
    assert before.check_positive(value, "C") > 0
    with pytest.raises(ValueError, match=r"^C: must be a number, got "):
        after.check_positive(value, "C")


@pytest.mark.parametrize(
    "value",
    [DEFAULT_TOL, 1e-3, 1e-12, 1.0, 0.5, 1, 9e-13, 1.0000001, 2, 0, -1e-3, float("nan"), float("inf"), "tight"],
    ids=repr,
)
def test_check_tolerance_agrees(value):
    _same(_outcome(before.check_tolerance, value), _outcome(after.check_tolerance, value))


VECTORS = {
    "zeros": (np.zeros(N), N),
    "list": ([0.5] * 6, 6),
    "ints": (np.arange(6), 6),
    "int8 labels": (CORPUS.y("cat00"), N),
    "float32": (np.linspace(0, 1, 6, dtype=np.float32), 6),
    "empty": (np.zeros(0), 0),
    "NaN": (_with(np.zeros(6), 2, np.nan), 6),
    "inf": (_with(np.ones(6), 0, np.inf), 6),
    "-inf": (_with(np.ones(6), 5, -np.inf), 6),
    "short": (np.ones(5), 6),
    "2-d": (np.ones((6, 1)), 6),
    "scalar": (1.0, 1),
    "NaN and short": (_with(np.ones(5), 0, np.nan), 6),
    "finite, its sum not": (np.full(4, 1e308), 4),
}


@pytest.mark.parametrize("case", sorted(VECTORS))
def test_check_vector_agrees(case):
    v, n = VECTORS[case]
    _same(_outcome(before.check_vector, v, n, "alpha"), _outcome(after.check_vector, v, n, "alpha"))


GRAMS = {
    "synthetic": (GRAM, N),
    "synthetic, n unknown": (GRAM, None),
    "float32": (GRAM.astype(np.float32), N),
    "ints": (np.eye(4, dtype=int), 4),
    "list": (GRAM[:3, :3].tolist(), 3),
    "empty": (np.zeros((0, 0)), None),
    "NaN": (_with(GRAM, (0, 1), np.nan), N),
    "inf": (_with(GRAM, (2, 2), np.inf), N),
    "not square": (GRAM[:, :5], N),
    "1-d": (GRAM[0], N),
    "rows vs labels": (GRAM, N - 1),
    "NaN and rows vs labels": (_with(GRAM, (0, 0), np.nan), 3),
    "finite, its sum not": (np.full((3, 3), 1e308), 3),
}


@pytest.mark.parametrize("case", sorted(GRAMS))
def test_check_gram_agrees(case):
    gram, n = GRAMS[case]
    _same(_outcome(before.check_gram, gram, n), _outcome(after.check_gram, gram, n))


def test_check_gram_does_not_copy_a_float64_gram():
    assert after.check_gram(GRAM, N) is GRAM
    assert after.check_features(FEATURES, N) is FEATURES  # nor features that are float64 (CSR or dense)
    assert after.check_features(DENSE, 10) is DENSE


DENSE = FEATURES[:10].toarray()
FEATURE_CASES = {
    "synthetic csr": (FEATURES, N),
    "synthetic csr, n unknown": (FEATURES, None),
    "explicit zeros": (_explicit_zeros(FEATURES), N),
    "float32 csr": (FEATURES.astype(np.float32), N),
    "csc": (FEATURES.tocsc(), N),
    "coo": (FEATURES.tocoo(), N),
    "csr_array": (sp.csr_array(FEATURES), N),
    "dense": (DENSE, 10),
    "dense list": (DENSE.tolist(), 10),
    "dense ints": (np.ones((3, 2), dtype=int), 3),
    "no rows": (np.zeros((0, 4)), 0),
    "no columns": (np.zeros((3, 0)), 3),
    "dense NaN": (_with(DENSE, (1, 1), np.nan), 10),
    "dense inf": (_with(DENSE, (0, 0), np.inf), 10),
    "sparse inf": (sp.csr_matrix(_with(DENSE, (1, 3), np.inf)), 10),
    "sparse NaN": (sp.csr_matrix(_with(DENSE, (9, 0), np.nan)), 10),
    "rows vs labels": (FEATURES, N + 1),
    "dense rows vs labels": (DENSE, 4),
    "1-d": (DENSE[:, 0], 10),
    "3-d": (np.ones((2, 2, 2)), 2),
    "NaN and rows vs labels": (_with(DENSE, (0, 0), np.nan), 3),
    "finite, its sum not": (np.full((2, 3), 1e308), 2),
    "sparse finite, its sum not": (sp.csr_matrix(np.full((2, 3), -1e308)), 2),
}


@pytest.mark.parametrize("case", sorted(FEATURE_CASES))
def test_check_features_agrees(case):
    X, n = FEATURE_CASES[case]
    _same(_outcome(before.check_features, X, n), _outcome(after.check_features, X, n))


@pytest.mark.parametrize("data", [np.array([["a", "b"]]), np.array([[1 + 2j, 0]])], ids=["text", "complex"])
def test_unusable_feature_values_now_name_the_argument(data):
    # before: numpy's own message (text) or a silent cast that dropped the imaginary part (complex)
    with pytest.raises(ValueError) as info:
        after.check_features(data, name="data")
    assert str(info.value).startswith("data: ") and "\n" not in str(info.value)


KERNEL_CASES = [
    ("linear", None),
    ("linear", {}),
    ("rbf", {"gamma": 0.5}),
    ("rbf", {"gamma": 1}),
    ("poly", {"gamma": 1.0, "degree": 2}),
    ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0}),
    ("sigmoid", {"gamma": 0.5, "coef0": -1.0}),
    ("rbf", None),
    ("rbf", {"gamma": -1}),
    ("rbf", {"gamma": "x"}),
    ("linear", {"gamma": 1.0}),
    ("rbf", {"degree": 2, "gamma": 1.0}),
    ("sigmoid", {"gamma": 1.0, "degree": 2}),
    ("cosine", None),
    ("precomputed", None),
    ("RBF", {"gamma": 1.0}),
]


@pytest.mark.parametrize("kernel, params", KERNEL_CASES, ids=[f"{k}-{p}" for k, p in KERNEL_CASES])
def test_check_kernel_agrees(kernel, params):
    old, new = _outcome(before.check_kernel, kernel, params), _outcome(after.check_kernel, kernel, params)
    if kernel == "RBF":  # issue 43.6: a refused choice says which one was meant, after the same words
        assert new[1].endswith("; did you mean rbf?"), new
        new = (new[0], new[1].removesuffix("; did you mean rbf?"))
    _same(old, new)


def test_estimators_and_features_read_the_one_kernel_table():
    assert after.KERNEL_PARAMETERS is KERNEL_PARAMETERS
    assert feature_kernels.KERNEL_PARAMETERS is KERNEL_PARAMETERS
    assert KERNELS == tuple(KERNEL_PARAMETERS)
    assert search_grid.SVC_KERNELS == (*KERNELS, "precomputed")  # the search derives its kernels from the table


def test_both_users_follow_the_table(monkeypatch):
    # a kernel added to the table is known to both the estimators' check and the Kernel spec
    monkeypatch.setitem(KERNEL_PARAMETERS, "laplacian", ("gamma",))
    assert after.check_kernel("laplacian", {"gamma": 2}) == {"gamma": 2.0}
    assert feature_kernels.Kernel("laplacian", gamma=2.0).svc_kwargs() == {"kernel": "laplacian", "gamma": 2.0}
    monkeypatch.setitem(KERNEL_PARAMETERS, "rbf", ("gamma", "coef0"))
    assert after.check_kernel("rbf", {"gamma": 1.0, "coef0": 0.5}) == {"gamma": 1.0, "coef0": 0.5}
    assert feature_kernels.Kernel("rbf", gamma=1.0, coef0=0.5).svc_kwargs() == {
        "kernel": "rbf",
        "gamma": 1.0,
        "coef0": 0.5,
    }
