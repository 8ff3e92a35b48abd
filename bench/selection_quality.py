"""Benchmark: held-out F1 regret and CPU cost of model selectors on the linear path (issues 10, 19, 24).

Per setting, split, category and configuration (C log-spaced x preprocessing plain / Porter
stemming) one linear SVM is trained on the training part with xialpha's solver, the C path of
each (category, preprocessing) in ascending C with warm starts, as sweeps train it. Each selector
picks per (split, category) the configuration with the largest estimated F1. Regret is the best
held-out F1 in the grid minus the held-out F1 of the chosen configuration, in points, macro over
categories, mean over splits. Cost is CPU seconds (BLAS on one thread) over the whole grid.

Selectors (`SELECTORS`):

    xa            xi-alpha, rho = 1: fits + estimates (the seed's estimate; pessimistic at large C)
    xa05          xi-alpha with rho = 0.5 (R_delta^2 halved: near the typical squared span of an
                  unbounded SV, 0.55-0.85 R_delta^2 on Reuters): the cost of xa
    xa05_smooth   xa05 F1 averaged with its neighbours on the C grid (same preprocessing)
    span          span estimate of the LOO error: fits + span (ties: the first in grid order)
    span_bigC     span, ties broken toward the larger C
    span_smooth   span F1 averaged with its neighbours on the C grid (same preprocessing)
    loo           exact leave-one-out (warm-started working-set retrains): fits + LOO everywhere
    short_xa3     the 3 configurations with the best xa F1, decided by exact LOO
    short_span3   the 3 configurations with the best span F1, decided by exact LOO
    cv10, cv5     stratified 10- / 5-fold CV: per fold the C path warm-started in ascending C
                  (as LIBLINEAR's -C search does); cost = the fold fits only

Settings (`--setting`, several allowed):

    top10     random 50/50 splits of ModApte's 12,902 documents, the 10 most frequent categories
    next30    the same splits, the categories ranked 11-40 by frequency (rare positives)
    chrono    one chronological split of the 12,902 (older half trains, newer half tests), top 10
    synthetic make_synthetic(n_docs=3000, n_categories=8, seed=split seed), its own train/test
              (--synthetic-docs, --synthetic-categories: e.g. 10^5 documents)

What stands in the way of a small regret is also measured: the test set's own noise. For
HALVINGS random halvings of each test set, "fresh_half" picks the configuration with the best F1 on
one half (a selector given fresh labelled documents, as many as half the test set) and every
selector is scored on the other half (`regret_half_test`). It is a reference, not a floor: where
the half is small or positives are rare it picks worse than the estimators do.

The pre-registered rule of issue 24 (bench/README.md) is evaluated on every run and pool (`rule`):
a candidate (CANDIDATES) passes iff its pooled regret is at most cv10's and in no setting is it
worse than cv10 beyond the 95% interval of the paired difference (the interval's lower end <= 0);
of the candidates that pass, the first in CANDIDATES (cheapest estimates first) is `rule.default`.
The estimates' cost per fit, on Reuters and at 10^5 documents, is bench/overhead.py's.

    python bench/selection_quality.py --setting top10 --splits 5 --first-seed 15 --out a.json
    python bench/selection_quality.py --pool a.json b.json --out all.json   # summary over runs
    python bench/selection_quality.py --quick                                # synthetic smoke
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import scipy.stats
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from xialpha.corpora import load_reuters, make_synthetic
from xialpha.estimators.loo import loo_exact
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha
from xialpha.features import Preprocessing
from xialpha.selection.objective import DEFAULT_ESTIMATOR
from xialpha.selection.smoothing import smoothed_over_c

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REUTERS = REPO.parent / "shared" / "corpora" / "reuters21578"
RESULTS = REPO / "bench" / "results"
PREPROCESSINGS = {"plain": Preprocessing(), "porter": Preprocessing(stemming="porter")}
SELECTORS = (
    "xa",
    "xa05",
    "xa05_smooth",
    "span",
    "span_bigC",
    "span_smooth",
    "loo",
    "short_xa3",
    "short_span3",
    "cv10",
    "cv5",
)
CANDIDATES = ("xa05_smooth", "span_smooth")  # issue 24's pre-registered candidates, cheapest estimates first
SMOOTHED = {"xa05_smooth": "f1_xa05", "span_smooth": "f1_span"}  # selector -> the F1 it smooths over C
SHORTLIST = 3
SHORTLISTS = {"short_xa3": "f1_xa", "short_span3": "f1_span"}  # selector -> the estimate that shortlists for LOO
HALVINGS = 20
TOL = 1e-3


def main() -> None:
    args = _parse_args()
    if args.pool:
        _write(_pooled(args.pool), args.out or RESULTS / "selection_quality.json")
        return
    wall = time.perf_counter()
    c_values = [float(c) for c in np.geomspace(args.c_min, args.c_max, args.n_c)]
    selectors = [s for s in SELECTORS if (args.loo or s != "loo") and (args.shortlist or not s.startswith("short_"))]
    rows, halves, settings = [], [], {}
    with threadpool_limits(limits=1):
        for setting in args.setting:
            splits, categories, description = _setting(setting, args)
            settings[setting] = description | {"categories": categories}
            for seed, corpus, train, test in splits:
                data = {name: _features(spec, corpus, train, test) for name, spec in PREPROCESSINGS.items()}
                for category in categories:
                    y = corpus.y(category)
                    if min((y[train] > 0).sum(), (y[train] < 0).sum()) < 10:
                        continue  # fewer than 10 positives to train on: 10-fold CV is undefined
                    group = _grid(y[train], y[test], data, c_values, selectors)
                    for row in group:
                        row.update(setting=setting, split=seed, category=category)
                    halves.append(_half_test(group, y[test], selectors, seed))
                    rows.extend(_public(row) for row in group)
                    print(f"  {setting} split {seed} {category:<10} [{time.perf_counter() - wall:6.0f} s]", flush=True)
    result = {
        "benchmark": "selection_quality",
        "quick": args.quick,
        "default_selector": DEFAULT_ESTIMATOR,
        "settings": settings,
        "c_values": c_values,
        "preprocessings": list(PREPROCESSINGS),
        **_summary(rows, halves, selectors),
        "halves": halves,
    }
    result |= {
        "wall_seconds": round(time.perf_counter() - wall, 1),
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "rows": rows,
    }
    _write(result, args.out or RESULTS / ("selection_quality.quick.json" if args.quick else "selection_quality.json"))


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="synthetic smoke run (1 split, 3 categories, 3 C)")
    parser.add_argument("--reuters", type=Path, default=DEFAULT_REUTERS, help="Reuters-21578 directory or archive")
    parser.add_argument("--setting", nargs="+", default=["top10"], choices=("top10", "next30", "chrono", "synthetic"))
    parser.add_argument("--splits", type=int, default=5, help="random splits per setting (chrono has one)")
    parser.add_argument("--first-seed", type=int, default=15, help="seed of the first split")
    parser.add_argument("--n-c", type=int, default=9, help="number of C values")
    parser.add_argument(
        "--synthetic-docs",
        type=lambda text: int(float(text)),
        default=3000,
        help="documents of each synthetic split's corpus (e.g. 1e5)",
    )
    parser.add_argument("--synthetic-categories", type=int, default=8, help="categories of the synthetic corpus")
    parser.add_argument("--c-min", type=float, default=0.05)
    parser.add_argument("--c-max", type=float, default=50.0)
    parser.add_argument("--no-loo", dest="loo", action="store_false", help="skip exact LOO on every configuration")
    parser.add_argument(
        "--no-shortlist",
        dest="shortlist",
        action="store_false",
        help="skip the LOO shortlists too (no exact LOO at all: short_* are left out of this run)",
    )
    parser.add_argument("--out", type=Path, default=None, help="JSON path (default bench/results/...)")
    parser.add_argument(
        "--pool",
        type=Path,
        nargs="+",
        default=None,
        metavar="JSON",
        help="only summarise the rows of earlier runs (distinct settings or seeds) together",
    )
    args = parser.parse_args()
    if args.quick:
        args.setting, args.splits, args.n_c = ["synthetic"], 1, 3
    return args


def _setting(name: str, args):
    """([(seed, corpus, train, test)], categories, description) of one setting."""
    seeds = range(args.first_seed, args.first_seed + args.splits)
    if name == "synthetic":
        n_docs, k = (400, 3) if args.quick else (args.synthetic_docs, args.synthetic_categories)
        splits = []
        for seed in seeds:
            corpus = make_synthetic(n_docs=n_docs, n_categories=k, seed=seed)
            splits.append(
                (seed, corpus, np.flatnonzero(corpus.splits == "train"), np.flatnonzero(corpus.splits == "test"))
            )
        return (
            splits,
            list(corpus.choose_categories(top_k=k)),
            {"corpus": f"make_synthetic(n_docs={n_docs}, n_categories={k}, seed=split)", "splits": "its own 70/30"},
        )
    corpus = _reuters(args.reuters)
    ranked = corpus.choose_categories(top_k=40)
    if name == "chrono":
        order = np.argsort(corpus.timestamps.astype("int64"), kind="stable")
        half = order.size // 2
        return (
            [(0, corpus, np.sort(order[:half]), np.sort(order[half:]))],
            ranked[:10],
            {"corpus": corpus.name, "splits": "chronological halves (older trains)"},
        )
    splits = []
    for seed in seeds:
        order = np.random.default_rng(seed).permutation(len(corpus))
        half = order.size // 2
        splits.append((seed, corpus, np.sort(order[:half]), np.sort(order[half:])))
    categories = ranked[:10] if name == "top10" else ranked[10:40]
    return splits, categories, {"corpus": corpus.name, "splits": f"random 50/50, seeds {seeds.start}-{seeds.stop - 1}"}


_CORPUS_CACHE: dict = {}


def _reuters(path: Path):
    if path not in _CORPUS_CACHE:
        _CORPUS_CACHE[path] = load_reuters(path)
    return _CORPUS_CACHE[path]


def _features(spec: Preprocessing, corpus, train: np.ndarray, test: np.ndarray) -> dict:
    """CSR training (n, d) and test (m, d) features and R_delta^2 of one split."""
    fitted, X_train = spec.fit_transform(corpus.subset(train).texts)
    return {"X": X_train, "X_test": fitted.transform(corpus.subset(test).texts), "r_delta2": r_delta_squared(X=X_train)}


def _cpu(compute):
    start = time.process_time()
    value = compute()
    return value, time.process_time() - start


def _grid(y: np.ndarray, y_test: np.ndarray, data: dict, c_values: list[float], selectors) -> list[dict]:
    """Every configuration of one (split, category): held-out F1, estimated F1 (f1_*), CPU costs."""
    rows = []
    for prep, split in data.items():
        previous = None
        for C in c_values:
            fit, fit_cost = _cpu(
                lambda: fit_svm(
                    TrainingProblem(y, X=split["X"]), SVMParameters(C, tol=TOL), warm_start=previous, check_input=False
                )
            )
            previous = fit
            decision = fit.decision_function(split["X_test"])
            row = {
                "prep": prep,
                "C": C,
                "fit_cost": fit_cost,
                "n_sv": fit.n_sv,
                "n_bounded_sv": fit.n_bounded_sv,
                "heldout_f1": _f1_predicted(y_test, decision > 0),
                "_predicted": decision > 0,
                "_fit": fit,
                "_split": split,
            }
            xa, row["cost_xa_only"] = _cpu(lambda: xi_alpha(fit.alpha, fit.xi, y, split["r_delta2"], rho=1.0))
            xa05 = xi_alpha(fit.alpha, fit.xi, y, split["r_delta2"], rho=0.5)
            span, row["cost_span_only"] = _cpu(lambda: span_estimate(fit))
            row["f1_xa"], row["f1_xa05"], row["f1_span"] = _f1(xa), _f1(xa05), _f1(span)
            rows.append(row)
    for k in (10, 5):
        if f"cv{k}" in selectors:
            _cross_validate(rows, y, data, c_values, k)
    for row in rows:
        if "loo" in selectors:
            _loo(row, y)
    for name, key in SHORTLISTS.items():
        if name in selectors:
            for i in _shortlist(rows, key):
                _loo(rows[i], y)
    return rows


def _loo(row: dict, y: np.ndarray) -> None:
    """Exact LOO F1 and its CPU cost for one configuration (once)."""
    if "f1_loo" not in row:
        estimate, row["cost_loo_only"] = _cpu(
            lambda: loo_exact(
                TrainingProblem(y, X=row["_split"]["X"]), SVMParameters(row["C"], tol=TOL), fit=row["_fit"]
            )
        )
        row["f1_loo"], row["loo_retrains"] = _f1(estimate), estimate.retrains


def _cross_validate(rows: list[dict], y: np.ndarray, data: dict, c_values: list[float], k: int) -> None:
    """Stratified k-fold CV F1 per configuration (pooled over folds); per fold the C path is warm-started."""
    folds = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=0).split(np.zeros(y.size), y))
    for prep, split in data.items():
        predicted = {C: np.zeros(y.size, dtype=bool) for C in c_values}
        cost = dict.fromkeys(c_values, 0.0)
        for train_idx, test_idx in folds:
            weights = np.zeros(y.size)
            weights[train_idx] = 1.0
            previous = None
            for C in c_values:
                fold, seconds = _cpu(
                    lambda: fit_svm(
                        TrainingProblem(y, X=split["X"], weights=weights),
                        SVMParameters(C, tol=TOL),
                        warm_start=previous,
                        check_input=False,
                    )
                )
                previous = fold
                predicted[C][test_idx] = fold.decision_function(split["X"][test_idx]) > 0
                cost[C] += seconds
        for row in rows:
            if row["prep"] == prep:
                row[f"f1_cv{k}"] = _f1_predicted(y, predicted[row["C"]])
                row[f"cost_cv{k}"] = cost[row["C"]]


def _f1(estimate) -> float:
    value = estimate.f1
    return 0.0 if np.isnan(value) else float(value)


def _f1_predicted(y: np.ndarray, predicted: np.ndarray) -> float:
    """F1 of the positive class from predictions; 0 where undefined (nothing predicted or present)."""
    tp = int(np.sum(predicted & (y > 0)))
    denominator = int(predicted.sum()) + int((y > 0).sum())
    return 2.0 * tp / denominator if denominator else 0.0


def _choices(group: list[dict], selectors) -> dict:
    """The index of the configuration each selector picks in one (split, category) group."""
    order = range(len(group))

    def first(key: str) -> int:  # ties: first in grid order
        return max(order, key=lambda i: (group[i][key], -i))

    def smoothed(key: str) -> int:
        values = _smoothed(group, key)
        return max(order, key=lambda i: (values[i], -i))

    rules = {
        "xa": lambda: first("f1_xa"),
        "xa05": lambda: first("f1_xa05"),
        "span": lambda: first("f1_span"),
        "span_bigC": lambda: max(order, key=lambda i: (group[i]["f1_span"], group[i]["C"], -i)),
        **{name: (lambda key=key: smoothed(key)) for name, key in SMOOTHED.items()},
        **{
            name: (lambda key=key: max(_shortlist(group, key), key=lambda i: (group[i]["f1_loo"], -i)))
            for name, key in SHORTLISTS.items()
        },
    }
    return {name: rules[name]() if name in rules else first(f"f1_{name}") for name in selectors}


def _shortlist(group: list[dict], key: str) -> list[int]:
    """Indices of the SHORTLIST configurations with the largest `key` (ties: first in grid order)."""
    return sorted(range(len(group)), key=lambda i: (-group[i][key], i))[:SHORTLIST]


def _available(group: list[dict], selectors) -> list[str]:
    """The selectors whose estimates this group has (a run with --no-loo / --no-shortlist lacks some)."""
    with_loo = sum("f1_loo" in row for row in group)
    keep = []
    for name in selectors:
        if name == "loo" and with_loo < len(group) or name.startswith("short_") and with_loo < SHORTLIST:
            continue
        if (
            name.startswith("cv")
            and f"f1_{name}" not in group[0]
            or name.startswith("xa05")
            and "f1_xa05" not in group[0]
        ):
            continue
        keep.append(name)
    return keep


def _smoothed(group: list[dict], key: str) -> list[float]:
    """group[i][key] averaged over C as selections average it (`xialpha.selection.smoothing`: its
    neighbours in C within the same preprocessing, plateaus to their best average)."""
    return smoothed_over_c(
        [row["prep"] for row in group], [row["C"] for row in group], [row[key] for row in group]
    ).tolist()


def _costs(group: list[dict], selectors) -> dict:
    """CPU seconds each selector spends on one group."""
    fits = sum(r["fit_cost"] for r in group)
    xa = fits + sum(r["cost_xa_only"] for r in group)
    span = fits + sum(r["cost_span_only"] for r in group)
    costs = {"xa": xa, "xa05": xa, "xa05_smooth": xa, "span": span, "span_bigC": span, "span_smooth": span}
    for name in selectors:
        if name.startswith("cv"):
            costs[name] = sum(r[f"cost_{name}"] for r in group)
    if "loo" in selectors:
        costs["loo"] = fits + sum(r["cost_loo_only"] for r in group)
    for name, key in SHORTLISTS.items():
        if name in selectors:
            base = xa if key == "f1_xa" else span
            costs[name] = base + sum(group[i]["cost_loo_only"] for i in _shortlist(group, key))
    return {name: costs[name] for name in selectors}


def _half_test(group: list[dict], y_test: np.ndarray, selectors, seed: int) -> dict:
    """Regret on one half of the test set when the other half picks ("fresh_half"), and each selector's, in points."""
    chosen = _choices(group, _available(group, selectors))
    rng = np.random.default_rng(seed)
    regrets = {name: [] for name in ("fresh_half", *chosen)}
    for _ in range(HALVINGS):
        half = rng.permutation(y_test.size) < y_test.size // 2
        pick = [_f1_predicted(y_test[half], r["_predicted"][half]) for r in group]
        score = [_f1_predicted(y_test[~half], r["_predicted"][~half]) for r in group]
        best = max(score)
        regrets["fresh_half"].append(100.0 * (best - score[int(np.argmax(pick))]))
        for name, index in chosen.items():
            regrets[name].append(100.0 * (best - score[index]))
    return {
        "setting": group[0]["setting"],
        "split": group[0]["split"],
        "category": group[0]["category"],
        **{name: round(float(np.mean(values)), 4) for name, values in regrets.items()},
    }


