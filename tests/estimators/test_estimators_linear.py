"""The linear path's solver (dual coordinate descent for the biased SVM) against the KKT conditions
and libsvm on hundreds of random problems; warm starts, sample weights, bad input, determinism."""

from __future__ import annotations

import tracemalloc
import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from xialpha.estimators.linear import ConvergenceWarning
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm

TOL = 1e-6
N_PROBLEMS = 220
LIBSVM_MAX_ITER = 1_000_000


def _problem(seed: int) -> dict:
    """Sparse or dense, imbalanced, sometimes unnormalised, with duplicate and all-zero rows."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(10, 81)), int(rng.integers(2, 51))
    y = np.where(rng.random(n) < rng.uniform(0.1, 0.5), 1, -1)
    y[:4] = [1, 1, -1, -1]
    X = rng.random((n, d)) * (rng.random((n, d)) < rng.uniform(0.1, 0.6))
    X[:, 0] += rng.uniform(0.0, 1.0) * (y > 0)
    if seed % 3:
        X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    X[5] = X[4]  # a duplicate row
    if seed % 5 == 0:
        X[6] = 0.0  # a row of zeros
    weights = None
    if seed % 4 == 0:
        weights = rng.integers(0, 3, size=n).astype(float)
        weights[:4] = 1.0
    return {
        "X": sp.csr_matrix(X) if seed % 2 else X,
        "dense": X,
        "y": y,
        "weights": weights,
        "C": float(10 ** rng.uniform(-2, 2.5)),
        "j": float(rng.choice([1.0, 0.5, 2.0, 5.0])),
    }


def _dual(alpha: np.ndarray, y: np.ndarray, X: np.ndarray) -> float:
    v = X.T @ (alpha * y)
    return float(v @ v / 2 - alpha.sum())


@pytest.fixture(scope="module")
def studies() -> list[dict]:
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(N_PROBLEMS):
            p = _problem(seed)
            parameters = SVMParameters(p["C"], j=p["j"], tol=TOL)
            gram = TrainingProblem(p["y"], gram=p["dense"] @ p["dense"].T, weights=p["weights"])
            ref = fit_svm(gram, replace(parameters, max_iter=LIBSVM_MAX_ITER))
            if ref.model.n_iter_[0] < LIBSVM_MAX_ITER:  # libsvm itself stalls on a few large-C problems
                fit = fit_svm(TrainingProblem(p["y"], X=p["X"], weights=p["weights"]), parameters)
                out.append({**p, "seed": seed, "fit": fit, "ref": ref})
    assert len(out) >= 200
    return out


def test_kkt_conditions_hold_on_every_problem(studies):
    bad = []
    for s in studies:
        fit, X = s["fit"], s["dense"]
        scale = max(1.0, float(np.abs(fit.decision).max()))
        atol = 1e-3 * scale
        margin = fit.y * fit.decision
        free = (fit.alpha > 0) & (fit.alpha < fit.c_i)
        ok = (
            np.all(fit.alpha >= 0)
            and np.all(fit.alpha <= fit.c_i)
            and abs(float(fit.alpha @ fit.y)) <= 1e-3 * max(1.0, fit.c_i.max())
            and np.allclose(fit.w, X.T @ (fit.alpha * fit.y), atol=1e-9)
            and np.allclose(fit.decision, X @ fit.w + fit.b, atol=1e-9)
            and np.allclose(fit.xi, np.maximum(0.0, 1.0 - margin))
            and np.all(np.abs(margin[free] - 1.0) <= atol)
            and np.all(margin[(fit.alpha == 0) & (fit.c_i > 0)] >= 1.0 - atol)
            and np.all(margin[(fit.alpha == fit.c_i) & (fit.c_i > 0)] <= 1.0 + atol)
            and np.all(fit.alpha[fit.c_i == 0] == 0)
        )
        if not ok:
            bad.append(s["seed"])
    assert bad == []


def test_dual_objective_equals_libsvms(studies):
    gaps = []
    for s in studies:
        ours, ref = _dual(s["fit"].alpha, s["y"], s["dense"]), _dual(s["ref"].alpha, s["y"], s["dense"])
        gaps.append((ours - ref) / max(1.0, abs(ref)))
    assert max(gaps) <= 1e-3, f"worst relative gap {max(gaps):.2e}"  # never worse than libsvm's optimum


def test_decisions_equal_libsvms_where_the_solution_is_unique(studies):
    unique = [s for s in studies if s["ref"].stable]
    assert len(unique) >= 0.5 * len(studies)
    worst = max(
        float(np.max(np.abs(s["fit"].decision - s["ref"].decision)) / max(1.0, np.abs(s["ref"].decision).max()))
        for s in unique
    )
    assert worst <= 1e-2


def test_a_warm_started_C_path_equals_cold_fits():
    for seed in range(30):
        p = _problem(1000 + seed)
        previous = None
        for C in (0.1, 1.0, 10.0, 1.0):  # up, then down: alphas above the new bound are clipped
            warm = fit_svm(TrainingProblem(p["y"], X=p["X"]), SVMParameters(C, j=p["j"], tol=TOL), warm_start=previous)
            cold = fit_svm(TrainingProblem(p["y"], X=p["X"]), SVMParameters(C, j=p["j"], tol=TOL))
            assert _dual(warm.alpha, p["y"], p["dense"]) == pytest.approx(
                _dual(cold.alpha, p["y"], p["dense"]), rel=1e-4, abs=1e-6
            )
            previous = warm


def test_an_ascending_C_path_keeps_its_solution_once_no_support_vector_is_at_its_bound():
    """Past the C where no alpha_i reaches C_i the solution is the hard-margin one: the next fit is
    the warm start itself (no solver pass), optimal at the new C; with a bounded SV the solver runs."""
    kept = solved = 0
    for seed in range(30):
        p = _problem(2000 + seed)
        X = sp.csr_matrix(p["dense"])
        previous = fit_svm(TrainingProblem(p["y"], X=X), SVMParameters(1.0, j=p["j"], tol=TOL), check_input=False)
        for C in (10.0, 100.0, 1000.0):
            fit = fit_svm(
                TrainingProblem(p["y"], X=X),
                SVMParameters(C, j=p["j"], tol=TOL),
                warm_start=previous,
                check_input=False,
            )
            cold = fit_svm(TrainingProblem(p["y"], X=X), SVMParameters(C, j=p["j"], tol=TOL), check_input=False)
            assert _dual(fit.alpha, p["y"], p["dense"]) == pytest.approx(
                _dual(cold.alpha, p["y"], p["dense"]), rel=1e-4, abs=1e-6
            )
            np.testing.assert_array_equal(fit.c_i, cold.c_i)
            if previous.n_bounded_sv == 0:
                assert fit.alpha is previous.alpha and fit.b == previous.b
                kept += 1
            else:
                assert fit.alpha is not previous.alpha
                solved += 1
            previous = fit
    assert kept >= 10 and solved >= 10


def test_leave_one_out_warm_start_drops_the_left_out_example():
    p = _problem(7)
    full = fit_svm(TrainingProblem(p["y"], X=p["X"]), SVMParameters(1.0, tol=TOL))
    t = int(np.flatnonzero(full.alpha > 0)[0])
    weights = np.ones(p["y"].size)
    weights[t] = 0.0
    left_out = fit_svm(TrainingProblem(p["y"], X=p["X"], weights=weights), SVMParameters(1.0, tol=TOL), warm_start=full)
    assert left_out.alpha[t] == 0.0
    rows = np.delete(np.arange(p["y"].size), t)
    alone = fit_svm(TrainingProblem(p["y"][rows], X=p["dense"][rows]), SVMParameters(1.0, tol=TOL))
    np.testing.assert_allclose(left_out.w, alone.w, atol=1e-4)


def test_zero_weight_removes_and_integer_weight_copies_an_example():
    p = _problem(11)
    y, X = p["y"], p["dense"]
    weights = np.ones(y.size)
    weights[[6, 9]] = [0.0, 2.0]
    weighted = fit_svm(TrainingProblem(y, X=X, weights=weights), SVMParameters(0.7, tol=TOL))
    rows = np.r_[np.delete(np.arange(y.size), 6), 9]  # without 6, with a second copy of 9
    copied = fit_svm(TrainingProblem(y[rows], X=X[rows]), SVMParameters(0.7, tol=TOL))
    np.testing.assert_allclose(weighted.w, copied.w, atol=1e-4)
    assert weighted.b == pytest.approx(copied.b, abs=1e-4)


def test_bad_input_names_the_argument():
    p = _problem(3)
    y, X = p["y"], sp.csr_matrix(p["dense"])
    broken = X.copy()
    broken.data[0] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN or inf"):
        fit_svm(TrainingProblem(y, X=broken), SVMParameters(1.0))
    with pytest.raises(ValueError, match="X: has"):
        fit_svm(TrainingProblem(y[:-1], X=X), SVMParameters(1.0))
    with pytest.raises(ValueError, match="weights: must be >= 0"):
        fit_svm(TrainingProblem(y, X=X, weights=-np.ones(y.size)), SVMParameters(1.0))
    with pytest.raises(ValueError, match="single class"):
        fit_svm(TrainingProblem(y, X=X, weights=(y > 0).astype(float)), SVMParameters(1.0))
    for C in (0.0, np.inf):
        with pytest.raises(ValueError, match="C: must be a finite number > 0"):
            fit_svm(TrainingProblem(y, X=X), SVMParameters(C))
    with pytest.raises(ValueError, match="tol: must be a finite number > 0"):
        fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0, tol=0.0))
    other = fit_svm(TrainingProblem(y[:-2], X=X[:-2]), SVMParameters(1.0))
    with pytest.raises(ValueError, match="warm_start: was fitted on"):
        fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0), warm_start=other)


def test_the_same_call_gives_the_same_bits():
    p = _problem(21)
    a, b = (fit_svm(TrainingProblem(p["y"], X=p["X"]), SVMParameters(3.0, tol=1e-4)) for _ in range(2))
    assert np.array_equal(a.alpha, b.alpha) and a.b == b.b


def test_an_unconverged_large_fit_warns(monkeypatch):
    import xialpha.estimators.svm as svm

    monkeypatch.setattr(svm, "LIBSVM_FALLBACK_ROWS", 0)  # no libsvm rescue: report it
    p = _problem(5)
    with pytest.warns(ConvergenceWarning, match="stopped after 1 passes"):
        fit = fit_svm(TrainingProblem(p["y"], X=p["X"]), SVMParameters(100.0, tol=1e-9, max_iter=1))
    assert not fit.converged


def test_a_large_sparse_problem_never_allocates_n_by_n():
    rng = np.random.default_rng(0)
    X = sp.random(20_000, 5_000, density=0.002, random_state=1, format="csr")
    y = np.where(X @ rng.normal(size=5_000) > 0, 1, -1)
    tracemalloc.start()
    fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert fit.converged and peak < 50 * 2**20  # an n x n float64 Gram would be 3.2 GB


def _pg_spread(fit) -> float:
    """The solver's stopping measure on a fit: max - min of the projected gradients (C_i > 0)."""
    active = fit.c_i > 0
    g = (fit.y * fit.decision - 1.0)[active]
    a, c = fit.alpha[active], fit.c_i[active]
    projected = np.where(a <= 0, np.minimum(g, 0.0), np.where(a >= c, np.maximum(g, 0.0), g))
    return float(projected.max() - projected.min())


