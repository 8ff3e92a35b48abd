"""xialpha's sweep vs scikit-learn's GridSearchCV (10-fold, F1) on the same grid: wall time and regret.

The grid is config/reuters.toml's: ModApte train (9,603) / test (3,299), the 10 most frequent
categories x 2 preprocessings (with and without Porter stemming) x 8 C values, linear SVM.
  xialpha    `run_sweep` on a LocalCluster of 2 workers into a temporary store (end to end:
             corpus, features, Grams, fits, estimates, storage, cluster start and stop);
             per category the config with the largest F1 of the sweep's selection estimator
             (span by default; the JSON also gives the choice by xi-alpha, rho = 1).
  gscv_gram  GridSearchCV(SVC(kernel="precomputed"), cv=10, scoring="f1", n_jobs=2, refit=False)
             on each preprocessing's training Gram, per category; the config with the largest
             mean CV F1 over both preprocessings.
  gscv_sparse  the same with SVC(kernel="linear") on the sparse TF-IDF features. It first runs
             the first of the same 10 folds for every category, preprocessing and C; when 10 x
             that time fits --sparse-budget it runs the full search, else the wall is that time
             x 10 (extrapolated; the JSON says so).
Both GridSearchCV walls include loading the corpus, computing the features (and Grams) once and
starting joblib's worker pool (timed apart, before the searches).
Regret = best held-out F1 in the grid - held-out F1 of the chosen config, in F1 points (>= 0),
from the sweep's held-out figures; per category and macro-averaged. The JSON also gives the sweep's
own median of estimate_seconds / fit_seconds (all but libsvm's training, held-out scoring included).

    python bench/vs_cross_validation.py           # Reuters (about 30-60 minutes on 2 cores)
    python bench/vs_cross_validation.py --quick   # a small synthetic grid, 3 folds
"""

from __future__ import annotations

import tempfile
import warnings

import numpy as np
from common import make_parser, output_path, print_table, sweep_spec, timed, vectorize, write_results
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from xialpha.features import linear_gram
from xialpha.jobs.sweep import run_sweep
from xialpha.storage.opening import open_store

N_JOBS = 2


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument(
        "--sparse-budget",
        type=float,
        default=900.0,
        help="seconds the full sparse GridSearchCV may take; beyond, one fold x folds is reported",
    )
    parser.add_argument("--folds", type=int, default=None, help="cross-validation folds (default 10, --quick 3)")
    args = parser.parse_args()
    folds = args.folds or (3 if args.quick else 10)
    spec = sweep_spec(args)
    results, xialpha_wall = _xialpha(spec)
    categories = sorted(
        results["category"].unique(), key=lambda c: -results.loc[results.category == c, "n_pos"].iloc[0]
    )
    data, prepare_s = _features(spec, categories)
    _, prepare_s["worker_pool"] = timed(_start_worker_pool)
    grid = {"C": list(spec.C)}
    gram_scores, gram_fit_s = {}, {}
    for category in categories:
        for pre_id, (_, gram, y) in data.items():
            gram_scores[category, pre_id], gram_fit_s[category, pre_id] = _grid_search(
                SVC(kernel="precomputed"), grid, folds, gram, y[category]
            )
        print(f"gscv_gram {category}: {sum(gram_fit_s[category, p] for p in data):.1f} s", flush=True)
    sparse_scores, sparse_fit_s, one_fold_s = _sparse(data, grid, folds, categories, args.sparse_budget)
    extrapolated = sparse_scores is None
    sparse_total = folds * sum(one_fold_s.values()) if extrapolated else sum(sparse_fit_s.values())
    shared_s = prepare_s["load"] + prepare_s["vectorize"] + prepare_s["worker_pool"]
    gram_wall = shared_s + prepare_s["gram"] + sum(gram_fit_s.values())
    sparse_wall = shared_s + sparse_total
    stemming = {p.id: p.stemming for p in spec.preprocessings}
    choices = {
        "xialpha": _xialpha_choices(results, f"{spec.selection_estimator}_f1"),
        "xialpha_xa": _xialpha_choices(results, "xa_f1"),
        "cv": _cv_choices(gram_scores, categories, list(data), spec.C),
    }
    regrets = {name: _regrets(results, chosen) for name, chosen in choices.items()}
    sparse_choices = {} if extrapolated else _cv_choices(sparse_scores, categories, list(data), spec.C)
    sparse_agrees = {c: sparse_choices[c] == choices["cv"][c] for c in sparse_choices}
    result = {
        "benchmark": "vs_cross_validation",
        "quick": args.quick,
        "sweep_id": spec.id,
        "grid": {
            "categories": categories,
            "preprocessings": {p.id: p.params() for p in spec.preprocessings},
            "C": list(spec.C),
            "folds": folds,
            "n_jobs": N_JOBS,
            "xialpha_workers": N_JOBS,
        },
        "xialpha_wall_s": xialpha_wall,
        "xialpha_estimate_over_fit_median": float((results["estimate_seconds"] / results["fit_seconds"]).median()),
        "gscv_gram_wall_s": gram_wall,
        "gscv_sparse_wall_s": sparse_wall,
        "gscv_sparse_extrapolated": extrapolated,
        "gscv_sparse_one_fold_s": sum(one_fold_s.values()),
        "gscv_prepare_s": prepare_s,
        "speedup_vs_sparse": sparse_wall / xialpha_wall,
        "speedup_vs_gram": gram_wall / xialpha_wall,
        "regret_units": "F1 points: best held-out F1 in the grid minus held-out F1 of the chosen config",
        "xialpha_estimator": spec.selection_estimator,
        "regret_xialpha": regrets["xialpha"],
        "regret_xialpha_xa": regrets["xialpha_xa"],
        "regret_cv": regrets["cv"],
        "chosen": {
            name: {c: {"preprocessing_id": p, "stemming": stemming[p], "C": C} for c, (p, C) in chosen.items()}
            for name, chosen in choices.items()
        },
        "gscv_sparse_same_choice_as_gram": sparse_agrees,
        "gscv_gram_fit_s": {f"{c}/{p}": s for (c, p), s in gram_fit_s.items()},
        "gscv_sparse_fit_s": {f"{c}/{p}": s for (c, p), s in sparse_fit_s.items()},
        "gscv_sparse_one_fold_fit_s": {f"{c}/{p}": s for (c, p), s in one_fold_s.items()},
    }
    _print(result)
    write_results(result, output_path("vs_cross_validation", args))


