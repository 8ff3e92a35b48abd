"""The extended xi-alpha estimate: SVMlight's -k search depth, checked against a loop-by-loop model."""

from __future__ import annotations

import numpy as np
import pytest

from xialpha.errors import UserError
from xialpha.estimators.extended import xi_alpha_extended
from xialpha.estimators.svm import SVMFit, SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha


def _problem(seed: int, n: int = 60, dim: int = 8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dim))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=dim) + 0.6 * rng.normal(size=n) > 0, 1, -1)
    y[:2] = (1, -1)
    return X, y


def _crafted_fit(y, alpha, c_i, decision) -> SVMFit:
    """An SVMFit with chosen dual variables, for configurations libsvm rarely produces."""
    y, alpha, c_i, decision = (np.asarray(v, dtype=float) for v in (y, alpha, c_i, decision))
    return SVMFit(
        y=y.astype(np.int8),
        alpha=alpha,
        xi=np.maximum(0.0, 1 - y * decision),
        b=0.0,
        c_i=c_i,
        decision=decision,
        support=np.flatnonzero(alpha > 0),
        fit_seconds=0.0,
        model=None,
        precomputed=True,
    )


def _one_example_at_a_time(fit, gram, r_delta2, rho, depth):
    """The rule as SVMlight states it, one flagged example and one candidate at a time."""
    unbounded = [i for i in range(fit.y.size) if 0 < fit.alpha[i] and not fit.bounded[i]]
    errors = np.zeros(fit.y.size, dtype=bool)
    for t in range(fit.y.size):
        a, xi = fit.alpha[t], fit.xi[t]
        if rho * a * r_delta2 + xi < 1:
            continue
        if depth == 0:
            errors[t] = True
            continue
        stop_below = (1 - xi - a * r_delta2) / (2 * a) if a > 0 else -np.inf
        chosen, best = [], 0.0
        for d in range(depth):
            best_value, best_i = None, None
            for i in unbounded:
                if i == t or i in chosen:
                    continue
                members = chosen + [i]
                mean_sq = sum(gram[j, k] for j in members for k in members) / len(members) ** 2
                value = mean_sq / 2 - sum(gram[t, j] for j in members) / len(members)
                if best_value is None or value < best_value:
                    best_value, best_i = value, i
                if value < stop_below:
                    break
            if best_value is None:
                break
            chosen.append(best_i)
            if d == 0 or best_value < best:
                best = best_value
            if best < stop_below:
                break
        errors[t] = a * gram[t, t] + 2 * a * best + xi >= 1
    return errors


@pytest.mark.parametrize(
    "seed, C, rho, depth", [(0, 1.0, 1.0, 1), (1, 5.0, 1.0, 3), (2, 20.0, 2.0, 10), (3, 2.0, 1.0, 100)]
)
def test_matches_the_rule_applied_one_example_at_a_time(seed, C, rho, depth):
    X, y = _problem(seed)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(C))
    r_delta2 = r_delta_squared(gram=gram)
    expected = _one_example_at_a_time(fit, gram, r_delta2, rho, depth)
    estimate = xi_alpha_extended(fit, gram, r_delta2, rho=rho, depth=depth)
    assert estimate.method == "xa_ext"
    assert np.array_equal(estimate.indicator, expected)


def test_search_stops_at_the_first_candidate_below_the_r_delta2_threshold():
    # t = 0 is flagged (rho 3, alpha 1, xi 0.5). SVMlight stops a depth at the first candidate with
    # sim < (1 - xi - alpha R_delta^2) / (2 alpha), which is 0.15 for R_delta^2 = 0.2 < K_tt = 1:
    # candidate 1 (sim -0.224, distance 1 - 0.4475) ends the search, and 1.0525 >= 1 keeps t an
    # error although candidate 2 (sim -0.499) would clear it. With R_delta^2 = K_tt the threshold
    # is -0.25, candidate 1 does not stop the search and candidate 2 clears t.
    X = np.array([[1.0, 0.0, 0.0], [0.45, 0.5, 0.0], [0.98, 0.0, 0.05]])
    fit = _crafted_fit([1, 1, -1], alpha=[1.0, 0.1, 0.1], c_i=[1.0] * 3, decision=[0.5, 1.0, -1.0])
    gram = X @ X.T
    assert xi_alpha_extended(fit, gram, 0.2, rho=3.0, depth=2).indicator.tolist() == [True, False, False]
    assert xi_alpha_extended(fit, gram, 1.0, rho=3.0, depth=2).indicator.tolist() == [False, False, False]
    for r_delta2 in (0.2, 1.0):
        assert np.array_equal(
            xi_alpha_extended(fit, gram, r_delta2, rho=3.0, depth=2).indicator,
            _one_example_at_a_time(fit, gram, r_delta2, 3.0, 2),
        )


