"""Cost of the estimates next to the SVM training, on the linear path, on Reuters and at 10^5 documents.

On the ModApte training set (9,603 documents, unit-norm TF-IDF, min_df = 3), per category: the C
path of config/reuters.toml's grid solved as sweeps solve it (`fit_svm(TrainingProblem(y, X=X),
SVMParameters(C), warm_start=the previous C's fit)`, ascending C), and a cold fit at C = 0.5. Per
fit, with BLAS on one thread as on a sweep's workers:
  fit_s       the solver's seconds (`SVMFit.fit_seconds`: the compiled dual coordinate descent);
  estimate_s  what xi-alpha costs beyond them, as a sweep's fit task pays it: the rest of the
              `fit_svm(..., check_input=False)` call (the training decision values X w + b that
              give the slacks, the threshold), the xi-alpha indicator and metrics; target: median
              estimate_s / fit_s <= 5 %. R_delta^2 (its O(nnz) closed form) is computed once per
              training set, as sweeps do, and reported apart (`r_delta2_s`);
  span_s      `span_estimate(fit)` (method "auto": the dense Cholesky path or the iterative one, by
              the cost model of xialpha.estimators.span; never a sample: `span_sampled_fits` is 0);
              per fit how its calls were decided (`span_calls`): n_unbounded, span_method, the shares
              of the support vectors' calls decided by the threshold's sign, by a closed-form bound,
              by the iterative solve's certified bounds, by an exact S^2, and the solve's iterations
              (products with K_UU per point); `calls_identical`: the calls equal those of every S^2
              computed by the dense path (thresholds=None), checked on every fit with at most
              --check-max unbounded SVs (n_U^2 floats), else null;
  span_other_s with --both-methods: the seconds of the method auto did not choose (cost model check:
              `span_auto_choices` counts the fits where auto's choice was the faster one);
  default_s   what the default estimates cost a sweep's fit beyond the solver: estimate_s, plus
              span_s when the default selection estimator (`xialpha.selection.objective.DEFAULT_ESTIMATOR`)
              is span; `default_estimate_over_fit_median` is the issue-24 target (<= 0.3).
Best of --repeat runs of each path. One warm-up fit first compiles (or loads from numba's cache) the
solver; its seconds are reported apart (`first_fit_s`).

`large` (--large N, default 10^5; --quick 3,000): the same per fit on make_synthetic(n_docs=N,
n_categories=4, seed=0) (70% training, min_df = 3), 4 categories x C 0.5, 5 warm-started, one run.
`huge` (--huge N, e.g. 1e6; skipped by default): the same on N documents for the 2 largest categories.
`sizes` holds each size's headline figures (n_docs, default_estimate_over_fit_median, span_sampled_fits, ...).

    python bench/overhead.py           # Reuters ModApte train, 10 categories x 8 C (+ C = 0.5 cold), and 10^5
    python bench/overhead.py --quick   # a 600-document synthetic corpus, and 3,000
    python bench/overhead.py --huge 1e6  # and 10^6 documents (2 categories x 2 C)
"""

from __future__ import annotations

import time

import numpy as np
from common import (
    REUTERS_SPEC,
    load_corpus,
    make_parser,
    output_path,
    print_table,
    timed,
    vectorize,
    write_results,
)
from threadpoolctl import threadpool_limits

from xialpha.corpora import make_synthetic
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.span import call_thresholds, span_calls, span_squared
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha
from xialpha.features import Preprocessing
from xialpha.selection.objective import DEFAULT_ESTIMATOR
from xialpha.spec.sweep import load_spec

