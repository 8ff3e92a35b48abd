"""Benchmark: load + preprocess Reuters-21578 ModApte, and the linear Gram of a 6,451-document half.

Targets on the 2-core reference machine: load + preprocess <= 10 s; 6,451^2 linear Gram <= 4 s.
Compares the Gram strategies: `linear_gram` (upper-triangle sparse row blocks, mirrored), full-row
sparse blocks, and one sparse product `(X @ X.T).toarray()`. Prints a table and writes
bench/results/preprocess.json.

    python bench/preprocess.py            # Reuters from ../shared/corpora/reuters21578
    python bench/preprocess.py --quick    # a small smoke on the synthetic corpus (no ../shared needed)
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from xialpha.corpora import load_reuters, make_synthetic
from xialpha.features import Preprocessing, linear_gram

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REUTERS = REPO.parent / "shared" / "corpora" / "reuters21578"
RESULTS = REPO / "bench" / "results" / "preprocess.json"
TARGETS = {"load_and_preprocess": 10.0, "gram_linear_gram": 4.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small synthetic smoke run")
    parser.add_argument("--reuters", type=Path, default=DEFAULT_REUTERS, help="Reuters-21578 directory or archive")
    parser.add_argument("--repeat", type=int, default=3, help="Gram timings: best of this many runs")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON results")
    args = parser.parse_args()

    timings: dict[str, float] = {}
    start = time.perf_counter()
    corpus = make_synthetic(n_docs=2000, seed=0) if args.quick else load_reuters(args.reuters)
    timings["load"] = time.perf_counter() - start
    spec = Preprocessing(min_df=3)
    start = time.perf_counter()
    _, X_all = spec.fit_transform(corpus.texts)
    timings["preprocess"] = time.perf_counter() - start
    timings["load_and_preprocess"] = timings["load"] + timings["preprocess"]

    half = np.random.default_rng(0).permutation(len(corpus))[: len(corpus) // 2]
    X = spec.fit(corpus.subset(half).texts).transform(corpus.subset(half).texts)
    strategies = {
        "gram_linear_gram": lambda: linear_gram(X),
        "gram_row_blocks": lambda: _row_blocks(X, 512),
        "gram_one_product": lambda: (X @ X.T).toarray(),
    }
    reference = None
    for name, compute in strategies.items():
        best = np.inf
        for _ in range(max(1, args.repeat)):
            start = time.perf_counter()
            G = compute()
            best = min(best, time.perf_counter() - start)
        reference = G if reference is None else reference
        if not np.allclose(G, reference, atol=1e-12):
            raise SystemExit(f"{name}: differs from linear_gram")
        timings[name] = best
        del G

    result = {
        "benchmark": "preprocess",
        "quick": args.quick,
        "corpus": corpus.name,
        "n_documents": len(corpus),
        "n_features": int(X_all.shape[1]),
        "gram_shape": [int(X.shape[0]), int(X.shape[0])],
        "gram_input_nnz": int(X.nnz),
        "seconds": {name: round(value, 3) for name, value in timings.items()},
        "targets_seconds": TARGETS,
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
    }
    _print_table(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


def _row_blocks(X, block_rows: int) -> np.ndarray:
    """Full-width sparse row blocks X[i:i+b] @ X.T, no symmetry (the comparison strategy)."""
    X_t = X.T.tocsr()
    out = np.empty((X.shape[0], X.shape[0]))
    for start in range(0, X.shape[0], block_rows):
        out[start:start + block_rows] = (X[start:start + block_rows] @ X_t).toarray()
    return out


def _print_table(result: dict) -> None:
    n = result["gram_shape"][0]
    print(f"{result['corpus']}: {result['n_documents']} documents, {result['n_features']} features; "
          f"Gram {n} x {n}")
    print(f"{'step':<22}{'seconds':>10}{'target':>10}")
    for name, seconds in result["seconds"].items():
        target = TARGETS.get(name)
        mark = "" if target is None or result["quick"] else ("  ok" if seconds <= target else "  OVER")
        print(f"{name:<22}{seconds:>10.3f}{'' if target is None else f'{target:>10.1f}'}{mark}")


if __name__ == "__main__":
    main()