def test_a_sweeps_C_path_meets_the_tolerance_at_every_C_as_cold_fits_do():
    """Ascending C as sweeps solve it (each fit warm-started from the last: alpha moved to the new
    bounds, b, the row statistics): every fit meets the solver's stopping rule, and its dual
    objective and decisions equal the cold fit's within what that tolerance allows."""
    tol = 1e-3
    for seed in range(3000, 3040):
        p = _problem(seed)
        X = sp.csr_matrix(p["dense"])
        previous = None
        for C in (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0):
            warm = fit_svm(
                TrainingProblem(p["y"], X=X, weights=p["weights"]),
                SVMParameters(C, j=p["j"], tol=tol),
                warm_start=previous,
                check_input=False,
            )
            cold = fit_svm(
                TrainingProblem(p["y"], X=X, weights=p["weights"]),
                SVMParameters(C, j=p["j"], tol=tol),
                check_input=False,
            )
            assert warm.converged and _pg_spread(warm) <= tol * (1 + 1e-9), (seed, C, _pg_spread(warm))
            assert _dual(warm.alpha, p["y"], p["dense"]) == pytest.approx(
                _dual(cold.alpha, p["y"], p["dense"]), rel=1e-2, abs=1e-3
            )
            previous = warm


def test_a_warm_start_moves_bounded_alphas_to_the_new_bounds():
    from xialpha.estimators.svm import carried_alpha

    p = _problem(31)
    fit = fit_svm(TrainingProblem(p["y"], X=p["X"]), SVMParameters(0.5, j=p["j"], tol=TOL))
    assert fit.n_bounded_sv > 0 and (fit.alpha > 0).sum() > fit.n_bounded_sv
    c_new = 2.0 * fit.c_i
    carried = carried_alpha(fit, c_new)
    np.testing.assert_array_equal(carried[fit.bounded], c_new[fit.bounded])
    np.testing.assert_array_equal(carried[~fit.bounded], fit.alpha[~fit.bounded])