TARGET_ESTIMATE_OVER_FIT = 0.05
TARGET_DEFAULT_OVER_FIT = 0.3
COLD_C = 0.5
LARGE_DOCS, QUICK_LARGE_DOCS, LARGE_C = 100_000, 3_000, (0.5, 5.0)
HUGE_CATEGORIES = 2  # at 10^6 documents a subset of the C paths: the 2 largest categories x LARGE_C


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument(
        "--categories",
        nargs="+",
        default=None,
        help="category names (default: the 10 most frequent, or with --quick 3)",
    )
    parser.add_argument(
        "--C", nargs="+", type=float, default=None, help="the C path (default: config/reuters.toml's grid)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="runs of each path (the best counts)")
    parser.add_argument(
        "--check-max",
        type=int,
        default=20_000,
        help="largest n_U whose fits' calls are compared with the full dense computation",
    )
    parser.add_argument(
        "--both-methods",
        action="store_true",
        help="also time the span method the cost model did not choose, on every fit",
    )
    parser.add_argument(
        "--large",
        type=lambda text: int(float(text)),
        default=None,
        metavar="N_DOCS",
        help=f"documents of the synthetic corpus of `large` (default {LARGE_DOCS:g}, --quick "
        f"{QUICK_LARGE_DOCS}; 0 skips it)",
    )
    parser.add_argument(
        "--huge",
        type=lambda text: int(float(text)),
        default=0,
        metavar="N_DOCS",
        help=f"also `huge`: as `large` on N_DOCS documents (e.g. 1e6), {HUGE_CATEGORIES} categories (default: skipped)",
    )
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        _run(args)


def _run(args) -> None:
    grid = sorted(args.C or load_spec(REUTERS_SPEC).C)
    corpus = load_corpus(args)
    train = corpus.split("train")
    categories = args.categories or train.choose_categories(top_k=3 if args.quick else 10)
    (X, _), vec_s = timed(vectorize, Preprocessing(min_df=3), train.texts)
    first = timed(fit_svm, TrainingProblem(train.y(categories[0]), X=X), SVMParameters(COLD_C))[1]
    r_delta2, r_delta2_s = timed(r_delta_squared, X=X)
    rows = []
    for category in categories:
        y = train.y(category)
        path = _best_of(args.repeat, lambda: _path(X, y, grid, r_delta2, args))
        cold = _best_of(args.repeat, lambda: _path(X, y, [COLD_C], r_delta2, args))
        for start, fits in (("warm", path), ("cold", cold)):
            for row in fits:
                rows.append({"category": category, "start": start, **row})
        row = next(r for r in path if r["C"] == COLD_C) if COLD_C in grid else path[0]
        print(
            f"{category}: path {sum(r['fit_s'] for r in path):.2f} s solver, C={row['C']:g} in the path: "
            f"estimate {100 * row['estimate_over_fit']:.1f} %, span {100 * row['span_over_fit']:.0f} % of the fit; "
            f"cold C={COLD_C:g}: fit {cold[0]['fit_s']:.3f} s",
            flush=True,
        )
    warm = [r for r in rows if r["start"] == "warm"]
    cold = [r for r in rows if r["start"] == "cold"]
    ratio = np.array([r["estimate_over_fit"] for r in warm])
    result = {
        "benchmark": "overhead",
        "quick": args.quick,
        "corpus": corpus.name,
        "n_docs": len(corpus),
        "n_train": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "C": grid,
        "categories": categories,
        "repeat": args.repeat,
        "fits": rows,
        "estimate_over_fit_median": float(np.median(ratio)),
        "estimate_over_fit_max": float(ratio.max()),
        "xa_only_over_fit_median": float(np.median([r["xa_s"] / r["fit_s"] for r in warm])),
        "span_over_fit_median": float(np.median([r["span_over_fit"] for r in warm])),
        "span_over_fit_max": float(max(r["span_over_fit"] for r in warm)),
        "default_estimator": DEFAULT_ESTIMATOR,
        "default_estimate_over_fit_median": float(np.median([r["default_over_fit"] for r in warm])),
        "default_estimate_over_fit_total": float(sum(r["default_s"] for r in warm) / sum(r["fit_s"] for r in warm)),
        "target_default_over_fit": TARGET_DEFAULT_OVER_FIT,
        "cold_c05": {
            "estimate_over_fit_median": float(np.median([r["estimate_over_fit"] for r in cold])),
            "span_over_fit_median": float(np.median([r["span_over_fit"] for r in cold])),
            "fit_median_s": float(np.median([r["fit_s"] for r in cold])),
        },
        "fit_median_s": float(np.median([r["fit_s"] for r in warm])),
        "span_median_s": float(np.median([r["span_s"] for r in warm])),
        **_span_summary(rows),
        "target_estimate_over_fit": TARGET_ESTIMATE_OVER_FIT,
        "vectorize_s": vec_s,
        "r_delta2_s": r_delta2_s,
        "first_fit_s": first,
    }
    large = args.large if args.large is not None else (QUICK_LARGE_DOCS if args.quick else LARGE_DOCS)
    if large:
        result["large"] = _large(large, args)
    if args.huge:
        result["huge"] = _large(args.huge, args, top_k=HUGE_CATEGORIES)
    result["sizes"] = {
        name: _size_summary(part)
        for name, part in (("reuters", result), ("large", result.get("large")), ("huge", result.get("huge")))
        if part is not None
    }
    _print(result)
    write_results(result, output_path("overhead", args))


def _size_summary(part: dict) -> dict:
    """One size's headline figures (the whole C paths, warm-started fits) and how span decided its calls."""
    fits = [r for r in part["fits"] if r.get("start", "warm") == "warm"]
    shares = {
        key: float(np.mean([r[key] for r in fits]))
        for key in ("span_by_sign", "span_by_bound", "span_by_solve", "span_by_exact")
    }
    return {
        "n_docs": part["n_docs"],
        "n_train": part["n_train"],
        "default_estimate_over_fit_median": part["default_estimate_over_fit_median"],
        "span_over_fit_median": part["span_over_fit_median"],
        "n_unbounded_median": float(np.median([r["n_unbounded"] for r in fits])),
        "n_unbounded_max": int(max(r["n_unbounded"] for r in fits)),
        **{f"{key}_mean_share": value for key, value in shares.items()},
        **{
            key: part[key]
            for key in (
                "span_sampled_fits",
                "span_methods",
                "span_auto_choices",
                "calls_identical",
                "calls_identical_fits",
                "calls_checked_fits",
            )
        },
    }


def _path(X, y: np.ndarray, grid: list[float], r_delta2: float, args) -> list[dict]:
    """Fit the C values in order, each warm-started from the previous one, and time the estimates."""
    rows, previous = [], None
    for C in grid:
        start = time.perf_counter()
        fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(C), warm_start=previous, check_input=False)
        rest_s = time.perf_counter() - start - fit.fit_seconds
        start = time.perf_counter()
        xi_alpha(fit.alpha, fit.xi, y, r_delta2, 1.0)
        xa_s = time.perf_counter() - start
        calls, span_s = timed(_span, fit, "auto")
        n_unbounded = fit.n_sv - fit.n_bounded_sv
        row = {
            "C": C,
            "n_sv": fit.n_sv,
            "n_unbounded": n_unbounded,
            "fit_s": fit.fit_seconds,
            "rest_s": rest_s,
            "xa_s": xa_s,
            "span_s": span_s,
            "span_sampled": False,
            **_call_shares(calls),
        }
        if args.both_methods and calls.method in ("dense", "iterative"):
            row["span_other_s"] = timed(_span, fit, "iterative" if calls.method == "dense" else "dense")[1]
        thresholds = call_thresholds(fit)
        sv = fit.alpha > 0
        row["calls_identical"] = (
            bool(np.array_equal(calls.spans[sv] >= thresholds[sv], span_squared(fit)[sv] >= thresholds[sv]))
            if n_unbounded <= args.check_max
            else None
        )
        rows.append(_ratios(row))
        previous = fit
    return rows


