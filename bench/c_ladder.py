"""The C ladder of `svm.C = "auto"` (xialpha.estimators.c_ladder) on Reuters, against config/reuters.toml's 8-C grid.

Per category of the 10 most frequent of ModApte train (unit-norm TF-IDF, min_df = 3, as the spec's
first preprocessing): the starting C (`starting_C`: 1 / the largest margin of the balanced
all-at-bound solution), LIBLINEAR's starting C 1 / (n max ||x||^2) beside it, the ladder's C (x2
until settled, at most 16, warm-started as sweeps' C paths are), why it stopped, its fits against
the grid's 8, and the held-out F1 on ModApte test at each C: the best C of the ladder and of the
grid and their F1 (a sanity check that the ladder reaches the good C, not a selection: the sweep
selects by its estimates). CPU seconds of the fits beside.

    python bench/c_ladder.py            # Reuters ModApte
    python bench/c_ladder.py --quick    # a 600-document synthetic corpus
"""

from __future__ import annotations

import time

import numpy as np
from common import REUTERS_SPEC, load_corpus, make_parser, output_path, print_table, vectorize, write_results

from xialpha.estimators.c_ladder import LadderPoint, ladder, settled, starting_C
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.features import Preprocessing
from xialpha.spec.grid import AUTO_C_LIMIT
from xialpha.spec.sweep import load_spec


def _f1(y: np.ndarray, scores: np.ndarray) -> float:
    predicted = scores > 0
    tp = int((predicted & (y > 0)).sum())
    return 2 * tp / max(int(predicted.sum()) + int((y > 0).sum()), 1)


def _category(X, y, X_test, y_test, grid: list[float]) -> dict:
    fits: dict[float, tuple] = {}
    warm = None

    def fit_at(C: float) -> LadderPoint:
        nonlocal warm
        start = time.process_time()
        fit = fit_svm(TrainingProblem(y, X=X), SVMParameters(C), warm_start=warm, check_input=False)
        warm = fit
        fits[C] = (_f1(y_test, fit.decision_function(X_test)), time.process_time() - start)
        return LadderPoint.of(fit, C)

    C0 = starting_C(X, y)
    points = ladder(fit_at, C0, AUTO_C_LIMIT)
    ladder_f1 = {p.C: fits[p.C][0] for p in points}
    ladder_seconds = sum(fits[p.C][1] for p in points)
    warm, fits = None, {}
    for C in grid:
        fit_at(C)
    grid_f1 = {C: f1 for C, (f1, _) in fits.items()}
    best_ladder, best_grid = max(ladder_f1, key=ladder_f1.get), max(grid_f1, key=grid_f1.get)
    return {
        "n": int(len(y)),
        "positives": int((y > 0).sum()),
        "starting_C": C0,
        "liblinear_starting_C": 1.0 / (len(y) * float(X.multiply(X).sum(axis=1).max())),
        "ladder": [p.__dict__ for p in points],
        "stopped": "no bounded SV"
        if points[-1].n_bounded_sv == 0
        else ("settled" if len(points) > 1 and settled(points[-2], points[-1]) else "limit"),
        "fits": len(points),
        "ladder_best_C": best_ladder,
        "ladder_best_f1": ladder_f1[best_ladder],
        "grid_best_C": best_grid,
        "grid_best_f1": grid_f1[best_grid],
        "ladder_cpu_s": ladder_seconds,
        "grid_cpu_s": sum(s for _, s in fits.values()),
    }


def main() -> None:
    args = make_parser(__doc__).parse_args()
    grid = sorted(load_spec(REUTERS_SPEC).C)
    corpus = load_corpus(args)
    train, test = corpus.split("train"), corpus.split("test")
    X, X_test = vectorize(Preprocessing(min_df=3), train.texts, test.texts)
    categories = train.choose_categories(top_k=3 if args.quick else 10)
    rows = {c: _category(X, train.y(c), X_test, test.y(c), grid) for c in categories}
    print_table(
        ["category", "pos", "C0", "liblinear C0", "ladder C", "stop", "fits", "ladder best C/F1", "grid best C/F1"],
        [
            [
                c,
                r["positives"],
                f"{r['starting_C']:.4g}",
                f"{r['liblinear_starting_C']:.2g}",
                f"{r['ladder'][0]['C']:.3g}..{r['ladder'][-1]['C']:.3g}",
                r["stopped"],
                r["fits"],
                f"{r['ladder_best_C']:.3g}/{r['ladder_best_f1']:.3f}",
                f"{r['grid_best_C']:.3g}/{r['grid_best_f1']:.3f}",
            ]
            for c, r in rows.items()
        ],
        title=f"C ladder vs the {len(grid)}-C grid",
    )
    fits = sum(r["fits"] for r in rows.values())
    print(f"fits: ladder {fits}, grid {len(grid) * len(rows)}")
    write_results(
        {
            "benchmark": "c_ladder",
            "quick": args.quick,
            "grid": grid,
            "categories": rows,
            "ladder_fits": fits,
            "grid_fits": len(grid) * len(rows),
        },
        output_path("c_ladder", args),
    )


if __name__ == "__main__":
    main()
