"""Issue 36 item 2: the C ladder of svm.C = "auto" starts where the alphas sit at their bounds and
doubles C until the solution stops changing (no bounded SV left, or errors and ||w|| settled)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.estimators.c_ladder import LadderPoint, first_rung, ladder, settled, starting_C
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm


def _data(n: int = 120, d: int = 30, noise: float = 0.3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] - X[:, 1] + noise * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def test_the_starting_C_is_one_over_the_largest_balanced_margin_rounded_down_to_a_power_of_two():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    assert starting_C(X, y) == 0.25  # s = 2 (1, -1), mu = (0.5, 1): margins (3, -1, 1, -3), 1/3 -> 2^-2
    assert starting_C(sp.csr_matrix(X), y, j=0.5) == 0.5  # s = 1 (1, -1): margins (1.5, ...), 2/3 -> 2^-1
    with pytest.raises(ValueError, match="class means are alike"):
        starting_C(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="one class only"):
        starting_C(X, np.ones(4))


def test_on_a_gram_the_starting_C_is_the_features_one_and_the_first_rung_climbs_by_the_factor():
    X, y = _data(noise=1.0, seed=3)
    assert starting_C(None, y, 2.0, gram=X @ X.T) == starting_C(X, y, 2.0)
    rbf = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    assert 0 < starting_C(None, y, gram=rbf) != starting_C(X, y)  # the kernel's own feature space
    assert first_rung(0.25, 4, 4.0) == [0.25, 1.0, 4.0, 16.0]


def test_at_the_starting_C_nearly_every_alpha_is_at_its_bound_and_it_is_above_liblinears():
    X, y = _data()
    C = starting_C(X, y)
    assert C >= 1.0 / (len(y) * (np.linalg.norm(X, axis=1) ** 2).max())
    fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(C))
    assert fit.n_bounded_sv >= 0.9 * len(y)
    assert fit_svm(TrainingProblem(y, X=X), SVMParameters(64 * C)).n_bounded_sv < 0.9 * len(
        y
    )  # and C x 64 learns something


def test_the_point_of_a_fit_has_the_norm_of_its_weight_vector():
    X, y = _data()
    fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0))
    point = LadderPoint.of(fit, 1.0)
    assert point.w_norm == pytest.approx(np.linalg.norm(fit.w), rel=1e-6)
    assert point.training_errors == int((y * fit.decision <= 0).sum()) and point.n_bounded_sv == fit.n_bounded_sv


@pytest.mark.parametrize(
    "after, expected",
    [
        (LadderPoint(2.0, 0, 9, 3.0), True),  # no bounded SV left
        (LadderPoint(2.0, 5, 10, 2.01), True),  # errors and ||w|| within 1%
        (LadderPoint(2.0, 5, 12, 2.0), False),  # errors moved
        (LadderPoint(2.0, 5, 10, 2.1), False),  # ||w|| moved
    ],
)
def test_a_solution_has_settled_when_no_bound_is_left_or_nothing_moved(after, expected):
    assert settled(LadderPoint(1.0, 5, 10, 2.0), after) is expected


def test_the_ladder_doubles_C_until_settled_or_the_limit():
    def fit_at(C: float) -> LadderPoint:
        return LadderPoint(C, 5, 10, min(C, 4.0))  # ||w|| grows until C = 4

    assert [p.C for p in ladder(fit_at, 0.5, limit=16)] == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert [p.C for p in ladder(fit_at, 0.5, limit=3)] == [0.5, 1.0, 2.0]


def test_on_separable_data_the_ladder_stops_once_no_bound_is_left():
    X, y = _data(noise=0.0)
    points = ladder(
        lambda C: LadderPoint.of(fit_svm(TrainingProblem(y, X=X), SVMParameters(C)), C), starting_C(X, y), limit=40
    )
    assert len(points) < 40 and points[-1].n_bounded_sv == 0