def _public(row: dict) -> dict:
    return {k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items() if not k.startswith("_")}


def _summary(rows: list[dict], halves: list[dict], selectors) -> dict:
    """regret, cost_s, cost_relative_to_cv10, vs_cv10 (paired by split), per setting and pooled."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["setting"], row["split"], row["category"]), []).append(row)
    per = {}  # setting -> selector -> split -> [regret per category]
    cost = {}
    for (setting, split, _), group in groups.items():
        best = max(r["heldout_f1"] for r in group)
        here = _available(group, selectors)
        for name, index in _choices(group, here).items():
            per.setdefault(setting, {}).setdefault(name, {}).setdefault(split, []).append(
                100.0 * (best - group[index]["heldout_f1"])
            )
        for name, seconds in _costs(group, here).items():
            cost.setdefault(setting, {}).setdefault((name, split), 0.0)
            cost[setting][(name, split)] += seconds
    by_setting = {
        setting: _block(
            per[setting],
            dict(cost[setting].items()),
            [f for f in halves if f["setting"] == setting],
            selectors,
        )
        for setting in per
    }
    pooled_regrets = {
        name: {(s, split): v for s in per for split, v in per[s].get(name, {}).items()} for name in selectors
    }
    pooled_cost = {(name, (s, split)): v for s in cost for (name, split), v in cost[s].items()}
    pooled = _block(pooled_regrets, pooled_cost, halves, selectors)
    return {**pooled, "by_setting": by_setting, "rule": _rule(pooled, by_setting)}


def _rule(pooled: dict, by_setting: dict) -> dict:
    """Issue 24's pre-registered rule: per candidate whether it passes and why; the new default."""
    verdicts = {}
    for name in CANDIDATES:
        if name not in pooled["regret"] or "cv10" not in pooled["regret"]:
            continue
        pooled_ok = pooled["regret"][name] <= pooled["regret"]["cv10"]
        settings = {
            setting: block["vs_cv10"][name].get("ci95", [block["vs_cv10"][name]["mean"]] * 2)[0] <= 0
            for setting, block in by_setting.items()
            if name in block.get("vs_cv10", {})
        }
        verdicts[name] = {
            "pooled_regret": pooled["regret"][name],
            "pooled_regret_cv10": pooled["regret"]["cv10"],
            "pooled_at_most_cv10": pooled_ok,
            "no_setting_significantly_worse": settings,
            "passes": bool(pooled_ok and all(settings.values())),
        }
    default = next((name for name in CANDIDATES if verdicts.get(name, {}).get("passes")), None)
    return {"candidates": verdicts, "default": default}


