"""Cost of the xi-alpha estimate next to the SVM training, and of the Gram matrix next to its savings.

On the ModApte training set (9,603 documents, unit-norm TF-IDF, min_df = 3) for a few categories
and C values:
  1. estimate / fit: everything the estimate costs beyond libsvm's training over libsvm's training
     seconds (`SVMFit.fit_seconds`), per fit; target: median <= 2 %. "Beyond" is the rest of the
     `fit_svm` call (chiefly the training decision values f(x_i) that give the slacks) plus
     `xi_alpha`; R_delta^2 is one scan per Gram, shown apart. `fit_svm` has two paths to f:
     "primal" (`primal_X=X`, linear kernel, what linear sweeps use: f = X (X^T alpha y) + b on the
     sparse features; the headline) and "gram" (f = G (alpha y) + b, one pass over the n x n Gram,
     as for the other kernels). Best of --repeat fits per path.
  2. Gram seconds vs per-fit savings: SVC(kernel="linear") on the sparse features vs `fit_svm` on
     the precomputed Gram, per fit; break-even = Gram seconds / median saving (fits).

    python bench/overhead.py           # Reuters ModApte train, 4 categories x 3 C
    python bench/overhead.py --quick   # a 600-document synthetic corpus
"""

from __future__ import annotations

import time

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
    parser.add_argument("--repeat", type=int, default=3, help="fits per path and config (the best counts)")
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
            primal = _best_of(args.repeat, y, C, gram, r_delta2, X)
            whole = _best_of(args.repeat, y, C, gram, r_delta2, None)
            fit_s = min(primal["fit_s"], whole["fit_s"])
            sparse_fit_s = timed(SVC(kernel="linear", C=C).fit, X, y)[1]
            rows.append({"category": category, "C": C, "n_sv": primal["n_sv"], "fit_s": fit_s,
                         "estimate_s": primal["estimate_s"], "estimate_over_fit": primal["estimate_s"] / fit_s,
                         "estimate_gram_s": whole["estimate_s"], "estimate_gram_over_fit": whole["estimate_s"] / fit_s,
                         "sparse_fit_s": sparse_fit_s, "saving_s": sparse_fit_s - fit_s})
            print(f"{category} C={C:g}: fit {fit_s:.3f} s, estimate {1000 * primal['estimate_s']:.1f} ms "
                  f"(gram path {1000 * whole['estimate_s']:.1f} ms), sparse fit {sparse_fit_s:.3f} s", flush=True)
    ratio = np.array([row["estimate_over_fit"] for row in rows])
    gram_ratio = np.array([row["estimate_gram_over_fit"] for row in rows])
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
        "estimate_gram_over_fit_median": float(np.median(gram_ratio)),
        "estimate_gram_over_fit_max": float(gram_ratio.max()),
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


def _best_of(repeat: int, y: np.ndarray, C: float, gram: np.ndarray, r_delta2: float, primal_X) -> dict:
    """Fit `repeat` times on the Gram (primal decision values when primal_X is given): the least
    libsvm seconds and the least seconds beyond them (rest of fit_svm + xi_alpha)."""
    fit_s, estimate_s = np.inf, np.inf
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        fit = fit_svm(y, C, gram=gram, primal_X=primal_X, check_input=False)
        xi_alpha(fit.alpha, fit.xi, y, r_delta2, 1.0)
        total = time.perf_counter() - start
        fit_s, estimate_s = min(fit_s, fit.fit_seconds), min(estimate_s, total - fit.fit_seconds)
    return {"fit_s": fit_s, "estimate_s": estimate_s, "n_sv": fit.n_sv}


def _print(result: dict) -> None:
    rows = [[r["category"], r["C"], r["n_sv"], r["fit_s"], 1000 * r["estimate_s"], 100 * r["estimate_over_fit"],
             1000 * r["estimate_gram_s"], 100 * r["estimate_gram_over_fit"], r["sparse_fit_s"], r["saving_s"]]
            for r in result["fits"]]
    print_table(["category", "C", "n_sv", "fit_s", "estimate_ms", "estimate/fit_%", "gram_path_ms", "gram_path/fit_%",
                 "sparse_fit_s", "saving_s"], rows,
                title=f"\n{result['corpus']}: {result['n_train']} training documents, {result['n_features']} features")
    print(f"estimate / fit (primal path): median {100 * result['estimate_over_fit_median']:.2f} % "
          f"(max {100 * result['estimate_over_fit_max']:.2f} %, target <= {100 * TARGET_ESTIMATE_OVER_FIT:.0f} %); "
          f"whole-Gram path: median {100 * result['estimate_gram_over_fit_median']:.2f} %")
    print(f"Gram {result['gram_s']:.2f} s (+ R_delta^2 {result['r_delta2_s']:.2f} s) vs median saving "
          f"{result['saving_per_fit_median_s']:.3f} s per fit: break-even after {result['break_even_fits']:.1f} fits")


if __name__ == "__main__":
    main()
