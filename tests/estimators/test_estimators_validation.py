"""Bad input: every estimator raises a one-line ValueError that names the argument and the problem."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.estimators.baselines import apparent, bootstrap, holdout, kfold
from xialpha.estimators.loo import loo_exact
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha

Y = np.array([1, -1, 1, -1, 1, -1])
X = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 1.1], [1.2, 0.1], [0.2, 0.8]])
GRAM = X @ X.T


def _with(array, index, value):
    out = np.array(array, dtype=float)
    out[index] = value
    return out


BAD_CALLS = {
    # labels
    "y: label 0": (
        lambda: fit_svm(TrainingProblem([1, 0, 1, -1, 1, -1], gram=GRAM), SVMParameters(1.0)),
        "y",
        "-1 or +1",
    ),
    "y: label 2": (
        lambda: fit_svm(TrainingProblem([1, 2, 1, -1, 1, -1], gram=GRAM), SVMParameters(1.0)),
        "y",
        "-1 or +1",
    ),
    "y: strings": (lambda: fit_svm(TrainingProblem(["a", "b"] * 3, gram=GRAM), SVMParameters(1.0)), "y", "-1 or +1"),
    "y: single class": (
        lambda: fit_svm(TrainingProblem(np.ones(6), gram=GRAM), SVMParameters(1.0)),
        "y",
        "single class",
    ),
    "y: NaN": (lambda: fit_svm(TrainingProblem(_with(Y, 1, np.nan), gram=GRAM), SVMParameters(1.0)), "y", "NaN"),
    "y: 2-d": (lambda: fit_svm(TrainingProblem(Y[:, None], gram=GRAM), SVMParameters(1.0)), "y", "1-dimensional"),
    "y: empty": (lambda: fit_svm(TrainingProblem([], gram=np.zeros((0, 0))), SVMParameters(1.0)), "y", "empty"),
    # C, j, rho, r_delta2
    "C: zero": (lambda: fit_svm(TrainingProblem(Y, gram=GRAM), SVMParameters(0.0)), "C", "> 0"),
    "C: negative": (lambda: fit_svm(TrainingProblem(Y, gram=GRAM), SVMParameters(-1.0)), "C", "> 0"),
    "C: NaN": (lambda: fit_svm(TrainingProblem(Y, gram=GRAM), SVMParameters(float("nan"))), "C", "> 0"),
    "C: text": (lambda: fit_svm(TrainingProblem(Y, gram=GRAM), SVMParameters("big")), "C", "number"),
    "j: zero": (lambda: fit_svm(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0, j=0.0)), "j", "> 0"),
    "rho: zero": (lambda: xi_alpha(np.zeros(6), np.zeros(6), Y, 1.0, rho=0.0), "rho", "> 0"),
    "rho: negative": (lambda: xi_alpha(np.zeros(6), np.zeros(6), Y, 1.0, rho=-2.0), "rho", "> 0"),
    "r_delta2: zero": (lambda: xi_alpha(np.zeros(6), np.zeros(6), Y, 0.0), "r_delta2", "> 0"),
    "r_delta2: inf": (lambda: xi_alpha(np.zeros(6), np.zeros(6), Y, float("inf")), "r_delta2", "> 0"),
    "r_delta2: negative (loo)": (
        lambda: loo_exact(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0), prune="xi_alpha", r_delta2=-1.0),
        "r_delta2",
        "> 0",
    ),
    # alpha, xi
    "alpha: length": (lambda: xi_alpha(np.zeros(5), np.zeros(6), Y, 1.0), "alpha", "shape"),
    "alpha: negative": (lambda: xi_alpha(_with(np.zeros(6), 0, -0.1), np.zeros(6), Y, 1.0), "alpha", ">= 0"),
    "xi: NaN": (lambda: xi_alpha(np.zeros(6), _with(np.zeros(6), 2, np.nan), Y, 1.0), "xi", "NaN"),
    "xi: negative": (lambda: xi_alpha(np.zeros(6), _with(np.zeros(6), 2, -1.0), Y, 1.0), "xi", ">= 0"),
    # Gram matrix
    "gram: NaN": (
        lambda: fit_svm(TrainingProblem(Y, gram=_with(GRAM, (0, 1), np.nan)), SVMParameters(1.0)),
        "gram",
        "NaN",
    ),
    "gram: inf": (
        lambda: fit_svm(TrainingProblem(Y, gram=_with(GRAM, (2, 2), np.inf)), SVMParameters(1.0)),
        "gram",
        "NaN or inf",
    ),
    "gram: not square": (lambda: fit_svm(TrainingProblem(Y, gram=GRAM[:, :5]), SVMParameters(1.0)), "gram", "square"),
    "gram: rows vs labels": (
        lambda: fit_svm(TrainingProblem(Y[:5], gram=GRAM), SVMParameters(1.0)),
        "gram",
        "5 labels",
    ),
    "gram: radius NaN": (lambda: r_delta_squared(gram=_with(GRAM, (0, 0), np.nan)), "gram", "NaN"),
    "gram: radius not square": (lambda: r_delta_squared(gram=np.ones((2, 3))), "gram", "square"),
    "gram, X: both": (
        lambda: fit_svm(TrainingProblem(Y, gram=GRAM, X=X), SVMParameters(1.0)),
        "gram, X",
        "exactly one",
    ),
    "gram, X: neither": (lambda: fit_svm(TrainingProblem(Y), SVMParameters(1.0)), "gram, X", "exactly one"),
    "gram, X: radius neither": (lambda: r_delta_squared(), "gram, X", "exactly one"),
    # features
    "X: NaN": (lambda: fit_svm(TrainingProblem(Y, X=_with(X, (1, 1), np.nan)), SVMParameters(1.0)), "X", "NaN"),
    "X: inf sparse": (
        lambda: fit_svm(TrainingProblem(Y, X=sp.csr_matrix(_with(X, (1, 1), np.inf))), SVMParameters(1.0)),
        "X",
        "NaN or inf",
    ),
    "X: rows vs labels": (lambda: fit_svm(TrainingProblem(Y, X=X[:4]), SVMParameters(1.0)), "X", "4 rows"),
    "X: 1-d": (lambda: fit_svm(TrainingProblem(Y, X=X[:, 0]), SVMParameters(1.0)), "X", "2-dimensional"),
    "X: radius inf": (lambda: r_delta_squared(X=_with(X, (0, 0), np.inf)), "X", "NaN or inf"),
    # kernels
    "kernel: unknown": (
        lambda: fit_svm(TrainingProblem(Y, X=X, kernel="cosine"), SVMParameters(1.0)),
        "kernel",
        "must be one of",
    ),
    "kernel: radius unknown": (lambda: r_delta_squared(X=X, kernel="laplacian"), "kernel", "must be one of"),
    "gamma: missing for rbf": (
        lambda: fit_svm(TrainingProblem(Y, X=X, kernel="rbf"), SVMParameters(1.0)),
        "kernel_params.gamma",
        "number",
    ),
    "gamma: radius missing": (lambda: r_delta_squared(X=X, kernel="rbf"), "kernel_params.gamma", "number"),
    "gamma: negative": (
        lambda: fit_svm(TrainingProblem(Y, X=X, kernel="rbf", kernel_params={"gamma": -1}), SVMParameters(1.0)),
        "kernel_params.gamma",
        "> 0",
    ),
    "kernel_params: unknown": (
        lambda: fit_svm(TrainingProblem(Y, X=X, kernel_params={"gamma": 1.0}), SVMParameters(1.0)),
        "kernel_params",
        "gamma",
    ),
    # sample weights
    "weights: length": (
        lambda: fit_svm(TrainingProblem(Y, gram=GRAM, weights=np.ones(5)), SVMParameters(1.0)),
        "weights",
        "shape",
    ),
    "weights: negative": (
        lambda: fit_svm(TrainingProblem(Y, gram=GRAM, weights=_with(np.ones(6), 0, -1)), SVMParameters(1.0)),
        "weights",
        ">= 0",
    ),
    "weights: all zero": (
        lambda: fit_svm(TrainingProblem(Y, gram=GRAM, weights=np.zeros(6)), SVMParameters(1.0)),
        "weights",
        "none",
    ),
    "weights: one class": (
        lambda: fit_svm(TrainingProblem(Y, gram=GRAM, weights=(Y > 0).astype(float)), SVMParameters(1.0)),
        "weights",
        "single class",
    ),
    "weights: NaN": (
        lambda: fit_svm(TrainingProblem(Y, gram=GRAM, weights=_with(np.ones(6), 0, np.nan)), SVMParameters(1.0)),
        "weights",
        "NaN",
    ),
    # resampling estimators check the data they retrain on
    "k: too large": (lambda: kfold(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0), k=4), "k", "smaller class"),
    "k: one": (lambda: kfold(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0), k=1), "k", "between 2"),
    "gram: kfold NaN": (
        lambda: kfold(TrainingProblem(Y, gram=_with(GRAM, (3, 4), np.nan)), SVMParameters(1.0), k=2),
        "gram",
        "NaN",
    ),
    "gram: kfold rows": (
        lambda: kfold(TrainingProblem(Y, gram=GRAM[:5, :5]), SVMParameters(1.0), k=2),
        "gram",
        "5 rows",
    ),
    "X: bootstrap NaN": (
        lambda: bootstrap(TrainingProblem(Y, X=_with(X, (0, 1), np.nan)), SVMParameters(1.0), n_boot=2),
        "X",
        "NaN",
    ),
    "gram, X: kfold neither": (lambda: kfold(TrainingProblem(Y), SVMParameters(1.0), k=2), "gram, X", "exactly one"),
    "weights: kfold": (
        lambda: kfold(TrainingProblem(Y, gram=GRAM, weights=np.ones(6)), SVMParameters(1.0), k=2),
        "weights",
        "not accepted",
    ),
    "method: bootstrap": (
        lambda: bootstrap(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0), method=".5"),
        "method",
        "must be one of",
    ),
    "n_boot: zero": (lambda: bootstrap(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0), n_boot=0), "n_boot", ">= 1"),
    "C: loo": (lambda: loo_exact(TrainingProblem(Y, gram=GRAM), SVMParameters(0.0)), "C", "> 0"),
    "y: loo labels": (
        lambda: loo_exact(TrainingProblem([1, 0, 1, -1, 1, -1], gram=GRAM), SVMParameters(1.0)),
        "y",
        "-1 or +1",
    ),
    "X: loo NaN": (lambda: loo_exact(TrainingProblem(Y, X=_with(X, (5, 0), np.nan)), SVMParameters(1.0)), "X", "NaN"),
    "prune: loo unknown": (
        lambda: loo_exact(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0), prune="lemma"),
        "prune",
        "must be one of",
    ),
    "weights: loo": (
        lambda: loo_exact(TrainingProblem(Y, gram=GRAM, weights=np.ones(6)), SVMParameters(1.0)),
        "weights",
        "not accepted",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_names_argument_in_one_line(case):
    call, argument, problem = BAD_CALLS[case]
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{argument}:"), message
    assert problem in message, message
    assert "\n" not in message


@pytest.fixture(scope="module")
def fit():
    return fit_svm(TrainingProblem(Y, gram=GRAM), SVMParameters(1.0))


def test_fit_trained_on_other_labels_is_rejected(fit):
    other = -Y
    for call in (
        lambda: loo_exact(TrainingProblem(other, gram=GRAM), SVMParameters(1.0), fit=fit),
        lambda: bootstrap(TrainingProblem(other, gram=GRAM), SVMParameters(1.0), fit=fit, n_boot=2),
    ):
        with pytest.raises(ValueError, match=r"^fit: was trained on other labels than y$"):
            call()


@pytest.mark.parametrize(
    "y_test, data, argument",
    [
        ([1, 0], GRAM[:2], "y_test"),
        ([1], GRAM[:3], "y_test"),  # would broadcast against three decisions
        ([[1, -1, 1]], GRAM[:3], "y_test"),
        ([1, -1, 1], GRAM[:3, :4], "data"),
        ([1, -1], _with(GRAM[:2], (1, 2), np.nan), "data"),  # NaN decisions would count as correct
    ],
)
def test_holdout_bad_input(fit, y_test, data, argument):
    with pytest.raises(ValueError, match=rf"^{argument}: "):
        holdout(fit, y_test, data)


def test_decision_function_features_path_rejects_nan():
    fit = fit_svm(TrainingProblem(Y, X=X), SVMParameters(1.0))
    with pytest.raises(ValueError, match=r"^data: contains NaN or inf$"):
        fit.decision_function(_with(X[:2], (0, 0), np.nan))


def test_apparent_and_good_inputs_still_work(fit):
    assert apparent(fit).n == 6
    assert holdout(fit, [1.0, -1.0], GRAM[:2]).n == 2
    assert (
        loo_exact(TrainingProblem(Y.tolist(), X=X.tolist()), SVMParameters(1.0)).n == 6
    )  # lists are accepted like arrays
    assert kfold(TrainingProblem(Y, X=X.tolist()), SVMParameters(1.0), k=3).retrains == 3
    assert bootstrap(TrainingProblem(Y, gram=GRAM.tolist()), SVMParameters(1.0), n_boot=2, method="e0").retrains == 2