def _span(fit, method: str):
    """What `span_estimate(fit, method=method)` does (its calls and indicator), keeping how the calls were decided."""
    calls = span_calls(fit, method=method, thresholds=call_thresholds(fit))
    sv = fit.alpha > 0
    margins = fit.y * fit.decision
    margins[sv] -= fit.alpha[sv] * calls.spans[sv]
    Estimate.from_indicator("span", fit.y, margins <= 0)
    return calls


def _call_shares(calls) -> dict:
    """Per fit: the span method, and the share of the SVs' calls decided by each means; solve iterations."""
    total = max(1, calls.by_sign + calls.by_bound + calls.by_solve + calls.by_exact)
    iterations = calls.solve_iterations
    return {
        "span_method": calls.method,
        "span_by_sign": calls.by_sign / total,
        "span_by_bound": calls.by_bound / total,
        "span_by_solve": calls.by_solve / total,
        "span_by_exact": calls.by_exact / total,
        "solve_iterations_total": int(iterations.sum()),
        "solve_iterations_median": float(np.median(iterations)) if iterations.size else None,
        "solve_iterations_max": int(iterations.max()) if iterations.size else None,
    }


def _span_summary(rows: list[dict]) -> dict:
    """Over the fits: sampled fits (always 0), methods, calls identical to the full computation."""
    checked = [r["calls_identical"] for r in rows if r["calls_identical"] is not None]
    timed_both = [r["span_s"] <= r["span_other_s"] for r in rows if "span_other_s" in r]
    return {
        "span_auto_choices": {"faster": int(sum(timed_both)), "timed_both": len(timed_both)},
        "span_sampled_fits": int(sum(r["span_sampled"] for r in rows)),
        "span_methods": {m: sum(r["span_method"] == m for r in rows) for m in ("dense", "iterative", "diameter")},
        "calls_identical_fits": int(sum(checked)),
        "calls_checked_fits": len(checked),
        "calls_identical": bool(all(checked)) if checked else None,
    }


def _ratios(row: dict) -> dict:
    """row with estimate_s, default_s and their ratios to fit_s, from fit_s, rest_s, xa_s, span_s."""
    row["estimate_s"] = row["rest_s"] + row["xa_s"]
    row["default_s"] = row["estimate_s"] + (row["span_s"] if DEFAULT_ESTIMATOR == "span" else 0.0)
    for name in ("estimate", "span", "default"):
        row[f"{name}_over_fit"] = row[f"{name}_s"] / row["fit_s"]
    return row


