"""The span estimate against brute-force leave-one-out and its documented edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from xialpha.errors import UserError
from xialpha.estimators.loo import loo_exact
from xialpha.estimators.span import span_estimate, span_loo_margins, span_squared
from xialpha.estimators.svm import SVMFit, SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha


def _problem(seed: int, n: int = 16, dim: int = 3, noise: float = 0.0, gap: float = 0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dim))
    w = rng.normal(size=dim)
    y = np.where(X @ w + noise * rng.normal(size=n) > 0, 1, -1)
    y[:2] = (1, -1)  # both classes, whatever the draw
    X += gap * y[:, None] * w / np.linalg.norm(w)
    return X, y


MAX_ITER = 10**5  # libsvm can cycle at tol 1e-10 on rank-deficient Grams: such fits are skipped


def _left_out(y, C, gram, t, tol):
    """The fit without example t, or None where libsvm stopped at MAX_ITER."""
    weights = np.ones(y.shape[0])
    weights[t] = 0.0
    fit = fit_svm(
        TrainingProblem(y, gram=gram, weights=weights), SVMParameters(C, tol=tol, max_iter=MAX_ITER), check_input=False
    )
    return None if fit.model.n_iter_[0] >= MAX_ITER else fit


def _sv_sets(fit):
    support = fit.alpha > 0
    return set(np.flatnonzero(support & ~fit.bounded)), set(np.flatnonzero(fit.bounded))


@pytest.mark.filterwarnings("ignore:Solver terminated early")
@pytest.mark.parametrize("C, gap, noise", [(100.0, 0.5, 0.0), (1.0, 0.3, 0.0), (1.0, 0.0, 0.8)])
def test_span_margin_is_exact_loo_margin_when_sv_sets_do_not_change(C, gap, noise):
    """Separable (hard and soft margin) and noisy problems: wherever leaving t out keeps the sets of
    unbounded and bounded SVs, the span margin is the brute-force LOO margin, so the error calls agree
    (non-SVs included: leaving one out changes nothing)."""
    checked = 0
    for seed in range(12):
        X, y = _problem(seed, gap=gap, noise=noise)
        gram = X @ X.T
        fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(C, tol=1e-10, max_iter=MAX_ITER))
        margins = span_loo_margins(fit, gram)
        indicator = span_estimate(fit, gram).indicator
        unbounded, bounded = _sv_sets(fit)
        for t in range(y.shape[0]):
            loo_fit = _left_out(y, C, gram, t, tol=1e-10)
            if loo_fit is None or _sv_sets(loo_fit) != (unbounded - {t}, bounded - {t}):
                continue  # not converged, or the span assumption does not hold for t
            exact = y[t] * loo_fit.decision[t]
            assert margins[t] == pytest.approx(exact, abs=1e-4)  # libsvm's precision at alpha ~ C = 100
            assert indicator[t] == (exact <= 0)
            checked += t in fit.support
    assert checked >= 5


def test_span_error_count_is_closer_to_loo_than_xi_alpha_bound_over_50_problems():
    span_gap, bound_gap = [], []
    for seed in range(50):
        X, y = _problem(1000 + seed, n=40, dim=5, noise=0.7)
        gram = X @ X.T
        C = float(10 ** np.random.default_rng(seed).uniform(-1, 1.5))
        fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(C, tol=1e-6))
        loo = loo_exact(TrainingProblem(y, gram=gram), SVMParameters(C, tol=1e-6), fit=fit).d
        span_gap.append(abs(span_estimate(fit, gram).d - loo))
        bound = xi_alpha(fit.alpha, fit.xi, y, r_delta_squared(gram=gram), rho=2.0)
        bound_gap.append(abs(bound.d - loo))
    # Measured: about 2 vs 9 errors on average (n = 40); the margin is many standard errors.
    assert np.mean(span_gap) < 0.5 * np.mean(bound_gap)


def test_non_support_vectors_are_never_errors_and_counts_match_indicator():
    X, y = _problem(3, n=30, noise=0.5)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(1.0))
    estimate = span_estimate(fit, gram)
    assert not estimate.indicator[fit.alpha == 0].any()
    assert np.isnan(span_squared(fit, gram)[fit.alpha == 0]).all()
    assert estimate.d_pos == (estimate.indicator & (y > 0)).sum()
    assert estimate.d_neg == (estimate.indicator & (y < 0)).sum()


def test_gram_from_features_gives_the_same_estimate_as_the_feature_fit():
    X, y = _problem(4, n=30, noise=0.5)
    gram = X @ X.T
    from_features = span_estimate(fit_svm(TrainingProblem(y, X=X), SVMParameters(2.0, tol=1e-8)), gram)
    from_gram = span_estimate(fit_svm(TrainingProblem(y, gram=gram), SVMParameters(2.0, tol=1e-8)), gram)
    assert np.array_equal(from_features.indicator, from_gram.indicator)


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


def _squared_distances(X):
    sq = np.einsum("ij,ij->i", X, X)
    return sq[:, None] + sq[None, :] - 2 * X @ X.T


def test_no_unbounded_sv_falls_back_to_the_sv_diameter():
    X = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    fit = _crafted_fit([1, 1, -1, -1], alpha=[0.5, 0.5, 0.5, 0.0], c_i=[0.5] * 4, decision=[0.2, 0.9, -0.5, -3.0])
    spans = span_squared(fit, X @ X.T)
    assert spans[:3] == pytest.approx([10.0] * 3)  # largest squared distance among SVs 0, 1, 2
    assert np.isnan(spans[3])
    # margins 0.2 - 5, 0.9 - 5, 0.5 - 5: every SV is an error, the non-SV is not
    assert span_estimate(fit, X @ X.T).indicator.tolist() == [True, True, True, False]


def test_single_unbounded_sv_gets_the_diameter_and_bounded_svs_their_distance_to_it():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    fit = _crafted_fit([1, -1, -1, 1], alpha=[0.3, 1.0, 1.0, 1.0], c_i=[1.0] * 4, decision=[1.0, -1.0, -0.2, 0.5])
    spans = span_squared(fit, X @ X.T)
    distances = _squared_distances(X)
    assert spans[0] == pytest.approx(distances.max())
    assert spans[1:] == pytest.approx(distances[0, 1:], abs=1e-6)


def test_duplicate_unbounded_svs_have_span_near_zero():
    X = np.eye(5)[[0, 0, 1, 2, 3]]  # the affine hull of e1, e3, e4 is at squared distance 4/3 from e2
    fit = _crafted_fit([1, 1, 1, -1, -1], alpha=[0.2, 0.3, 0.4, 0.5, 0.4], c_i=[1.0] * 5, decision=[1, 1, 1, -1, -1])
    spans = span_squared(fit, X @ X.T)
    assert np.isfinite(spans).all()
    assert spans[:2] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert spans[2] == pytest.approx(4 / 3)


def test_pseudo_inverse_fallback_agrees_with_the_cholesky_path(monkeypatch):
    X, y = _problem(5, n=40, noise=0.8)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(1.0, tol=1e-8))
    assert fit.n_bounded_sv > 0 and fit.n_sv - fit.n_bounded_sv > 1
    expected = span_squared(fit, gram)

    def not_positive_definite(matrix):
        raise np.linalg.LinAlgError("forced")

    monkeypatch.setattr(np.linalg, "cholesky", not_positive_definite)
    np.testing.assert_allclose(span_squared(fit, gram), expected, rtol=1e-6, atol=1e-8)


def test_wrong_gram_shape_is_a_one_line_user_error():
    X, y = _problem(6)
    fit = fit_svm(TrainingProblem(y, gram=X @ X.T), SVMParameters(1.0))
    with pytest.raises(UserError, match=r"^gram: must have shape \(16, 16\)"):
        span_estimate(fit, (X @ X.T)[:10])


def test_non_finite_kernel_values_of_support_vectors_are_rejected():
    X, y = _problem(7)
    gram = X @ X.T
    fit = fit_svm(TrainingProblem(y, gram=gram), SVMParameters(1.0))
    gram[fit.support[0], fit.support[-1]] = np.nan
    with pytest.raises(UserError, match="^gram: contains NaN or inf"):
        span_estimate(fit, gram)