def test_depth_zero_is_plain_xi_alpha():
    X, y = _problem(5)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(10.0))
    for rho in (1.0, 2.0):
        plain = xi_alpha(fit.alpha, fit.xi, y, 1.0, rho=rho)
        assert np.array_equal(xi_alpha_extended(fit, gram, 1.0, rho=rho, depth=0).indicator, plain.indicator)


def test_flags_a_subset_of_xi_alpha_and_never_more_with_more_depth():
    X, y = _problem(6, n=80)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(1.0))
    plain = xi_alpha(fit.alpha, fit.xi, y, 1.0).indicator
    counts = []
    for depth in (1, 2, 5, 20):
        indicator = xi_alpha_extended(fit, gram, 1.0, depth=depth).indicator
        assert not (indicator & ~plain).any()
        counts.append(indicator.sum())
    assert counts == sorted(counts, reverse=True)
    assert counts[-1] < counts[0] < plain.sum()  # measured: 47 flagged, 41 at depth 1, 35 at 20


def test_distance_to_the_mean_of_unbounded_svs_decides():
    # t = 0 (bounded, xi = 0.5, alpha = 1) is flagged (1 * 1 + 0.5 >= 1). Its candidates are the
    # unbounded SVs 1 and 2; the best mean is x_1 alone, at squared distance 0.02: 0.02 + 0.5 < 1.
    X = np.array([[1.0, 0.0], [0.9, 0.1], [-1.0, 0.0], [0.0, 1.0]])
    fit = _crafted_fit(
        [1, 1, -1, -1], alpha=[1.0, 0.4, 0.6, 0.8], c_i=[1.0, 1.0, 1.0, 0.8], decision=[0.5, 1.0, -1.0, 0.2]
    )
    estimate = xi_alpha_extended(fit, X @ X.T, 1.0, depth=2)
    assert estimate.indicator[0] == np.False_
    # t = 3 (bounded, xi = 1.2) stays an error: xi alone exceeds 1.
    assert estimate.indicator[3] == np.True_


def test_without_unbounded_svs_the_distance_to_the_origin_decides():
    X = np.array([[0.5, 0.0], [0.0, 1.0], [2.0, 0.0]])
    fit = _crafted_fit([1, -1, -1], alpha=[1.0, 1.0, 0.0], c_i=[1.0] * 3, decision=[0.3, 0.5, -2.0])
    # flagged with R_delta^2 = 4: t = 0 (4 + 0.7) and t = 1 (4 + 1.5); then alpha K_tt + xi:
    # 0.25 + 0.7 < 1 clears t = 0, 1 + 1.5 keeps t = 1.
    assert xi_alpha_extended(fit, X @ X.T, 4.0, depth=3).indicator.tolist() == [False, True, False]


@pytest.mark.parametrize("depth", [-1, 101, 2.5, True, "3"])
def test_bad_depth_is_a_user_error(depth):
    X, y = _problem(7, n=20)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(1.0))
    with pytest.raises(UserError, match="^depth: must be an integer from 0 to 100"):
        xi_alpha_extended(fit, gram, 1.0, depth=depth)


def test_bad_gram_and_r_delta2_are_rejected_by_name():
    X, y = _problem(8, n=20)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(1.0))
    with pytest.raises(UserError, match=r"^gram: must have shape \(20, 20\)"):
        xi_alpha_extended(fit, gram[:, :5], 1.0)
    with pytest.raises(ValueError, match="^r_delta2: must be a finite number > 0"):
        xi_alpha_extended(fit, gram, 0.0)