def _large(n_docs: int, args, top_k: int = 4) -> dict:
    """Per-fit costs on make_synthetic(n_docs, 4 categories): `top_k` categories x LARGE_C, warm-started."""
    corpus = make_synthetic(n_docs=n_docs, n_categories=4, seed=0)
    train = corpus.split("train")
    _, X = Preprocessing(min_df=3).fit_transform(train.texts)
    r_delta2 = r_delta_squared(X=X)
    fits = []
    for category in corpus.choose_categories(top_k=top_k):
        fits += [{"category": category, **row} for row in _path(X, train.y(category), list(LARGE_C), r_delta2, args)]
    print(f"large: {n_docs:,} documents, {X.shape[0]:,} training", flush=True)
    return {
        "n_docs": n_docs,
        "n_train": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "C": list(LARGE_C),
        "default_estimator": DEFAULT_ESTIMATOR,
        **{
            f"{key}_over_fit_median": float(np.median([r[f"{name}_over_fit"] for r in fits]))
            for name, key in (("estimate", "estimate"), ("span", "span"), ("default", "default_estimate"))
        },
        "default_estimate_over_fit_total": float(sum(r["default_s"] for r in fits) / sum(r["fit_s"] for r in fits)),
        **_span_summary(fits),
        "fits": fits,
    }


def _best_of(repeat: int, run) -> list[dict]:
    """Run a path `repeat` times; per position the least seconds of each kind (ratios recomputed)."""
    runs = [run() for _ in range(max(1, repeat))]
    best = []
    for fits in zip(*runs):
        row = dict(fits[0])
        for key in ("fit_s", "rest_s", "xa_s", "span_s", "span_other_s"):
            if key in row:
                row[key] = min(fit[key] for fit in fits)
        best.append(_ratios(row))
    return best


def _print(result: dict) -> None:
    columns = [
        "category",
        "start",
        "C",
        "n_sv",
        "n_unbounded",
        "fit_ms",
        "rest_of_fit_svm_ms",
        "xa_ms",
        "estimate/fit_%",
        "span_ms",
        "span/fit_%",
        "method",
        "sign_%",
        "bound_%",
        "solve_%",
        "exact_%",
        "iter_med",
        "iter_max",
        "same_calls",
    ]
    for part, title in (
        (result, f"{result['corpus']}: {result['n_train']} training documents, {result['n_features']} features"),
        (result.get("large"), "large"),
        (result.get("huge"), "huge"),
    ):
        if part is None:
            continue
        rows = [
            [
                r["category"],
                r.get("start", "warm"),
                r["C"],
                r["n_sv"],
                r["n_unbounded"],
                1000 * r["fit_s"],
                1000 * r["rest_s"],
                1000 * r["xa_s"],
                100 * r["estimate_over_fit"],
                1000 * r["span_s"],
                100 * r["span_over_fit"],
                r["span_method"],
                100 * r["span_by_sign"],
                100 * r["span_by_bound"],
                100 * r["span_by_solve"],
                100 * r["span_by_exact"],
                r["solve_iterations_median"],
                r["solve_iterations_max"],
                r["calls_identical"],
            ]
            for r in part["fits"]
        ]
        print_table(columns, rows, title="\n" + title)
    print(
        f"xi-alpha estimate / fit (warm-started C paths): median {100 * result['estimate_over_fit_median']:.2f} % "
        f"(max {100 * result['estimate_over_fit_max']:.2f} %, target <= {100 * TARGET_ESTIMATE_OVER_FIT:.0f} %); "
        f"R_delta^2 + indicator alone {100 * result['xa_only_over_fit_median']:.2f} %"
    )
    print(
        f"span / fit: median {100 * result['span_over_fit_median']:.0f} % (max "
        f"{100 * result['span_over_fit_max']:.0f} %); "
        f"cold C={COLD_C:g}: estimate {100 * result['cold_c05']['estimate_over_fit_median']:.2f} %, span "
        f"{100 * result['cold_c05']['span_over_fit_median']:.0f} %; first fit (JIT or cache load) "
        f"{result['first_fit_s']:.2f} s"
    )
    print(
        f"default estimates ({result['default_estimator']}) / fit: median "
        f"{result['default_estimate_over_fit_median']:.3f}, "
        f"total {result['default_estimate_over_fit_total']:.3f} (target <= {TARGET_DEFAULT_OVER_FIT})"
    )
    for name in ("large", "huge"):
        if name in result:
            part = result[name]
            print(
                f"{name} ({part['n_train']:,} training documents): default estimates / fit median "
                f"{part['default_estimate_over_fit_median']:.3f}, total {part['default_estimate_over_fit_total']:.3f}; "
                f"span / fit {part['span_over_fit_median']:.3f}"
            )


if __name__ == "__main__":
    main()