def _block(regrets: dict, cost: dict, halves: list[dict], selectors) -> dict:
    """Summary of one setting (or the pool): regrets {selector: {split: [per category]}}, cost {(selector, split): s}.

    A selector missing on some splits (runs without LOO) is summarised over the splits it has;
    its cost ratio and paired difference to cv10 use cv10 on those same splits.
    """
    names = [name for name in selectors if regrets.get(name)]
    regret = {name: round(float(np.mean([np.mean(v) for v in regrets[name].values()])), 3) for name in names}
    block = {
        "regret": regret,
        "splits": {name: len(regrets[name]) for name in names},
        "cost_s": {name: round(sum(v for (n, _), v in cost.items() if n == name), 2) for name in names},
        "regret_half_test": {
            name: round(float(np.mean([f[name] for f in halves if name in f])), 3) for name in ("fresh_half", *names)
        },
    }
    if "cv10" in names:
        block["cost_relative_to_cv10"] = {
            name: round(
                sum(cost[(name, split)] for split in regrets[name])
                / sum(cost[("cv10", split)] for split in regrets[name]),
                4,
            )
            for name in names
        }
        block["vs_cv10"] = {
            name: _paired(regrets[name], {k: regrets["cv10"][k] for k in regrets[name]})
            for name in names
            if name != "cv10"
        }
    return block


