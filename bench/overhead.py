"""Cost of the xi-alpha estimate next to the SVM training, and of the Gram matrix next to its savings.

On the ModApte training set (9,603 documents, unit-norm TF-IDF, min_df = 3) for a few categories
and C values:
  1. estimate / fit: the seconds of the training-set decision values, the slacks and `xi_alpha`
     (everything the estimate needs beyond the solver; R_delta^2 is one scan per Gram, shown
     separately) over the seconds of the solver (`fit_svm`'s SVC.fit), per fit; target: median
     <= 2 %. Two ways to the decision values: "gram", f = G (alpha * y) + b over the whole Gram,
     as `fit_svm` does (the headline figure); "primal", linear kernel only, w = X_sv^T (alpha * y)_sv
     then f = X w + b on the sparse features.
  2. Gram seconds vs per-fit savings: SVC(kernel="linear") on the sparse features vs `fit_svm` on
     the precomputed Gram, per fit; break-even = Gram seconds / median saving (fits).

    python bench/overhead.py           # Reuters ModApte train, 4 categories x 3 C
    python bench/overhead.py --quick   # a 600-document synthetic corpus
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from common import load_corpus, make_parser, output_path, print_table, timed, vectorize, write_results
from xialpha.estimators import fit_svm, r_delta_squared, xi_alpha
from xialpha.features import Preprocessing, linear_gram

TARGET_ESTIMATE_OVER_FIT = 0.02


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--categories", nargs="+", default=None,
                        help="category names (default: earn acq money-fx corn, or with --quick 3 categories)")
    parser.add_argument("--C", nargs="+", type=float, default=[0.1, 0.5, 2.5], help="C values")
    parser.add_argument("--repeat", type=int, default=3, help="estimate timings: best of this many runs")
    args = parser.parse_args()
    corpus = load_corpus(args)
    train = corpus.split("train")
    categories = args.categories or (train.choose_categories(top_k=3) if args.quick else ["earn", "acq", "money-fx", "corn"])
    (X, _), vec_s = timed(vectorize, Preprocessing(min_df=3), train.texts)
    gram, gram_s = timed(linear_gram, X)
    r_delta2, radius_s = timed(r_delta_squared, gram=gram)
    rows = []
    for category in categories:
        y = train.y(category)
        for C in args.C:
            fit = fit_svm(y, C, gram=gram, check_input=False)
            estimate_s, primal_s = (min(timed(_estimate, decisions, fit, y, r_delta2)[1] for _ in range(max(1, args.repeat)))
                                    for decisions in (_gram_decisions(gram), _primal_decisions(X)))
            sparse_fit_s = timed(SVC(kernel="linear", C=C).fit, X, y)[1]
            rows.append({"category": category, "C": C, "n_sv": fit.n_sv, "fit_s": fit.fit_seconds,
                         "estimate_s": estimate_s, "estimate_over_fit": estimate_s / fit.fit_seconds,
                         "estimate_primal_s": primal_s, "estimate_primal_over_fit": primal_s / fit.fit_seconds,
                         "sparse_fit_s": sparse_fit_s, "saving_s": sparse_fit_s - fit.fit_seconds})
            print(f"{category} C={C:g}: fit {fit.fit_seconds:.3f} s, estimate {1000 * estimate_s:.1f} ms "
                  f"(primal {1000 * primal_s:.1f} ms), sparse fit {sparse_fit_s:.3f} s", flush=True)
    ratio = np.array([row["estimate_over_fit"] for row in rows])
    primal_ratio = np.array([row["estimate_primal_over_fit"] for row in rows])
    saving = float(np.median([row["saving_s"] for row in rows]))
    result = {
        "benchmark": "overhead",
        "quick": args.quick,
        "corpus": corpus.name,
        "n_train": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "fits": rows,
        "estimate_over_fit_median": float(np.median(ratio)),
        "estimate_over_fit_max": float(ratio.max()),
        "estimate_primal_over_fit_median": float(np.median(primal_ratio)),
        "estimate_primal_over_fit_max": float(primal_ratio.max()),
        "target_estimate_over_fit": TARGET_ESTIMATE_OVER_FIT,
        "vectorize_s": vec_s,
        "gram_s": gram_s,
        "r_delta2_s": radius_s,
        "gram_fit_median_s": float(np.median([row["fit_s"] for row in rows])),
        "sparse_fit_median_s": float(np.median([row["sparse_fit_s"] for row in rows])),
        "saving_per_fit_median_s": saving,
        "break_even_fits": gram_s / saving if saving > 0 else float("inf"),
    }
    _print(result)
    write_results(result, output_path("overhead", args))


def _estimate(decisions, fit, y: np.ndarray, r_delta2: float):
    """What xi-alpha needs after the solver: training decision values, slacks, the estimate."""
    xi = np.maximum(0.0, 1.0 - y * decisions(fit))
    return xi_alpha(fit.alpha, xi, y, r_delta2, 1.0)


def _gram_decisions(gram: np.ndarray):
    """f = G (alpha * y) + b: one product with the whole (n, n) Gram, as `fit_svm` computes it."""
    return lambda fit: gram @ (fit.alpha * fit.y) + fit.b


def _primal_decisions(X):
    """f = X w + b with w = X_sv^T (alpha * y)_sv (d,): linear kernel, sparse (n, d) features."""
    def decisions(fit):
        weights = X[fit.support].T @ (fit.alpha * fit.y)[fit.support]
        return X @ weights + fit.b
    return decisions


def _print(result: dict) -> None:
    rows = [[r["category"], r["C"], r["n_sv"], r["fit_s"], 1000 * r["estimate_s"], 100 * r["estimate_over_fit"],
             1000 * r["estimate_primal_s"], 100 * r["estimate_primal_over_fit"], r["sparse_fit_s"], r["saving_s"]]
            for r in result["fits"]]
    print_table(["category", "C", "n_sv", "fit_s", "estimate_ms", "estimate/fit_%", "primal_ms", "primal/fit_%",
                 "sparse_fit_s", "saving_s"], rows,
                title=f"\n{result['corpus']}: {result['n_train']} training documents, {result['n_features']} features")
    print(f"estimate / fit: median {100 * result['estimate_over_fit_median']:.2f} % "
          f"(max {100 * result['estimate_over_fit_max']:.2f} %, target <= {100 * TARGET_ESTIMATE_OVER_FIT:.0f} %); "
          f"primal decision values: median {100 * result['estimate_primal_over_fit_median']:.2f} %")
    print(f"Gram {result['gram_s']:.2f} s (+ R_delta^2 {result['r_delta2_s']:.2f} s) vs median saving "
          f"{result['saving_per_fit_median_s']:.3f} s per fit: break-even after {result['break_even_fits']:.1f} fits")


if __name__ == "__main__":
    main()
