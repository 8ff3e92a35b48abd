"""Exact leave-one-out: pruned (`loo_exact`) vs brute force vs xi-alpha, on a 1,000-document subsample.

A seeded random 1,000 of Reuters-21578 ModApte's 12,902 documents, unit-norm TF-IDF (min_df = 3),
linear SVM on the precomputed Gram. Per category and C: brute-force LOO retrains once per example
(weight 0 on the left-out one) and counts y_t f(x_t) <= 0 as an error. `loo_exact` prunes in two
ways: prune="support" (exact; the default) retrains the support vectors that are not certain
training errors; prune="xi_alpha" also skips those the rho = 2 bound clears (seed Lemma 1; not
guaranteed exact). Reports per rule whether it gives brute force's per-example errors and the
fraction of examples retrained (the rest is saved), seconds, and the xi-alpha estimates (rho 1 and
2) beside the exact LOO error, with whether rho = 2 flags every LOO error.

    python bench/loo.py           # 1,000 Reuters documents, 3 categories x 2 C (several minutes)
    python bench/loo.py --quick   # 200 synthetic documents, 2 categories x 1 C
"""

from __future__ import annotations

import numpy as np
from common import load_corpus, make_parser, output_path, print_table, timed, vectorize, write_results

from xialpha.estimators.loo import loo_exact
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha, xi_alpha_indicator
from xialpha.features import Preprocessing, linear_gram


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--docs", type=int, default=None, help="subsample size (default 1000, --quick 200)")
    parser.add_argument("--categories", type=int, default=None, help="most frequent categories (default 3, --quick 2)")
    parser.add_argument("--C", nargs="+", type=float, default=None, help="C values (default 0.5 5, --quick 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the subsample")
    args = parser.parse_args()
    n_docs = args.docs or (200 if args.quick else 1000)
    c_values = args.C or ([1.0] if args.quick else [0.5, 5.0])
    corpus = load_corpus(args)
    sample = corpus.subset(np.sort(np.random.default_rng(args.seed).choice(len(corpus), n_docs, replace=False)))
    categories = sample.choose_categories(top_k=args.categories or (2 if args.quick else 3))
    X, _ = vectorize(Preprocessing(min_df=3), sample.texts)
    gram = linear_gram(X)
    r_delta2 = r_delta_squared(gram=gram)
    rows = []
    for category in categories:
        y = sample.y(category)
        for C in c_values:
            problem, parameters = TrainingProblem(y, gram=gram), SVMParameters(C)
            fit = fit_svm(problem, parameters, check_input=False)
            pruned, pruned_s = timed(loo_exact, problem, parameters, fit=fit)
            lemma, lemma_s = timed(loo_exact, problem, parameters, fit=fit, prune="xi_alpha", r_delta2=r_delta2)
            brute, brute_s = timed(_brute_force_loo, y, C, gram)
            xa1 = xi_alpha(fit.alpha, fit.xi, y, r_delta2, 1.0)
            xa2 = xi_alpha(fit.alpha, fit.xi, y, r_delta2, 2.0)
            flagged = xi_alpha_indicator(fit.alpha, fit.xi, r_delta2, 2.0)
            rows.append(
                {
                    "category": category,
                    "C": C,
                    "n": n_docs,
                    "n_pos": pruned.n_pos,
                    "stable": fit.stable,
                    "loo_error": brute.error,
                    "pruned_error": pruned.error,
                    "xa1_error": xa1.error,
                    "xa2_error": xa2.error,
                    "pruned_equals_bruteforce": bool(np.array_equal(pruned.indicator, brute.indicator)),
                    "xa2_flags_every_loo_error": bool(np.all(flagged[brute.indicator])),
                    "retrains": pruned.retrains,
                    "retrain_fraction": pruned.retrains / n_docs,
                    "xi_alpha_pruned_equals_bruteforce": bool(np.array_equal(lemma.indicator, brute.indicator)),
                    "xi_alpha_retrains": lemma.retrains,
                    "pruned_s": pruned_s,
                    "xi_alpha_pruned_s": lemma_s,
                    "bruteforce_s": brute_s,
                }
            )
            print(
                f"{category} C={C:g}: retrained {pruned.retrains} (support) / {lemma.retrains} (xi_alpha) of "
                f"{n_docs}, {pruned_s:.1f} / {lemma_s:.1f} s, brute force {brute_s:.1f} s",
                flush=True,
            )
    retrains = sum(row["retrains"] for row in rows)
    lemma_retrains = sum(row["xi_alpha_retrains"] for row in rows)
    result = {
        "benchmark": "loo",
        "quick": args.quick,
        "corpus": corpus.name,
        "n_documents": n_docs,
        "subsample_seed": args.seed,
        "r_delta2": r_delta2,
        "configs": rows,
        "pruned_equals_bruteforce": all(row["pruned_equals_bruteforce"] for row in rows),
        "xa2_flags_every_loo_error": all(row["xa2_flags_every_loo_error"] for row in rows),
        "retrain_fraction": retrains / (n_docs * len(rows)),
        "retrainings_saved": n_docs * len(rows) - retrains,
        "xi_alpha_pruned_equals_bruteforce": all(row["xi_alpha_pruned_equals_bruteforce"] for row in rows),
        "retrain_fraction_xi_alpha": lemma_retrains / (n_docs * len(rows)),
        "pruned_s": sum(row["pruned_s"] for row in rows),
        "xi_alpha_pruned_s": sum(row["xi_alpha_pruned_s"] for row in rows),
        "bruteforce_s": sum(row["bruteforce_s"] for row in rows),
    }
    _print(result)
    write_results(result, output_path("loo", args))


