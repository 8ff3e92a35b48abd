"""Benchmark: load + preprocess Reuters-21578 ModApte, and the linear Gram of a 6,451-document half.

Targets on the 2-core reference machine: load + preprocess <= 10 s; 6,451^2 linear Gram <= 4 s.
Compares the Gram strategies: `linear_gram` (upper-triangle sparse row blocks, mirrored), full-row
sparse blocks, and one sparse product `(X @ X.T).toarray()`. Prints a table and writes
bench/results/preprocess.json (preprocess.quick.json with --quick).

    python bench/preprocess.py            # Reuters from ../shared/corpora/reuters21578
    python bench/preprocess.py --quick    # a small smoke on the synthetic corpus (no ../shared needed)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from xialpha.corpora import load_reuters, make_synthetic
from xialpha.features import Preprocessing, linear_gram

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REUTERS = REPO.parent / "shared" / "corpora" / "reuters21578"
RESULTS = REPO / "bench" / "results"
TARGETS = {"load_and_preprocess": 10.0, "gram_linear_gram": 4.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small synthetic smoke run")
    parser.add_argument("--reuters", type=Path, default=DEFAULT_REUTERS, help="Reuters-21578 directory or archive")
    parser.add_argument("--repeat", type=int, default=3, help="Gram timings: best of this many runs")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON results file (default: bench/results/preprocess.json, or preprocess.quick.json)",
    )
    args = parser.parse_args()

    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    corpus = _timed(
        "load", wall, cpu, lambda: make_synthetic(n_docs=2000, seed=0) if args.quick else load_reuters(args.reuters)
    )
    spec = Preprocessing(min_df=3)
    _, X_all = _timed("preprocess", wall, cpu, lambda: spec.fit_transform(corpus.texts))
    for table in (wall, cpu):
        table["load_and_preprocess"] = table["load"] + table["preprocess"]

    half = corpus.subset(np.random.default_rng(0).permutation(len(corpus))[: len(corpus) // 2])
    X = spec.fit(half.texts).transform(half.texts)
    strategies = {
        "gram_linear_gram": lambda: linear_gram(X),
        "gram_row_blocks": lambda: _row_blocks(X, 512),
        "gram_one_product": lambda: (X @ X.T).toarray(),
    }
    reference = None
    for name, compute in strategies.items():
        runs_wall: dict[str, float] = {}
        runs_cpu: dict[str, float] = {}
        for run in range(max(1, args.repeat)):
            G = _timed(run, runs_wall, runs_cpu, compute)
        wall[name], cpu[name] = min(runs_wall.values()), min(runs_cpu.values())
        reference = G if reference is None else reference
        if not np.allclose(G, reference, atol=1e-12):
            raise SystemExit(f"{name}: differs from linear_gram")
        del G

    result = {
        "benchmark": "preprocess",
        "quick": args.quick,
        "corpus": corpus.name,
        "n_documents": len(corpus),
        "n_features": int(X_all.shape[1]),
        "gram_shape": [int(X.shape[0]), int(X.shape[0])],
        "gram_input_nnz": int(X.nnz),
        "seconds": {name: round(value, 3) for name, value in wall.items()},
        "cpu_seconds": {name: round(value, 3) for name, value in cpu.items()},
        "targets_seconds": TARGETS,
        "machine": {
            "python": platform.python_version(),
            "processor": platform.machine(),
            "cpus": os.cpu_count(),
            "load_average_1min": round(os.getloadavg()[0], 2),
        },
    }
    _print_table(result)
    out = args.out or RESULTS / ("preprocess.quick.json" if args.quick else "preprocess.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


def _timed(key, wall: dict, cpu: dict, compute):
    """compute(), recording its wall-clock and process CPU seconds under `key`. On a busy shared
    machine the CPU seconds (single-threaded code) are the closer figure for an idle one."""
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    value = compute()
    wall[key], cpu[key] = time.perf_counter() - start_wall, time.process_time() - start_cpu
    return value


def _row_blocks(X, block_rows: int) -> np.ndarray:
    """Full-width sparse row blocks X[i:i+b] @ X.T, no symmetry (the comparison strategy)."""
    X_t = X.T.tocsr()
    out = np.empty((X.shape[0], X.shape[0]))
    for start in range(0, X.shape[0], block_rows):
        out[start : start + block_rows] = (X[start : start + block_rows] @ X_t).toarray()
    return out


def _print_table(result: dict) -> None:
    n = result["gram_shape"][0]
    print(
        f"{result['corpus']}: {result['n_documents']} documents, {result['n_features']} features; "
        f"Gram {n} x {n}; load average {result['machine']['load_average_1min']} on {result['machine']['cpus']} CPUs"
    )
    print(f"{'step':<22}{'wall s':>10}{'cpu s':>10}{'target':>10}")
    for name, seconds in result["seconds"].items():
        target = TARGETS.get(name)
        mark = "" if target is None or result["quick"] else ("  ok" if seconds <= target else "  OVER")
        print(
            f"{name:<22}{seconds:>10.3f}{result['cpu_seconds'][name]:>10.3f}"
            f"{'' if target is None else f'{target:>10.1f}'}{mark}"
        )


if __name__ == "__main__":
    main()