def _xialpha(spec):
    """(the sweep's ok result rows as a DataFrame, its end-to-end wall seconds) on 2 local workers."""
    with tempfile.TemporaryDirectory(prefix="xialpha-vs-cv-") as directory:
        store = open_store(directory, create=True, writable=True)
        summary = run_sweep(spec, store, workers=N_JOBS)
        if summary.failed:
            raise SystemExit(f"xialpha sweep: {summary.failed} configs failed, e.g. {summary.failures[0]}")
        results = store.read_results_df(spec.id)
    print(f"xialpha sweep: {summary.fits} fits in {summary.wall_seconds:.1f} s", flush=True)
    return results[np.isclose(results["rho"], 1.0)], summary.wall_seconds


def _features(spec, categories):
    """{preprocessing id: (X_train CSR, training Gram, {category: y})} and the seconds of each step."""
    corpus, load_s = timed(spec.corpus.load)
    train = corpus.split(spec.corpus.train_split)
    y = {category: train.y(category) for category in categories}
    data, seconds = {}, {"load": load_s, "vectorize": 0.0, "gram": 0.0}
    for preprocessing in spec.preprocessings:
        (X, _), vectorize_s = timed(vectorize, preprocessing, train.texts)
        gram, gram_s = timed(linear_gram, X)
        data[preprocessing.id] = (X, gram, y)
        seconds["vectorize"] += vectorize_s
        seconds["gram"] += gram_s
    return data, seconds


def _start_worker_pool() -> None:
    """Start joblib's reusable worker processes (and their scikit-learn imports) once, so that
    the first timed search does not carry them."""
    from joblib import Parallel, delayed

    Parallel(n_jobs=N_JOBS)(delayed(_import_svm)() for _ in range(2 * N_JOBS))


def _import_svm() -> None:
    import sklearn.svm  # noqa: F401


