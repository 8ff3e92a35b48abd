"""Where a warm-started C path's time goes, against cold LinearSVC(loss="hinge", tol=1e-4) fits at the same n.

Per category, the C path of config/reuters.toml's grid solved as sweeps solve it
(`fit_svm(TrainingProblem(y, X=X), SVMParameters(C, tol=TOL), warm_start=the previous C's fit,
check_input=False)`, ascending C, tol = 1e-3 as the spec's default), the same fits cold (no warm
start), and scikit-learn's LinearSVC(loss="hinge", tol=1e-4, random_state=0) cold at every C, the
fit peers run per fold. BLAS on one thread; seconds are CPU
seconds of this process (`time.process_time`), i.e. per core. Per xialpha fit:
  fit_s        the whole `fit_svm` call (input handling, per-fit statistics, the compiled solver,
               w, decision values, threshold): what a sweep's fit costs;
  solver_s     of which the compiled `dcd.solve_biased`; fixed_s = fit_s - solver_s;
  epochs       passes over the (shrunk) examples, summed over the multiplier subproblems;
  subproblems  multiplier subproblems (0: the previous C's solution met the tolerance as it was);
  full_pass_equivalents  examples visited / n: the epochs' work after shrinking, in passes over all
               the data (visited_share = that / epochs: shrinking's effect);
  visited_nnz  the nonzeros of the rows the solver examined (each is read by the row product, and
               again by the update where alpha_i moves); ns_per_visited_nnz = solver_s / visited_nnz:
               the inner loops' cost per nonzero; ns_per_nnz_epoch = solver_s / (epochs x nnz(X));
  pg_spread    the solver's stopping measure on the returned alpha: max - min over the examples of
               the projected gradients (y f - 1 at 0 < alpha < C_i, its negative part at alpha = 0,
               its positive part at alpha = C_i); <= tol is what `SVMParameters(tol=)` promises;
  kkt          the largest KKT violation at the returned threshold b: per example max(0, 1 - y f) at
               alpha = 0, max(0, y f - 1) at alpha = C_i, |y f - 1| in between (margin units);
  y_alpha      |y^T alpha|, the equality constraint's residual (alpha units; sum alpha beside it);
  primal       1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i f(x_i)) of the biased SVM.
LinearSVC solves the SVM with the bias as a regularised feature (intercept_scaling = 1), a slightly
different problem: its `primal` is the biased SVM's objective at its (w, b), beside ours
(`primal_rel_gap` = its primal / ours - 1, >= 0 up to our tolerance), and its iterations. scikit-learn
does not report how many nonzeros LIBLINEAR visited; its `ns_per_nnz_epoch` = fit_s / (iterations x
nnz(X)) counts every example in every iteration, so it is a lower bound on its ns per visited nonzero
(shrinking visits fewer), and it includes scikit-learn's copy of X into LIBLINEAR's format.
The three fits of each C run one after the other (warm, cold, LinearSVC), so load that comes and
goes on a shared machine hits all three. Headline: `warm_later_over_linearsvc_median` = median over
the categories of (the path's warm fit seconds except the first C, per fit) / (LinearSVC's per
fit), `warm_path_over_linearsvc_median` the same over the whole path (target <= 0.5), in one run.

`large`: make_synthetic(n_docs=10^5, n_categories=4, seed=0) (70% training, min_df = 3), 4
categories, the same grid.

    python bench/c_path.py            # Reuters ModApte train (10 categories) and the 10^5-document corpus
    python bench/c_path.py --quick    # a 600-document synthetic corpus, and 3,000
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from common import (
    REUTERS_SPEC,
    load_corpus,
    make_parser,
    output_path,
    print_table,
    vectorize,
    write_results,
)
from threadpoolctl import threadpool_limits

from xialpha.corpora import make_synthetic
from xialpha.estimators import dcd
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.features import Preprocessing
from xialpha.spec.sweep import load_spec

TOL = 1e-3  # the sweeps' default solver tolerance (SweepSpec.tol)
PEER_TOL = 1e-4  # LinearSVC's default
TARGET = 0.5  # a warm C-path fit <= half a cold LinearSVC fit
LARGE_DOCS, QUICK_LARGE_DOCS = 100_000, 3_000


class SolverClock:
    """Wraps `dcd.solve_biased` (which `xialpha.estimators.linear` calls through the module) to
    record, per call, its CPU seconds, epochs, subproblems, examples visited and their nonzeros."""

    def __init__(self):
        self.inner = dcd.solve_biased
        self.calls: list[tuple[float, int, int, int, int]] = []

    def __call__(self, *args):
        start = time.process_time()
        out = self.inner(*args)
        self.calls.append((time.process_time() - start, int(out[1]), int(out[2]), int(out[3]), int(out[4])))
        return out

    def take(self) -> tuple[float, int, int, int, int]:
        """(seconds, epochs, subproblems, visits, visited nonzeros) summed over the calls since the last take."""
        calls, self.calls = self.calls, []
        return tuple(sum(c[k] for c in calls) for k in range(5)) if calls else (0.0, 0, 0, 0, 0)


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument(
        "--categories", type=int, default=None, help="the most frequent categories (default 10, --quick 3)"
    )
    parser.add_argument(
        "--large",
        type=lambda text: int(float(text)),
        default=None,
        metavar="N_DOCS",
        help=f"documents of `large` (default {LARGE_DOCS:g}, --quick {QUICK_LARGE_DOCS}; 0 skips it)",
    )
    parser.add_argument("--large-categories", type=int, default=4)
    parser.add_argument(
        "--loose-tol",
        type=float,
        default=None,
        metavar="TOL",
        help="also solve the first corpus's C paths at this looser tol (e.g. 1e-2): per fit the duality gap, "
        "the margin band it certifies, and the xi-alpha and span calls that differ from the tol=1e-3 solve",
    )
    args = parser.parse_args()
    clock = SolverClock()
    dcd.solve_biased = clock
    grid = sorted(load_spec(REUTERS_SPEC).C)
    with threadpool_limits(limits=1):
        corpus = load_corpus(args)
        train = corpus.split("train")
        X, _ = vectorize(Preprocessing(min_df=3), train.texts)
        categories = train.choose_categories(top_k=args.categories or (3 if args.quick else 10))
        _warm_up(X, train.y(categories[0]), clock)
        if args.loose_tol:
            loose = _loose(X, [(c, train.y(c)) for c in categories], grid, args.loose_tol)
            clock.take()
        result = {
            "benchmark": "c_path",
            "quick": args.quick,
            "tol": TOL,
            "peer_tol": PEER_TOL,
            "C": grid,
            "reuters" if not args.quick else "small": _dataset(X, [(c, train.y(c)) for c in categories], grid, clock),
        }
        n_large = args.large if args.large is not None else (QUICK_LARGE_DOCS if args.quick else LARGE_DOCS)
        if n_large:
            synthetic = make_synthetic(n_docs=n_large, n_categories=args.large_categories, seed=0)
            strain = synthetic.split("train")
            _, XL = Preprocessing(min_df=3).fit_transform(strain.texts)
            chosen = synthetic.choose_categories(top_k=args.large_categories)
            result["large"] = {"n_docs": n_large, **_dataset(XL, [(c, strain.y(c)) for c in chosen], grid, clock)}
    result["target_warm_over_linearsvc"] = TARGET
    if args.loose_tol:
        result["loose_tol"] = loose
        print({k: v for k, v in loose.items() if k != "fits"}, flush=True)
    _print(result)
    write_results(result, output_path("c_path", args))


def _loose(X, targets: list[tuple[str, np.ndarray]], grid: list[float], loose_tol: float) -> dict:
    """Each C path warm-started at loose_tol and at TOL. Per loose fit: the duality gap G of its alphas
    made feasible (`linear.balance`) at libsvm's threshold, the band sqrt(2 G) it proves on every
    margin of a unit-norm row (P(w, b) - P* >= ||w - w*||^2 / 2; the threshold's own error comes on
    top), the examples whose margin lies within the band of 1 (where alpha_i and the calls are not
    certified), the largest margin and alpha changes to the TOL solve, and the xi-alpha (rho 1) and
    span calls that differ from the TOL solve's."""
    from xialpha.estimators.linear import balance, threshold
    from xialpha.estimators.span import span_estimate
    from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha_indicator

    r_delta2 = r_delta_squared(X=X)
    fits = []
    for category, y in targets:
        loose = tight = None
        for C in grid:
            loose = fit_svm(
                TrainingProblem(y, X=X), SVMParameters(C, tol=loose_tol), check_input=False, warm_start=loose
            )
            tight = fit_svm(TrainingProblem(y, X=X), SVMParameters(C, tol=TOL), check_input=False, warm_start=tight)
            yf = loose.y.astype(np.float64)
            alpha = balance(loose.alpha.copy(), yf)
            w = np.asarray(X.T @ (alpha * yf)).ravel()
            wx = np.asarray(X @ w).ravel()
            b = threshold(yf, alpha, loose.c_i, wx, loose.b)
            margins = yf * (wx + b)
            gap = _primal(w, b, X, yf, loose.c_i) - (alpha.sum() - 0.5 * w @ w)
            band = float(np.sqrt(2.0 * max(gap, 0.0)) * np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).max()))
            fits.append(
                {
                    "category": category,
                    "C": C,
                    "gap": float(gap),
                    "band": band,
                    "in_band_share": float(np.mean(np.abs(margins - 1.0) <= band)),
                    "margin_change_max": float(np.abs(loose.y * loose.decision - tight.y * tight.decision).max()),
                    "alpha_change_max": float(np.abs(loose.alpha - tight.alpha).max()),
                    "xa_calls_differing": int(
                        (
                            xi_alpha_indicator(loose.alpha, loose.xi, r_delta2)
                            != xi_alpha_indicator(tight.alpha, tight.xi, r_delta2)
                        ).sum()
                    ),
                    "span_calls_differing": int(
                        (span_estimate(loose).indicator != span_estimate(tight).indicator).sum()
                    ),
                }
            )
    return {
        "tol": loose_tol,
        "band_min": min(f["band"] for f in fits),
        "in_band_share_min": min(f["in_band_share"] for f in fits),
        "margin_change_max": max(f["margin_change_max"] for f in fits),
        "fits_with_differing_xa_calls": sum(f["xa_calls_differing"] > 0 for f in fits),
        "fits_with_differing_span_calls": sum(f["span_calls_differing"] > 0 for f in fits),
        "n_fits": len(fits),
        "fits": fits,
    }