def test_a_warm_start_reuses_the_row_statistics_only_where_they_are_the_same():
    from xialpha.estimators.linear import row_statistics, solve_linear

    p = _problem(13)
    X, y = sp.csr_matrix(p["dense"]), p["y"]
    first = fit_svm(TrainingProblem(y, X=X), SVMParameters(0.1, tol=TOL), check_input=False)
    fresh = row_statistics(X, first.c_i > 0)
    for name in ("mean", "x_m", "centered_sq"):
        np.testing.assert_allclose(getattr(first.statistics, name), getattr(fresh, name), rtol=1e-12, atol=1e-15)
    assert first.statistics.spread == pytest.approx(fresh.spread, rel=1e-12)
    # by hand: ||x_i - m||^2 and the centre of the rows
    centre = p["dense"].mean(axis=0)
    np.testing.assert_allclose(fresh.centered_sq, ((p["dense"] - centre) ** 2).sum(axis=1), atol=1e-12)
    second = fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0, tol=TOL), warm_start=first, check_input=False)
    assert second.statistics is first.statistics  # the same X and examples: reused, not recomputed
    weights = np.ones(y.size)
    weights[7] = 0.0  # another set of examples: another centre
    left_out = fit_svm(
        TrainingProblem(y, X=X, weights=weights), SVMParameters(1.0, tol=TOL), warm_start=first, check_input=False
    )
    assert left_out.statistics is not first.statistics
    np.testing.assert_allclose(left_out.statistics.mean, row_statistics(X, weights > 0).mean, rtol=1e-12)
    copy = fit_svm(TrainingProblem(y, X=X.copy()), SVMParameters(1.0, tol=TOL), warm_start=first, check_input=False)
    assert copy.statistics is not first.statistics  # another matrix object: never trusted to be equal
    # the solution is the same bits with reused and with fresh statistics
    c_i = second.c_i
    reused = solve_linear(X, y, c_i, tol=TOL, statistics=first.statistics, check_input=False)
    computed = solve_linear(X, y, c_i, tol=TOL, check_input=False)
    assert np.array_equal(reused.alpha, computed.alpha) and reused.b == computed.b


def test_a_fit_keeps_the_solvers_alpha_where_snapping_to_bounds_would_break_the_tolerance():
    """On this problem snapping the alphas within 2 |y^T alpha| of a bound moves the decision values
    by more than tol; the fit then keeps the solver's alpha, which meets it."""
    p = _problem(5134)
    fit = fit_svm(TrainingProblem(p["y"], X=p["X"], weights=p["weights"]), SVMParameters(0.05, j=p["j"], tol=1e-3))
    assert fit.converged and _pg_spread(fit) <= 1e-3