def _brute_force_loo(y: np.ndarray, C: float, gram: np.ndarray) -> Estimate:
    """LOO by n retrainings, each with weight 0 on the left-out example; error iff y_t f(x_t) <= 0."""
    errors = np.zeros(y.shape[0], dtype=bool)
    for t in range(y.shape[0]):
        weights = np.ones(y.shape[0])
        weights[t] = 0.0
        if np.all(np.delete(y, t) == y[t] * -1):
            errors[t] = True  # t is its class's only example: it is always misclassified
            continue
        left_out = fit_svm(TrainingProblem(y, gram=gram, weights=weights), SVMParameters(C), check_input=False)
        errors[t] = y[t] * left_out.decision_function(gram[[t]])[0] <= 0
    return Estimate.from_indicator("loo", y, errors, retrains=y.shape[0])


def _print(result: dict) -> None:
    rows = [
        [
            r["category"],
            r["C"],
            r["n_pos"],
            r["stable"],
            100 * r["loo_error"],
            100 * r["pruned_error"],
            100 * r["xa1_error"],
            100 * r["xa2_error"],
            r["pruned_equals_bruteforce"],
            r["retrains"],
            r["xi_alpha_pruned_equals_bruteforce"],
            r["xi_alpha_retrains"],
            r["pruned_s"],
            r["xi_alpha_pruned_s"],
            r["bruteforce_s"],
        ]
        for r in result["configs"]
    ]
    print_table(
        [
            "category",
            "C",
            "n_pos",
            "stable",
            "loo_%",
            "pruned_%",
            "xa1_%",
            "xa2_%",
            "equal",
            "retrains",
            "xa_equal",
            "xa_retrains",
            "pruned_s",
            "xa_pruned_s",
            "brute_s",
        ],
        rows,
        title=f"\n{result['n_documents']} documents of {result['corpus']}, R_delta^2 = {result['r_delta2']:.3f}",
    )
    print(
        f"prune=support == brute force: {result['pruned_equals_bruteforce']}; retrained "
        f"{100 * result['retrain_fraction']:.1f} % of the examples ({result['retrainings_saved']} retrainings saved); "
        f"{result['pruned_s']:.1f} s vs {result['bruteforce_s']:.1f} s"
    )
    print(
        f"prune=xi_alpha == brute force: {result['xi_alpha_pruned_equals_bruteforce']}; retrained "
        f"{100 * result['retrain_fraction_xi_alpha']:.1f} %; {result['xi_alpha_pruned_s']:.1f} s"
    )


if __name__ == "__main__":
    main()