def _warm_up(X, y, clock: SolverClock) -> None:
    """Compile (or load from numba's cache) the solver once, outside the figures."""
    fit_svm(TrainingProblem(y, X=X), SVMParameters(1.0, tol=TOL), check_input=False)
    clock.take()


def _dataset(X, targets: list[tuple[str, np.ndarray]], grid: list[float], clock: SolverClock) -> dict:
    print(f"{X.shape[0]:,} training documents, {X.shape[1]:,} features, nnz {X.nnz:,}", flush=True)
    paths = [
        {"category": category, "n_pos": int((y > 0).sum()), **_category(X, np.asarray(y), grid, clock)}
        for category, y in targets
    ]
    summary = {}
    for name in ("warm_later", "warm_path", "cold"):
        ratios = [p[f"{name}_over_linearsvc"] for p in paths]
        summary[f"{name}_over_linearsvc_median"] = float(np.median(ratios))
    summary["warm_first_C_s_mean"] = float(np.mean([p["warm"][0]["fit_s"] for p in paths]))
    summary["warm_later_C_s_mean"] = float(np.mean([f["fit_s"] for p in paths for f in p["warm"][1:]]))
    for key in ("warm", "cold", "linearsvc"):
        summary[f"{key}_fit_s_mean"] = float(np.mean([f["fit_s"] for p in paths for f in p[key]]))
    for key in ("warm", "cold"):
        fits = [f for p in paths for f in p[key]]
        for measure in ("pg_spread", "kkt", "y_alpha"):
            summary[f"{key}_{measure}_max"] = float(max(f[measure] for f in fits))
        summary[f"{key}_epochs_mean"] = float(np.mean([f["epochs"] for f in fits]))
        summary[f"{key}_subproblems_mean"] = float(np.mean([f["subproblems"] for f in fits]))
        summary[f"{key}_full_pass_equivalents_mean"] = float(np.mean([f["full_pass_equivalents"] for f in fits]))
        summary[f"{key}_ns_per_visited_nnz_median"] = _median(f["ns_per_visited_nnz"] for f in fits)
        summary[f"{key}_ns_per_nnz_epoch_median"] = _median(f["ns_per_nnz_epoch"] for f in fits)
        summary[f"{key}_fixed_share"] = float(
            sum(f["fit_s"] - f["solver_s"] for f in fits) / sum(f["fit_s"] for f in fits)
        )
    summary["linearsvc_ns_per_nnz_epoch_median"] = _median(f["ns_per_nnz_epoch"] for p in paths for f in p["linearsvc"])
    return {"n_train": int(X.shape[0]), "n_features": int(X.shape[1]), "nnz": int(X.nnz), **summary, "paths": paths}


