"""Benchmark: held-out F1 regret and compute cost of model selectors on Reuters-21578 (issue 10).

Grid per split and category: C (log-spaced) x preprocessing (without / with Porter stemming), one
linear-kernel SVM per configuration on the training half. Each selector picks, per split and
category, the configuration with the largest estimated F1 (ties: first in grid order). Regret is
the best held-out F1 in the grid minus the held-out F1 of the chosen configuration, in points,
macro-averaged over categories and averaged over splits. Cost is the CPU seconds the selector
needs over the whole grid (BLAS limited to one thread): the main fits plus the estimate for the
one-fit estimators, the fold fits for k-fold CV. Selectors:

    xa          xi-alpha, rho = 1                  xa_rho0.5  xi-alpha, rho = 0.5
    xa_ext      extended xi-alpha (rho 1, depth)   span       span estimate of the LOO error
    loo         exact pruned leave-one-out         hybrid     top --shortlist configurations by xa, then loo
    cv10, cv5   stratified 10- and 5-fold CV

    python bench/selection_quality.py                      # 5 random 50/50 splits of ModApte (12,902)
    # the committed figures: seeds 0-4 (as above), 5-9 and 10-14 (each about 40 min), then --pool
    python bench/selection_quality.py --first-seed 5 --loo none --out a.json   # 5 fresh splits
    python bench/selection_quality.py --pool a.json b.json --out all.json      # summary over both runs
    python bench/selection_quality.py --modapte --loo none  # ModApte train/test, no exact LOO
    python bench/selection_quality.py --quick               # synthetic smoke: 1 split x 3 categories x 3 C
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import scipy.stats
from threadpoolctl import threadpool_limits

from xialpha.corpora import load_reuters, make_synthetic
from xialpha.estimators import (
    fit_svm,
    holdout,
    kfold,
    loo_exact,
    r_delta_squared,
    span_estimate,
    xi_alpha,
    xi_alpha_extended,
)
from xialpha.features import Preprocessing, linear_gram

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REUTERS = REPO.parent / "shared" / "corpora" / "reuters21578"
RESULTS = REPO / "bench" / "results"
PREPROCESSINGS = {"plain": Preprocessing(), "porter": Preprocessing(stemming="porter")}
ONE_FIT = ("xa", "xa_rho0.5", "xa_ext", "span")
SELECTORS = (*ONE_FIT, "loo", "hybrid", "cv10", "cv5")


def main() -> None:
    args = _parse_args()
    if args.pool:
        _pool(args.pool, args.out)
        return
    corpus, splits, setup = _corpus_and_splits(args)
    c_values = np.geomspace(args.c_min, args.c_max, args.n_c)
    categories = corpus.choose_categories(top_k=args.categories)
    excluded = {"all": (), "hybrid": ("loo",), "none": ("loo", "hybrid")}[args.loo]
    selectors = [s for s in SELECTORS if s not in excluded]
    rows: list[dict] = []
    wall = time.perf_counter()
    with threadpool_limits(limits=1):
        for split_no, (train, test) in enumerate(splits):
            data = {name: _features(spec, corpus, train, test) for name, spec in PREPROCESSINGS.items()}
            for category in categories:
                y = corpus.y(category)
                category_rows = [
                    _evaluate(y[train], y[test], data[prep], prep, float(C), args, selectors)
                    for prep in PREPROCESSINGS for C in c_values
                ]
                for row in category_rows:
                    row.update(split=args.first_seed + split_no, category=category)
                if "hybrid" in selectors:
                    _hybrid(category_rows, y[train], data, args.shortlist)
                rows.extend(category_rows)
                _progress(args.first_seed + split_no, category, category_rows, wall)
    summary = _summarise(rows, selectors)
    _print_table(summary, setup, c_values, time.perf_counter() - wall)
    result = {"benchmark": "selection_quality", "quick": args.quick, "setup": setup | {
        "categories": categories, "c_values": [round(float(c), 6) for c in c_values],
        "preprocessings": list(PREPROCESSINGS), "xa_ext_depth": args.depth, "hybrid_shortlist": args.shortlist,
        "cost_unit": "CPU seconds, BLAS on one thread"}, **summary,
        "wall_seconds": round(time.perf_counter() - wall, 1),
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "rows": [_rounded(row) for row in rows]}
    out = args.out or RESULTS / ("selection_quality.quick.json" if args.quick else "selection_quality.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="synthetic smoke run (1 split, 3 categories, 3 C)")
    parser.add_argument("--reuters", type=Path, default=DEFAULT_REUTERS, help="Reuters-21578 directory or archive")
    parser.add_argument("--modapte", action="store_true", help="one split: ModApte train (9,603) / test (3,299)")
    parser.add_argument("--splits", type=int, default=5, help="random 50/50 splits (ignored with --modapte)")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first split (splits use consecutive seeds)")
    parser.add_argument("--docs", type=int, default=None, help="use a random subset of this many documents")
    parser.add_argument("--categories", type=int, default=10, help="the most frequent categories")
    parser.add_argument("--n-c", type=int, default=9, help="number of C values")
    parser.add_argument("--c-min", type=float, default=0.05)
    parser.add_argument("--c-max", type=float, default=50.0)
    parser.add_argument("--depth", type=int, default=10, help="search depth of the extended xi-alpha")
    parser.add_argument("--loo", choices=("all", "hybrid", "none"), default="all",
                        help="exact LOO everywhere, only for the hybrid's shortlist, or not at all")
    parser.add_argument("--shortlist", type=int, default=3, help="hybrid: configurations kept by xa for exact LOO")
    parser.add_argument("--out", type=Path, default=None, help="JSON path (default bench/results/...)")
    parser.add_argument("--pool", type=Path, nargs="+", default=None, metavar="JSON",
                        help="only summarise the rows of earlier runs (same grid, distinct seeds) together")
    args = parser.parse_args()
    if args.quick:
        args.splits, args.categories, args.n_c, args.modapte, args.docs = 1, 3, 3, False, None
    return args


def _corpus_and_splits(args):
    """The corpus and a list of (train, test) index arrays, plus a description of the setup."""
    if args.quick:
        corpus = make_synthetic(n_docs=700, n_categories=3, seed=0)
    else:
        corpus = load_reuters(args.reuters)
    rng = np.random.default_rng(0)
    pool = np.arange(len(corpus)) if args.docs is None else np.sort(rng.permutation(len(corpus))[: args.docs])
    if args.modapte:
        train = np.intersect1d(np.flatnonzero(corpus.splits == "train"), pool)
        test = np.intersect1d(np.flatnonzero(corpus.splits == "test"), pool)
        splits, kind = [(train, test)], "ModApte train / test"
    else:
        splits = []
        for seed in range(args.first_seed, args.first_seed + args.splits):
            order = np.random.default_rng(seed).permutation(pool)
            half = order.size // 2
            splits.append((np.sort(order[:half]), np.sort(order[half:])))
        kind = f"{args.splits} random 50/50 splits (seeds {args.first_seed}-{args.first_seed + args.splits - 1})"
    setup = {"corpus": corpus.name, "documents": int(pool.size), "splits": kind,
             "train_docs": int(splits[0][0].size), "test_docs": int(splits[0][1].size)}
    return corpus, splits, setup


def _features(spec: Preprocessing, corpus, train: np.ndarray, test: np.ndarray) -> dict:
    """Training Gram (n_train, n_train), test cross-Gram (n_test, n_train) and R_delta^2 of one split."""
    fitted, X_train = spec.fit_transform(corpus.subset(train).texts)
    X_test = fitted.transform(corpus.subset(test).texts)
    gram = linear_gram(X_train)
    return {"gram": gram, "cross": linear_gram(X_test, X_train), "r_delta2": r_delta_squared(gram=gram)}


def _timed(compute):
    start = time.process_time()
    value = compute()
    return value, time.process_time() - start


def _evaluate(y_train, y_test, data: dict, prep: str, C: float, args, selectors) -> dict:
    """One configuration: held-out F1, each selector's estimated F1 (f1_*) and CPU cost (cost_*)."""
    gram, r_delta2 = data["gram"], data["r_delta2"]
    fit, fit_cost = _timed(lambda: fit_svm(y_train, C, gram=gram, check_input=False))
    row = {"prep": prep, "C": C, "heldout_f1": _f1(holdout(fit, y_test, data["cross"])), "fit_cost": fit_cost,
           "n_sv": fit.n_sv, "n_bounded_sv": fit.n_bounded_sv, "_fit": fit}
    one_fit = {
        "xa": lambda: xi_alpha(fit.alpha, fit.xi, fit.y, r_delta2, rho=1.0),
        "xa_rho0.5": lambda: xi_alpha(fit.alpha, fit.xi, fit.y, r_delta2, rho=0.5),
        "xa_ext": lambda: xi_alpha_extended(fit, gram, r_delta2, rho=1.0, depth=args.depth),
        "span": lambda: span_estimate(fit, gram),
    }
    if "loo" in selectors:
        one_fit["loo"] = lambda: loo_exact(y_train, C, fit=fit, r_delta2=r_delta2, gram=gram)
    for name, compute in one_fit.items():
        estimate, cost = _timed(compute)
        row[f"f1_{name}"], row[f"cost_{name}"] = _f1(estimate), fit_cost + cost
        if name == "loo":
            row["loo_retrains"] = estimate.retrains
    for k in (10, 5):
        if f"cv{k}" in selectors:
            estimate, cost = _timed(lambda: kfold(y_train, C, k=k, seed=0, gram=gram))
            row[f"f1_cv{k}"], row[f"cost_cv{k}"] = _f1(estimate), cost
    return row


