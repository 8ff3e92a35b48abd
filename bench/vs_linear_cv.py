"""xialpha's linear sweep vs GridSearchCV(LinearSVC(loss="hinge"), cv=10, scoring="f1") on identical features.

The grid is config/reuters.toml's: ModApte train (9,603) / test (3,299), the 10 most frequent
categories x 2 preprocessings (with and without Porter stemming) x 8 C values, linear SVM.
  xialpha  `run_sweep` on a LocalCluster of 2 workers into a temporary store, end to end (cluster
           start and stop, corpus, features, one task per C path with warm starts, estimates,
           held-out scores, storage), run before and after the peers: the slower of the two walls
           counts (`xialpha_walls_s` has both), so load that another process adds part-way through
           the script does not favour xialpha; per category the config `xialpha select` chooses by F1 of the
           sweep's selection estimator (`spec.selection_estimator`, span, averaged over C neighbours
           by default: `xialpha.selection.selector.select`).
  peer     GridSearchCV(LinearSVC(loss="hinge"), {"C": grid}, cv=10, scoring="f1", n_jobs=2,
           refit=False) per category x preprocessing, end to end in one timed block: the corpus
           loaded by the spec's own loader, the features made exactly as the sweep makes them
           (`xialpha.jobs.tasks.vectorize`, train and test), joblib's worker pool started by the
           first search; per category the config with the largest mean CV F1 over both
           preprocessings and C. Then the same end to end with cv=5 (`speedup_cv5`, `regret_cv5`):
           it selects about as well as cv=10 at half the cost, which many users run instead.
Regret = best held-out F1 in the grid - held-out F1 of the chosen config, in F1 points (>= 0),
per category and macro-averaged, each method scored with its own solver: xialpha's choice and best
from the sweep's stored `holdout_f1` (xialpha's solver); the peers' from LinearSVC(loss="hinge", C)
refitted on the training split for every config of the grid and scored on the test split (not
timed).
Where xialpha's time goes (`xialpha_seconds`): its wall, the workers' task seconds (Dask's task
stream), of which the fits (the solver, `fit_seconds` of the stored rows) and the estimates (all
of each fit task beyond the solver: decision values, xi-alpha, span, held-out scoring:
`estimate_seconds`); the rest of the task seconds is the data path on the workers (vectorising,
training data) and batch bookkeeping; wall x workers - task seconds is the driver's part (loading
the corpus, cluster start and stop, sending data, storing) and idle workers.
The sweep's fixed cost `fixed_seconds` (issue 40: <= 1.5 s), of the run whose wall counts: its wall
minus the fit tasks' critical path on its threads (their compute seconds / threads: the wall of the
fits and estimates alone, perfectly balanced); `fixed_parts` splits it into the phases of
`xialpha.jobs.sweep.PHASES` (cluster start, corpus load, planning, features until the first fit,
the fits' imbalance, the last rows' storing, cluster close, the sweep's compaction and summary).
`small` repeats all of it on a seeded
random 2,000 of ModApte's 12,902 documents (train and
test together, each keeping its ModApte split), written to a JSON-lines table that both sides load.

`span_skipped_fraction`: the share of configurations whose span estimate was decided by bounds
(0 unless the spec's [estimators] span_prune is on; bench/span_prune.py sweeps Reuters with and without it).

Beside it, LIBLINEAR's own warm-started C search (`liblinear-official`, `train -s 2 -C -v 10`) on the
same problems (category x preprocessing, the same training features), one core: it selects by
accuracy over its own C range with the L2-loss (squared hinge) primal solver and no bias term (as
the issue names it), so only its time is compared, per core-second: LIBLINEAR's load + features +
search seconds on 1 core vs xialpha's wall x 2 cores. Skipped with a note when the package is absent.

    python bench/vs_linear_cv.py           # Reuters (a few minutes on 2 cores)
    python bench/vs_linear_cv.py --quick   # a small synthetic grid, 3 and 2 folds
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from common import make_parser, output_path, print_table, sweep_spec, timed, write_results
from joblib.externals.loky import get_reusable_executor
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV
from sklearn.svm import LinearSVC

from xialpha.jobs.sweep import run_sweep
from xialpha.jobs.tasks import vectorize
from xialpha.selection.objective import Objective
from xialpha.selection.selector import select
from xialpha.storage.opening import open_store

N_JOBS = 2  # the peer's joblib workers and xialpha's Dask workers
SMALL_DOCS, SMALL_SEED = 2000, 0
QUICK_SMALL_DOCS = 200


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--folds", type=int, default=None, help="cross-validation folds (default 10, --quick 3)")
    parser.add_argument("--folds-short", type=int, default=None, help="the second peer's folds (default 5, --quick 2)")
    parser.add_argument(
        "--small-docs",
        type=int,
        default=None,
        help=f"documents of the `small` subset (default {SMALL_DOCS}, --quick {QUICK_SMALL_DOCS})",
    )
    parser.add_argument("--no-liblinear", action="store_true", help="skip LIBLINEAR's C search")
    args = parser.parse_args()
    folds = args.folds or (3 if args.quick else 10)
    folds_short = args.folds_short or (2 if args.quick else 5)
    liblinear = None if args.no_liblinear else _liblinear_train()
    spec = sweep_spec(args)
    with tempfile.TemporaryDirectory(prefix="xialpha-vs-linear-cv-") as directory:
        small_spec, subset = _subset_spec(
            spec, args.small_docs or (QUICK_SMALL_DOCS if args.quick else SMALL_DOCS), Path(directory) / "subset.jsonl"
        )
        full = _compare(spec, folds, folds_short, liblinear)
        small = _compare(small_spec, folds, folds_short, liblinear)
    result = {
        "benchmark": "vs_linear_cv",
        "quick": args.quick,
        "sweep_id": spec.id,
        "folds": folds,
        "folds_short": folds_short,
        "n_jobs": N_JOBS,
        "xialpha_estimator": spec.selection_estimator,
        "xialpha_smooth": Objective().smooth,
        "regret_units": "F1 points: best held-out F1 in the grid minus held-out F1 of the chosen config, "
        "macro over categories, each method scored with its own solver",
        **full,
        "small": {**small, "subset": subset},
        "liblinear_note": (
            "LIBLINEAR train -s 2 -C -v %d (L2-loss primal, no bias, its own C range, selects by "
            "accuracy): time only; per core-second = its load + features + search on 1 core over "
            "xialpha's wall x %d cores" % (folds, N_JOBS)
        )
        if liblinear
        else "skipped: liblinear-official is not installed (pip install liblinear-official)",
    }
    _print(result)
    write_results(result, output_path("vs_linear_cv", args))


def _compare(spec, folds: int, folds_short: int, liblinear) -> dict:
    """xialpha and both peers on one spec: walls, choices, regrets (and LIBLINEAR's C search when given)."""
    results, first_wall, fits, seconds = _xialpha(spec)
    categories = sorted(
        results["category"].unique(), key=lambda c: -results.loc[results.category == c, "n_pos"].iloc[0]
    )
    features, cv_scores, peer = _peer(spec, categories, folds)
    _, cv_short_scores, peer_short = _peer(spec, categories, folds_short)
    _, second_wall, _, second_seconds = _xialpha(spec)  # before and after the peers: load that comes or goes shows
    xialpha_wall = max(first_wall, second_wall)  # the slower of the two counts
    slower = seconds if first_wall >= second_wall else second_seconds
    grid = [float(C) for C in spec.C]
    heldout, not_converged = _linearsvc_heldout(features, categories, grid)
    choices = {
        "xialpha": _xialpha_choices(results, spec),
        "cv": _cv_choices(cv_scores, categories, list(features), grid),
        "cv5": _cv_choices(cv_short_scores, categories, list(features), grid),
    }
    per_category = {}
    for category in categories:
        rows = results[results["category"] == category]
        pre, C = choices["xialpha"][category]
        picked = rows[(rows["preprocessing_id"] == pre) & np.isclose(rows["C"], C)]["holdout_f1"].iloc[0]
        best_cv = max(float(np.max(heldout[category, p])) for p in features)
        per_category[category] = {"xialpha": 100 * (float(rows["holdout_f1"].max()) - float(picked))}
        for name in ("cv", "cv5"):
            pre_cv, C_cv = choices[name][category]
            per_category[category][name] = 100 * (best_cv - float(heldout[category, pre_cv][grid.index(C_cv)]))
    stemming = {p.id: p.stemming for p in spec.preprocessings}
    out = {
        "categories": categories,
        "n_train": int(features[next(iter(features))].X_train.shape[0]),
        "n_test": int(features[next(iter(features))].X_test.shape[0]),
        "C": grid,
        "preprocessings": {p.id: p.params() for p in spec.preprocessings},
        "xialpha_wall_s": xialpha_wall,
        "xialpha_walls_s": [first_wall, second_wall],
        "xialpha_fits": fits,
        "xialpha_seconds": seconds,
        "xialpha_seconds_second_run": second_seconds,
        "fixed_seconds": slower["fixed_s"],
        "fixed_parts": slower["fixed_parts_s"],
        "peer_wall_s": peer["wall_s"],
        "peer_seconds": peer,
        "peer_cv5_wall_s": peer_short["wall_s"],
        "peer_cv5_seconds": peer_short,
        "speedup": peer["wall_s"] / xialpha_wall,
        "speedup_cv5": peer_short["wall_s"] / xialpha_wall,
        **{
            f"regret_{name}": float(np.mean([r[name] for r in per_category.values()]))
            for name in ("xialpha", "cv", "cv5")
        },
        "regret_per_category": per_category,
        "chosen": {
            name: {c: {"preprocessing_id": p, "stemming": stemming[p], "C": C} for c, (p, C) in chosen.items()}
            for name, chosen in choices.items()
        },
        "linearsvc_heldout_not_converged": not_converged,
        "xialpha_estimate_over_fit_median": float((results["estimate_seconds"] / results["fit_seconds"]).median()),
        "span_prune": spec.estimators["span_prune"],
        "span_skipped_fraction": float(results["span_d_pos_low"].notna().mean())
        if "span_d_pos_low" in results
        else 0.0,
    }
    if liblinear is not None:
        out.update(_liblinear_search(liblinear, features, categories, folds, peer, xialpha_wall))
    return out


def _xialpha(spec):
    """(the sweep's ok rows at rho = 1, its end-to-end wall seconds, fits, where the seconds went)
    on 2 local workers."""
    with tempfile.TemporaryDirectory(prefix="xialpha-vs-linear-cv-store-") as directory:
        store = open_store(directory, create=True, writable=True)
        summary = run_sweep(spec, store, workers=N_JOBS)
        if summary.failed:
            raise SystemExit(f"xialpha sweep: {summary.failed} configs failed, e.g. {summary.failures[0]}")
        results = store.read_results_df(spec.id)
    results = results[np.isclose(results["rho"], 1.0)]
    fits_s, estimates_s = float(results["fit_seconds"].sum()), float(results["estimate_seconds"].sum())
    seconds = {
        "wall_s": summary.wall_seconds,
        "threads": summary.threads,
        "task_s": summary.task_seconds,
        "fits_s": fits_s,
        "estimates_s": estimates_s,
        "data_path_and_bookkeeping_task_s": summary.task_seconds - fits_s - estimates_s,
        "driver_and_idle_thread_s": summary.wall_seconds * summary.threads - summary.task_seconds,
        "fit_task_s": summary.fit_task_seconds,
        "fit_path_s": summary.fit_task_seconds / summary.threads,
        "fixed_s": summary.fixed_seconds,
        "fixed_parts_s": summary.phases,
    }
    print(
        f"xialpha sweep {spec.id}: {summary.fits} fits in {summary.wall_seconds:.1f} s (task seconds "
        f"{summary.task_seconds:.1f}: fits {fits_s:.1f}, estimates {estimates_s:.1f}); fixed cost "
        f"{summary.fixed_seconds:.2f} s: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.phases.items()),
        flush=True,
    )
    return results, summary.wall_seconds, summary.fits, seconds


def _peer(spec, categories: list[str], folds: int):
    """The peer end to end: ({preprocessing id: Features}, {(category, preprocessing id): mean CV F1
    per C}, seconds {load, vectorize, search, wall_s})."""
    get_reusable_executor().shutdown(wait=True)  # each comparison starts its own worker pool, as xialpha its cluster
    start = time.perf_counter()
    corpus, load_s = timed(spec.corpus.load)
    features, vectorize_s = {}, 0.0
    for pre in spec.preprocessings:
        features[pre.id], seconds = timed(
            vectorize, corpus, pre, spec.corpus.train_split, spec.corpus.test_split, categories
        )
        vectorize_s += seconds
    scores, search_s = {}, 0.0
    for category in categories:
        for pre_id, data in features.items():
            search = GridSearchCV(
                LinearSVC(loss="hinge", random_state=0),
                {"C": list(spec.C)},
                cv=folds,
                scoring="f1",
                n_jobs=N_JOBS,
                refit=False,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # non-convergence, F1 of folds without a positive prediction
                _, seconds = timed(search.fit, data.X_train, data.targets()[0][category])
            scores[category, pre_id] = np.asarray(search.cv_results_["mean_test_score"], dtype=float)
            search_s += seconds
    wall = time.perf_counter() - start
    print(
        f"GridSearchCV(LinearSVC, cv={folds}) {spec.id}: {wall:.1f} s (load {load_s:.1f}, features {vectorize_s:.1f}, "
        f"searches {search_s:.1f})",
        flush=True,
    )
    return features, scores, {"load_s": load_s, "vectorize_s": vectorize_s, "search_s": search_s, "wall_s": wall}


def _linearsvc_heldout(features: dict, categories: list[str], grid: list[float]):
    """({(category, preprocessing id): held-out F1 per C of LinearSVC(loss="hinge") trained on the
    training split}, fits that warned of non-convergence)."""
    heldout, not_converged = {}, 0
    for category in categories:
        for pre_id, data in features.items():
            f1 = []
            for C in grid:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", ConvergenceWarning)
                    model = LinearSVC(loss="hinge", C=C, random_state=0).fit(data.X_train, data.targets()[0][category])
                not_converged += any(issubclass(w.category, ConvergenceWarning) for w in caught)
                f1.append(f1_score(data.targets()[1][category], model.predict(data.X_test), zero_division=0.0))
            heldout[category, pre_id] = np.asarray(f1)
    return heldout, not_converged


def _xialpha_choices(results, spec) -> dict:
    """{category: (preprocessing_id, C)} as `xialpha select` chooses them by default (F1 of the
    sweep's selection estimator)."""
    objective = Objective(metric="f1", estimator=spec.selection_estimator)
    selection = select(results, objective, sweep_id=spec.id, runners_up=0)
    rows = selection.rows
    return {
        category: (preprocessing, float(C))
        for category, preprocessing, C in zip(rows["category"], rows["preprocessing_id"], rows["C"])
    }


def _cv_choices(scores: dict, categories: list[str], pre_ids: list[str], grid: list[float]) -> dict:
    """{category: (preprocessing_id, C)} with the largest mean CV F1 (ties: first in grid order)."""
    chosen = {}
    for category in categories:
        candidates = [
            (score, pre_id, C) for pre_id in sorted(pre_ids) for C, score in zip(grid, scores[category, pre_id])
        ]
        best = max(score for score, _, _ in candidates)
        chosen[category] = next((pre_id, C) for score, pre_id, C in candidates if score == best)
    return chosen


def _liblinear_train():
    """liblinear.liblinearutil.train, or None (with a note) when liblinear-official is not installed."""
    try:
        from liblinear.liblinearutil import train
    except ImportError:
        print("liblinear-official is not installed: LIBLINEAR's C search is skipped", flush=True)
        return None
    return train


def _liblinear_search(
    train, features: dict, categories: list[str], folds: int, peer: dict, xialpha_wall: float
) -> dict:
    """LIBLINEAR's `-s 2 -C -v folds` per category x preprocessing in this process (one core)."""
    seconds, chosen = {}, {}
    for category in categories:
        for pre_id, data in features.items():
            y = data.targets()[0][category].astype(np.float64)
            with contextlib.redirect_stdout(io.StringIO()):  # its "Best C = ..." line, printed despite -q
                (best_C, _, accuracy), seconds[f"{category}/{pre_id}"] = timed(
                    train, y, data.X_train, f"-s 2 -C -v {folds} -q"
                )
            chosen[f"{category}/{pre_id}"] = {"C": best_C, "cv_accuracy": accuracy}
    search = sum(seconds.values())
    end_to_end = peer["load_s"] + peer["vectorize_s"] + search
    return {
        "liblinear_c_search_wall_s": search,
        "liblinear_end_to_end_s": end_to_end,
        "liblinear_cores": 1,
        "xialpha_core_s": N_JOBS * xialpha_wall,
        "liblinear_over_xialpha_core_s": end_to_end / (N_JOBS * xialpha_wall),
        "liblinear_seconds": seconds,
        "liblinear_chosen": chosen,
    }


def _subset_spec(spec, n_docs: int, path: Path):
    """The spec on a seeded random n_docs of its corpus (every split, each document keeping its
    split, corpus order), written to `path` as a JSON-lines table; and a description of it."""
    corpus = spec.corpus.load()
    rng = np.random.default_rng(SMALL_SEED)
    keep = np.sort(rng.choice(len(corpus), size=min(n_docs, len(corpus)), replace=False))
    with path.open("w") as handle:
        for i in keep:
            handle.write(
                json.dumps(
                    {
                        "id": str(corpus.ids[i]),
                        "text": corpus.texts[i],
                        "labels": sorted(corpus.labels[i]),
                        "split": str(corpus.splits[i]),
                    }
                )
                + "\n"
            )
    args = {"path": str(path), "id_column": "id", "label_column": "labels", "split_column": "split"}
    small = dataclasses.replace(
        spec, id=f"{spec.id}-small", corpus=dataclasses.replace(spec.corpus, loader="table", args=args)
    )
    splits = corpus.splits[keep]
    return small, {
        "of": corpus.name,
        "n_docs": int(keep.size),
        "seed": SMALL_SEED,
        "choice": "seeded random sample of all documents (every split), corpus order, splits kept",
        "split_counts": {name: int((splits == name).sum()) for name in sorted(set(splits.tolist()))},
    }


def _print(result: dict) -> None:
    for name, part in (("full", result), ("small", result["small"])):
        rows = [
            [c, r["xialpha"], r["cv"], r["cv5"], _label(part["chosen"]["xialpha"][c]), _label(part["chosen"]["cv"][c])]
            for c, r in part["regret_per_category"].items()
        ]
        rows.append(["macro", part["regret_xialpha"], part["regret_cv"], part["regret_cv5"], "", ""])
        print_table(
            [
                "category",
                f"regret_xialpha_{result['xialpha_estimator']}_pts",
                f"regret_cv{result['folds']}_pts",
                f"regret_cv{result['folds_short']}_pts",
                "xialpha_choice",
                "cv_choice",
            ],
            rows,
            title=f"\n{name}: {part['n_train']} train / {part['n_test']} test, selection regret",
        )
        walls = [
            ["xialpha sweep (2 workers)", part["xialpha_wall_s"], 1.0],
            [f"GridSearchCV(LinearSVC, cv={result['folds']}), n_jobs=2", part["peer_wall_s"], part["speedup"]],
            [
                f"GridSearchCV(LinearSVC, cv={result['folds_short']}), n_jobs=2",
                part["peer_cv5_wall_s"],
                part["speedup_cv5"],
            ],
        ]
        if "liblinear_c_search_wall_s" in part:
            walls.append(
                [
                    "LIBLINEAR -s 2 -C, 1 core (load+features+search)",
                    part["liblinear_end_to_end_s"],
                    part["liblinear_end_to_end_s"] / part["xialpha_wall_s"],
                ]
            )
        print_table(["method", "wall_s", "over_xialpha_wall"], walls, title=f"{name}: end-to-end wall")
        spent = part["xialpha_seconds"]
        print(
            f"xialpha: wall {spent['wall_s']:.2f} s x {spent['threads']} threads; task seconds {spent['task_s']:.2f} = "
            f"fits {spent['fits_s']:.2f} + estimates {spent['estimates_s']:.2f} + data path and bookkeeping "
            f"{spent['data_path_and_bookkeeping_task_s']:.2f}; driver and idle {spent['driver_and_idle_thread_s']:.2f}"
        )
        if "liblinear_c_search_wall_s" in part:
            print(
                f"LIBLINEAR search alone {part['liblinear_c_search_wall_s']:.1f} s; per core-second LIBLINEAR / "
                f"xialpha = {part['liblinear_over_xialpha_core_s']:.2f} (> 1: xialpha does more per core-second)"
            )


def _label(choice: dict) -> str:
    return f"stem={choice['stemming']} C={choice['C']:g}"


if __name__ == "__main__":
    main()
