"""svmlight/libsvm loader: round trips with scikit-learn's writer, multi-label lines, errors with line numbers,
and the same corpus as the hand-written parser it replaced."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from corpora_before import svmlight_before
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file

from xialpha.corpora import Corpus, load_corpus, load_svmlight
from xialpha.errors import UserError


def test_binary_round_trip_with_sklearn(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(30, 12, density=0.3, random_state=1, format="csr")
    y = np.where(rng.random(30) < 0.4, 1, -1)
    path = tmp_path / "data.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    corpus = load_svmlight(path, n_features=12)
    assert corpus.X.shape == (30, 12)
    np.testing.assert_allclose(corpus.X.toarray(), X.toarray())
    assert corpus.y("1").tolist() == y.tolist()
    assert set(corpus.category_counts()) == {"1", "-1"}
    assert corpus.ids.tolist() == [str(i) for i in range(1, 31)]  # no header/comment lines here


def test_multilabel_zero_based_round_trip(tmp_path):
    X = sp.csr_matrix(np.array([[0, 1.5, 0], [2.0, 0, 0], [0, 0, 3.0]]))
    labels = np.array([[0, 1, 0, 1], [0, 0, 0, 0], [0, 0, 1, 0]])  # indicator: label sets {1, 3}, {}, {2}
    path = tmp_path / "multi.svm"
    dump_svmlight_file(X, labels, str(path), zero_based=True, multilabel=True)
    corpus = load_corpus("svmlight", path=path)
    np.testing.assert_allclose(corpus.X.toarray(), X.toarray())  # index 0 present: read 0-based
    assert corpus.labels == [frozenset({"1", "3"}), frozenset(), frozenset({"2"})]


def test_comments_qid_and_canonical_labels(tmp_path):
    path = tmp_path / "misc.svm"
    path.write_text("# a header comment\n+1 qid:3 1:0.5 4:2 # doc a\n\n-1.0 2:1\n")
    corpus = load_svmlight(path)
    assert corpus.ids.tolist() == ["2", "4"]  # 1-based line numbers
    assert corpus.labels == [frozenset({"1"}), frozenset({"-1"})]
    assert corpus.X.toarray().tolist() == [[0.5, 0, 0, 2.0], [0, 1.0, 0, 0]]


@pytest.mark.parametrize(
    "content, message",
    [
        ("1 1:0.5\n1 2:abc\n", r"line 2: malformed svmlight line \(not a number"),
        ("1 1:0.5\n-1 3:1 2:1\n", "line 2: .*indices must increase"),
        ("1 1:0.5\n1 3\n", "line 2: .*expected <index>:<value>"),
        ("x 1:0.5\n", "line 1: .*not a number"),
        ("1 1:nan\n", r"line 1: .*\(a feature value that is not a finite number\)"),
        ("1 1:1\n1e999 2:1\n", r"line 2: .*\(label inf is not a finite number\)"),
        ("1 1:1\n" * 5000 + "1 -3:1\n", r"line 5001: .*\(feature index -3 is negative\)"),
        ("1 1:1\n1 3:1 qid:2\n", r"line 2: .*\(not a number: 'qid'\)"),  # read before scikit-learn; refused now
        ("1 1:1\n2,,7 1:1\n", r"line 2: .*\(not a number: ''\)"),
    ],
)
def test_malformed_lines_name_their_line_number(tmp_path, content, message):
    path = tmp_path / "bad.svm"
    path.write_text(content)
    with pytest.raises(UserError, match=message):
        load_svmlight(path)


def test_other_bad_inputs(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_svmlight(tmp_path / "missing.svm")
    empty = tmp_path / "empty.svm"
    empty.write_text("# only a comment\n\n")
    with pytest.raises(UserError, match="empty corpus"):
        load_svmlight(empty)
    wide = tmp_path / "wide.svm"
    wide.write_text("1 5:1\n")
    with pytest.raises(UserError, match="n_features: .*feature index 4"):
        load_svmlight(wide, n_features=3)
    binary = tmp_path / "binary.svm"
    binary.write_bytes(b"1 1:1\n\xff\xfe 2:1\n")
    with pytest.raises(UserError, match="line 2: .*not ASCII"):
        load_svmlight(binary)
    zero = tmp_path / "zero.svm"
    zero.write_text("1 0:1\n")
    with pytest.raises(
        UserError, match=r"zero.svm, line 1: .*feature index 0 in a file read as 1-based \(zero_based = false\)"
    ):
        load_svmlight(zero, zero_based=False)


def test_feature_indices_beyond_int32_are_refused(tmp_path):
    # before: an index beyond int64 raised OverflowError, and 2**62 made a matrix 2**62 columns wide
    for index in (10**25, 2**62, 2**31):
        path = tmp_path / "wide.svm"
        path.write_text(f"1 {index}:1\n")
        with pytest.raises(
            UserError, match=r"wide.svm, line 1: malformed svmlight line \(a feature index beyond 2,147,483,647\)"
        ):
            load_svmlight(path)
    with pytest.raises(UserError, match="n_features: must be an integer between 1 and 2,147,483,647"):
        load_svmlight(path, n_features=2**63 - 1)


@st.composite
def svmlight_text(draw) -> str:
    """Well-formed svmlight text: labels (none, one, several, non-canonical), qid, sorted indices,
    values including explicit zeros and extremes, comments, blank lines, CRLF endings."""
    label = st.sampled_from(["", "1", "-1", "+1", "1.0", "2,7", "7,2,2", "3.5", "-0", "1e3"])
    value = st.one_of(
        st.sampled_from(["0", "-0.0", "1e-300", "1e300", "1.5e-3", "+2"]),
        st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    )
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.sampled_from(["", "# a comment", "   ", "\t# x"])))
            continue
        indices = sorted(set(draw(st.lists(st.integers(0 if kind == 1 else 1, 40), max_size=6))))
        tokens = [draw(label)] + (["qid:7"] if kind == 2 else []) + [f"{i}:{draw(value)}" for i in indices]
        line = " ".join(token for token in tokens if token) or "1"
        lines.append(line + (" # trailing" if kind == 3 else ""))
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=svmlight_text(), zero_based=st.sampled_from(["auto", True, False]), n_features=st.sampled_from([None, 41, 60])
)
def test_the_same_corpus_as_the_hand_written_parser(tmp_path, text, zero_based, n_features):
    path = tmp_path / "same.svm"
    path.write_text(text, newline="")
    try:
        ids, X, labels = svmlight_before(path, n_features, zero_based)
    except ValueError:  # refused before (index 0 read as 1-based): refused now
        with pytest.raises(UserError):
            load_svmlight(path, n_features, zero_based)
        return
    if not ids:
        return
    corpus = load_svmlight(path, n_features, zero_based)
    assert corpus.ids.tolist() == ids and corpus.labels == labels
    assert corpus.X.shape == X.shape
    for part in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(corpus.X, part), getattr(X, part), strict=False)
    assert np.signbit(corpus.X.data).tolist() == np.signbit(X.data).tolist()  # -0.0 stays -0.0
    assert corpus.fingerprint() == Corpus(ids=ids, X=X, labels=labels, name=corpus.name).fingerprint()