def _hybrid(rows: list[dict], y_train, data: dict, shortlist: int) -> None:
    """Exact LOO F1 for the `shortlist` configurations with the best xa F1; the rest get -inf."""
    ranked = sorted(range(len(rows)), key=lambda i: -rows[i]["f1_xa"])[:shortlist]
    for i, row in enumerate(rows):
        row["f1_hybrid"], row["cost_hybrid"] = -np.inf, row["cost_xa"]
        if i not in ranked:
            continue
        if "f1_loo" in row:
            row["f1_hybrid"], row["cost_hybrid"] = row["f1_loo"], row["cost_loo"]
            continue
        split = data[row["prep"]]
        estimate, cost = _timed(lambda: loo_exact(y_train, row["C"], fit=row["_fit"], r_delta2=split["r_delta2"],
                                                  gram=split["gram"]))
        row["f1_hybrid"], row["cost_hybrid"] = _f1(estimate), row["cost_xa"] + cost


def _f1(estimate) -> float:
    """F1 as a number: undefined (no positive predicted or present) counts as 0."""
    value = estimate.f1
    return 0.0 if np.isnan(value) else float(value)


def _summarise(rows: list[dict], selectors) -> dict:
    """regret (points) and cost_s per selector, with per-split regrets and the cost relative to cv10."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["split"], row["category"]), []).append(row)
    regrets = {s: {} for s in selectors}
    for (split, category), group in groups.items():
        best = max(row["heldout_f1"] for row in group)
        for s in selectors:
            chosen = max(range(len(group)), key=lambda i: (group[i][f"f1_{s}"], -i))
            regrets[s].setdefault(split, []).append(100.0 * (best - group[chosen]["heldout_f1"]))
    regret = {s: float(np.mean([np.mean(v) for v in regrets[s].values()])) for s in selectors}
    cost = {s: float(sum(row[f"cost_{s}"] for row in rows)) for s in selectors}
    summary = {"regret": _round(regret), "cost_s": _round(cost),
               "regret_by_split": {s: [round(float(np.mean(v)), 3) for v in regrets[s].values()] for s in selectors}}
    if "cv10" in cost:
        summary["cost_relative_to_cv10"] = {s: round(c / cost["cv10"], 4) for s, c in cost.items()}
        summary["vs_cv10"] = {s: _paired(regrets[s], regrets["cv10"]) for s in selectors if s != "cv10"}
    if "loo" in selectors:
        summary["f1_minus_loo"] = {s: _gap(rows, s) for s in selectors if s != "loo"}
    return summary


def _gap(rows: list[dict], selector: str) -> dict:
    """Estimated F1 minus exact-LOO F1 over all configurations, in points: mean, mean |.|, max |.|."""
    gaps = 100.0 * np.array([row[f"f1_{selector}"] - row["f1_loo"] for row in rows if np.isfinite(row[f"f1_{selector}"])])
    return {"mean": round(float(gaps.mean()), 3), "mean_abs": round(float(np.abs(gaps).mean()), 3),
            "max_abs": round(float(np.abs(gaps).max()), 3), "configs": int(gaps.size)}


def _paired(regrets: dict, reference: dict) -> dict:
    """Regret minus cv10's regret, paired by split: mean, 95% t-interval over splits, and
    wins / ties / losses over (split, category) pairs (a win = smaller regret than cv10)."""
    by_split = np.array([np.mean(regrets[s]) - np.mean(reference[s]) for s in reference])
    pairs = np.concatenate([np.subtract(regrets[s], reference[s]) for s in reference])
    result = {"mean": round(float(by_split.mean()), 3), "splits": int(by_split.size),
              "wins": int(np.sum(pairs < -1e-9)), "ties": int(np.sum(np.abs(pairs) <= 1e-9)),
              "losses": int(np.sum(pairs > 1e-9))}
    if by_split.size > 1:
        half = scipy.stats.t.ppf(0.975, by_split.size - 1) * by_split.std(ddof=1) / np.sqrt(by_split.size)
        result["ci95"] = [round(float(by_split.mean() - half), 3), round(float(by_split.mean() + half), 3)]
    return result


def _pool(paths: list[Path], out: Path | None) -> None:
    """Summarise the rows of several runs (same grid and selectors, distinct splits) together."""
    runs = [json.loads(Path(path).read_text()) for path in paths]
    rows = [row for run in runs for row in run["rows"]]
    seen = [(row["split"], row["category"], row["prep"], row["C"]) for row in rows]
    if len(set(seen)) != len(seen):
        raise SystemExit(f"--pool: the runs share splits ({sorted(set(r['split'] for r in rows))}); pool distinct seeds")
    selectors = [name for name in SELECTORS if all(f"f1_{name}" in row for row in rows)]
    summary = _summarise(rows, selectors)
    setup = runs[0]["setup"]
    if len(runs) > 1:
        setup = setup | {"splits": f"{len(set(r['split'] for r in rows))} random 50/50 splits, pooled "
                                   f"from {', '.join(str(p) for p in paths)}"}
    wall = sum(run["wall_seconds"] for run in runs)
    _print_table(summary, setup, setup["c_values"], wall)
    result = {"benchmark": "selection_quality", "quick": any(run["quick"] for run in runs), "setup": setup,
              **summary, "wall_seconds": round(wall, 1),
              "machine": runs[0]["machine"], "pooled_from": [str(p) for p in paths], "rows": rows}
    out = out or RESULTS / "selection_quality.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


def _round(values: dict) -> dict:
    return {k: round(v, 3) for k, v in values.items()}


def _rounded(row: dict) -> dict:
    return {k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items() if not k.startswith("_")}


def _progress(split_no: int, category: str, rows: list[dict], wall_start: float) -> None:
    best = max(row["heldout_f1"] for row in rows)
    print(f"  split {split_no} {category:<10} best held-out F1 {100 * best:5.1f}   "
          f"[{time.perf_counter() - wall_start:6.0f} s]", flush=True)


def _print_table(summary: dict, setup: dict, c_values, wall: float) -> None:
    print(f"\n{setup['corpus']}: {setup['splits']} (train {setup['train_docs']}, test {setup['test_docs']}); "
          f"C = {', '.join(f'{c:.3g}' for c in c_values)}; wall {wall:.0f} s")
    relative = summary.get("cost_relative_to_cv10", {})
    paired = summary.get("vs_cv10", {})
    print(f"{'selector':<10} {'regret (F1 pts)':>16} {'cost (CPU s)':>13} {'cost / cv10':>12} "
          f"{'minus cv10 [95% CI]':>22} {'win/tie/loss':>13}")
    for name, regret in summary["regret"].items():
        ratio = f"{relative[name]:.3f}" if name in relative else "-"
        versus, record = "-", "-"
        if name in paired:
            interval = paired[name].get("ci95")
            versus = f"{paired[name]['mean']:+.2f}" + (f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else "")
            record = f"{paired[name]['wins']}/{paired[name]['ties']}/{paired[name]['losses']}"
        print(f"{name:<10} {regret:>16.2f} {summary['cost_s'][name]:>13.1f} {ratio:>12} {versus:>22} {record:>13}")


if __name__ == "__main__":
    main()