def _median(values) -> float | None:
    """The median of the values that are not None (None if there are none)."""
    kept = [v for v in values if v is not None]
    return float(np.median(kept)) if kept else None


def _category(X, y: np.ndarray, grid: list[float], clock: SolverClock) -> dict:
    from sklearn.svm import LinearSVC

    warm, cold, peer = [], [], []
    previous = None
    for C in grid:  # the three fits of one C one after the other, so load that comes and goes hits all three
        start = time.process_time()
        previous = fit_svm(
            TrainingProblem(y, X=X),
            SVMParameters(C, tol=TOL),
            check_input=False,
            warm_start=previous,
        )
        warm.append(_row(previous, time.process_time() - start, clock.take(), X, C))
        start = time.process_time()
        fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(C, tol=TOL), check_input=False)
        cold.append(_row(fit, time.process_time() - start, clock.take(), X, C))
        model = LinearSVC(C=C, loss="hinge", tol=PEER_TOL, random_state=0)
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        seconds = time.process_time() - start
        w, b = model.coef_.ravel(), float(model.intercept_[0])
        peer.append(
            {
                "C": C,
                "fit_s": seconds,
                "n_iter": int(model.n_iter_),
                "ns_per_nnz_epoch": 1e9 * seconds / (int(model.n_iter_) * X.nnz),
                "primal": _primal(w, b, X, y, C * np.ones(y.shape[0])),
            }
        )
    for ours, theirs in zip(warm, peer):
        theirs["primal_rel_gap"] = theirs["primal"] / ours["primal"] - 1.0
    peer_s = np.mean([f["fit_s"] for f in peer])
    out = {
        "warm": warm,
        "cold": cold,
        "linearsvc": peer,
        "warm_later_over_linearsvc": float(np.mean([f["fit_s"] for f in warm[1:]]) / peer_s),
        "warm_path_over_linearsvc": float(np.mean([f["fit_s"] for f in warm]) / peer_s),
        "cold_over_linearsvc": float(np.mean([f["fit_s"] for f in cold]) / peer_s),
    }
    return out