def _grid_search(estimator, grid: dict, folds, data, y: np.ndarray) -> tuple[np.ndarray, float]:
    """(mean CV F1 per C, shape (n_C,); wall seconds of GridSearchCV.fit); folds: k or a list of splits."""
    search = GridSearchCV(estimator, grid, cv=folds, scoring="f1", n_jobs=N_JOBS, refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # F1 of folds without a positive prediction: 0, with a warning
        _, seconds = timed(search.fit, data, y)
    return np.asarray(search.cv_results_["mean_test_score"], dtype=float), seconds


def _sparse(data: dict, grid: dict, folds: int, categories: list[str], budget: float):
    """(scores or None, full-search seconds or {}, one-fold seconds) of the sparse GridSearchCV, per
    (category, preprocessing id): the first of the `folds` stratified folds for all, then the full
    search when folds x the one-fold time fits the budget (None and {} when it does not)."""
    one_fold = {}
    for category in categories:
        for pre_id, (X, _, y) in data.items():
            first = list(StratifiedKFold(n_splits=folds).split(X, y[category]))[:1]
            _, one_fold[category, pre_id] = _grid_search(SVC(kernel="linear"), grid, first, X, y[category])
        print(f"gscv_sparse {category}, one fold: {sum(one_fold[category, p] for p in data):.1f} s", flush=True)
    if folds * sum(one_fold.values()) > budget:
        return None, {}, one_fold
    scores, seconds = {}, {}
    for category in categories:
        for pre_id, (X, _, y) in data.items():
            scores[category, pre_id], seconds[category, pre_id] = _grid_search(
                SVC(kernel="linear"), grid, folds, X, y[category]
            )
        print(f"gscv_sparse {category}: {sum(seconds[category, p] for p in data):.1f} s", flush=True)
    return scores, seconds, one_fold


def _xialpha_choices(results, column: str) -> dict:
    """{category: (preprocessing_id, C)} with the largest `column` (NaN last; ties: first in grid order)."""
    ordered = results.sort_values(["category", "preprocessing_id", "C"])
    return {category: _first_best(rows, column) for category, rows in ordered.groupby("category")}


def _cv_choices(scores: dict, categories: list[str], pre_ids: list[str], c_values) -> dict:
    """{category: (preprocessing_id, C)} with the largest mean CV F1 (ties: first in grid order)."""
    chosen = {}
    for category in categories:
        candidates = [(score, pre_id, C) for pre_id in pre_ids for C, score in zip(c_values, scores[category, pre_id])]
        best = max(score for score, _, _ in candidates)
        chosen[category] = next((pre_id, float(C)) for score, pre_id, C in candidates if score == best)
    return chosen


def _first_best(rows, column: str) -> tuple[str, float]:
    values = rows[column].fillna(-np.inf).to_numpy()
    row = rows.iloc[int(np.argmax(values))]
    return row["preprocessing_id"], float(row["C"])


def _regrets(results, chosen: dict) -> dict:
    """{"per_category": {category: points}, "macro": mean points}: best held-out F1 minus the chosen one's."""
    per_category = {}
    for category, (pre_id, C) in chosen.items():
        rows = results[results["category"] == category]
        picked = rows[(rows["preprocessing_id"] == pre_id) & np.isclose(rows["C"], C)]["holdout_f1"].iloc[0]
        per_category[category] = 100 * (rows["holdout_f1"].max() - picked)
    return {"per_category": per_category, "macro": float(np.mean(list(per_category.values())))}


def _print(result: dict) -> None:
    names = ("regret_xialpha", "regret_xialpha_xa", "regret_cv")
    rows = [
        [
            c,
            *(result[name]["per_category"][c] for name in names),
            _label(result["chosen"]["xialpha"][c]),
            _label(result["chosen"]["cv"][c]),
        ]
        for c in result["grid"]["categories"]
    ]
    rows.append(["macro", *(result[name]["macro"] for name in names), "", ""])
    estimator = result["xialpha_estimator"]
    print_table(
        ["category", f"regret_{estimator}_pts", "regret_xa_pts", "regret_cv_pts", f"{estimator}_choice", "cv_choice"],
        rows,
        title="\nselection regret",
    )
    folds = result["grid"]["folds"]
    extrapolated = f" (1 of {folds} folds run, x {folds})" if result["gscv_sparse_extrapolated"] else ""
    print_table(
        ["method", "wall_s", "xialpha_speedup"],
        [
            ["xialpha sweep", result["xialpha_wall_s"], 1.0],
            ["GridSearchCV precomputed Gram", result["gscv_gram_wall_s"], result["speedup_vs_gram"]],
            ["GridSearchCV sparse" + extrapolated, result["gscv_sparse_wall_s"], result["speedup_vs_sparse"]],
        ],
        title="\nwall time, same grid, 2 cores",
    )


def _label(choice: dict) -> str:
    return f"stem={choice['stemming']} C={choice['C']:g}"


if __name__ == "__main__":
    main()