def _paired(regrets: dict, reference: dict) -> dict:
    """Regret minus cv10's, paired by split: mean, 95% t-interval, wins/ties/losses over (split, category)."""
    by_split = np.array([np.mean(regrets[s]) - np.mean(reference[s]) for s in reference])
    pairs = np.concatenate([np.subtract(regrets[s], reference[s]) for s in reference])
    result = {
        "mean": round(float(by_split.mean()), 3),
        "splits": int(by_split.size),
        "wins": int(np.sum(pairs < -1e-9)),
        "ties": int(np.sum(np.abs(pairs) <= 1e-9)),
        "losses": int(np.sum(pairs > 1e-9)),
    }
    if by_split.size > 1:
        half = scipy.stats.t.ppf(0.975, by_split.size - 1) * by_split.std(ddof=1) / np.sqrt(by_split.size)
        result["ci95"] = [round(float(by_split.mean() - half), 3), round(float(by_split.mean() + half), 3)]
    return result


def _pooled(paths: list[Path]) -> dict:
    runs = [json.loads(Path(path).read_text()) for path in paths]
    rows = [row for run in runs for row in run.get("rows", [])]
    halves = [f for run in runs for f in run.get("halves", [])]
    seen = [(r["setting"], r["split"], r["category"], r["prep"], r["C"]) for r in rows]
    if len(set(seen)) != len(seen):
        raise SystemExit("--pool: the runs share (setting, split) pairs; pool distinct ones")
    selectors = list(SELECTORS)
    result = {
        "benchmark": "selection_quality",
        "quick": any(run["quick"] for run in runs),
        "default_selector": DEFAULT_ESTIMATOR,
        "pooled_from": [str(p) for p in paths],
        "settings": {k: v for run in runs for k, v in run.get("settings", {}).items()},
        **_summary(rows, halves, selectors),
        "halves": halves,
    }
    return result | {"wall_seconds": round(sum(run["wall_seconds"] for run in runs), 1), "rows": rows}