def _row(fit, seconds: float, solver: tuple, X, C: float) -> dict:
    solver_s, epochs, subproblems, visits, visited_nnz = solver
    n_active = int((fit.c_i > 0).sum())
    return {
        "C": C,
        "fit_s": seconds,
        "solver_s": solver_s,
        "epochs": epochs,
        "subproblems": subproblems,
        "full_pass_equivalents": visits / n_active,
        "visited_share": visits / (epochs * n_active) if epochs else 0.0,
        "visited_nnz": visited_nnz,
        "ns_per_visited_nnz": 1e9 * solver_s / visited_nnz if visited_nnz else None,
        "ns_per_nnz_epoch": 1e9 * solver_s / (epochs * X.nnz) if epochs else None,
        "pg_spread": pg_spread(fit),
        "kkt": kkt_violation(fit),
        "y_alpha": abs(float(fit.alpha @ fit.y)),
        "sum_alpha": float(fit.alpha.sum()),
        "primal": _primal(fit.w, fit.b, X, fit.y, fit.c_i),
        "n_sv": fit.n_sv,
        "converged": fit.converged,
    }


def kkt_violation(fit) -> float:
    """The largest KKT violation of the fit's (alpha, b) on the biased SVM (see the module docstring)."""
    active = fit.c_i > 0
    g = (fit.y * fit.decision - 1.0)[active]
    a, c = fit.alpha[active], fit.c_i[active]
    per = np.where(a <= 0, np.maximum(-g, 0.0), np.where(a >= c, np.maximum(g, 0.0), np.abs(g)))
    return float(per.max())


def pg_spread(fit) -> float:
    """max - min of the projected gradients of the fit's alpha (see the module docstring)."""
    active = fit.c_i > 0
    g = (fit.y * fit.decision - 1.0)[active]
    a, c = fit.alpha[active], fit.c_i[active]
    projected = np.where(a <= 0, np.minimum(g, 0.0), np.where(a >= c, np.maximum(g, 0.0), g))
    return float(projected.max() - projected.min())


def _primal(w, b: float, X, y, c_i) -> float:
    f = np.asarray(X @ w).ravel() + b
    return float(0.5 * w @ w + c_i @ np.maximum(0.0, 1.0 - y * f))


def _print(result: dict) -> None:
    for name in ("reuters", "small", "large"):
        data = result.get(name)
        if not data:
            continue
        rows = []
        for p in data["paths"]:
            for w, c, l in zip(p["warm"], p["cold"], p["linearsvc"]):
                rows.append(
                    [
                        p["category"],
                        w["C"],
                        w["fit_s"],
                        w["solver_s"],
                        w["epochs"],
                        w["subproblems"],
                        w["pg_spread"],
                        w["kkt"],
                        w["ns_per_visited_nnz"],
                        c["fit_s"],
                        c["epochs"],
                        c["subproblems"],
                        c["pg_spread"],
                        l["fit_s"],
                        l["n_iter"],
                        l["ns_per_nnz_epoch"],
                        l["primal_rel_gap"],
                    ]
                )
        print_table(
            [
                "category",
                "C",
                "warm_s",
                "solver_s",
                "ep",
                "sub",
                "pg",
                "kkt",
                "ns/nnz",
                "cold_s",
                "ep",
                "sub",
                "pg",
                "lsvc_s",
                "it",
                "ns/nnz-ep",
                "lsvc_gap",
            ],
            rows,
            title=f"{name}: per fit (CPU s, one core)",
        )
        print({k: v for k, v in data.items() if k != "paths"}, flush=True)


if __name__ == "__main__":
    main()