def _write(result: dict, out: Path) -> None:
    _print(result)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


def _print(result: dict) -> None:
    blocks = {"pooled": result, **result.get("by_setting", {})}
    for title, block in blocks.items():
        print(
            f"\n{title}: selector, regret (F1 points), regret on half the test set, cost / cv10, minus cv10 [95% "
            "CI], w/t/l"
        )
        print(f"  {'fresh_half':<12} {'':>7} {block['regret_half_test']['fresh_half']:>7.2f}")
        for name, regret in block["regret"].items():
            relative = block.get("cost_relative_to_cv10", {}).get(name, float("nan"))
            paired = block.get("vs_cv10", {}).get(name)
            versus = (
                "-"
                if paired is None
                else f"{paired['mean']:+.2f}"
                + (f" [{paired['ci95'][0]:+.2f}, {paired['ci95'][1]:+.2f}]" if "ci95" in paired else "")
                + f" {paired['wins']}/{paired['ties']}/{paired['losses']}"
            )
            print(f"  {name:<12} {regret:>7.2f} {block['regret_half_test'][name]:>7.2f} {relative:>8.3f}  {versus}")
    for name, verdict in result.get("rule", {}).get("candidates", {}).items():
        print(
            f"\nrule, {name}: pooled {verdict['pooled_regret']:.2f} vs cv10 {verdict['pooled_regret_cv10']:.2f} "
            f"({'ok' if verdict['pooled_at_most_cv10'] else 'no'}); not significantly worse in "
            f"{', '.join(s for s, ok in verdict['no_setting_significantly_worse'].items() if ok) or 'no setting'}: "
            f"{'passes' if verdict['passes'] else 'does not pass'}"
        )
    if "rule" in result:
        print(f"rule: default -> {result['rule']['default'] or 'unchanged (no candidate passes)'}")


if __name__ == "__main__":
    main()
