"""Shared helpers of the bench scripts: arguments, corpora, 50/50 splits, features, tables, JSON.

Every script takes --quick (a small synthetic corpus, results in bench/results/<name>.quick.json,
which git ignores) and --out (another JSON path). Full runs read Reuters-21578 from
../shared/corpora/reuters21578 unless --reuters names another directory or archive.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
DEFAULT_REUTERS = REPO.parent / "shared" / "corpora" / "reuters21578"
REFERENCE_TABLES = REPO.parent / "shared" / "reference" / "joachims2000_tables.csv"
REUTERS_SPEC = REPO / "config" / "reuters.toml"
LOAD_AT_START = os.getloadavg()  # the 1, 5, 15-minute load averages when the script started

# The --quick sweep: config/reuters.toml's grid shape on a small synthetic corpus.
QUICK_SPEC = """\
[sweep]
id = "bench-quick"
metric = "f1"
estimator = "span"

[corpus]
loader = "synthetic"
n_docs = 400
n_categories = 3
seed = 3
train_split = "train"
test_split = "test"

[corpus.categories]
top_k = 2

[[preprocessing]]
stemming = ["none", "porter"]
min_df = 2

[[kernels]]
name = "linear"

[svm]
C = [0.3, 3.0]
j = [1.0]

[estimators]
rho = [1.0]
holdout = true

[cluster]
kind = "local"
"""


def make_parser(doc: str) -> argparse.ArgumentParser:
    """An ArgumentParser with the common --quick, --reuters and --out options."""
    parser = argparse.ArgumentParser(
        description=doc.strip().splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=doc
    )
    parser.add_argument("--quick", action="store_true", help="small synthetic smoke run (CI)")
    parser.add_argument(
        "--reuters",
        type=Path,
        default=DEFAULT_REUTERS,
        help="Reuters-21578 directory or archive (default: ../shared/corpora/reuters21578)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON results file (default: bench/results/<name>.json, or <name>.quick.json)",
    )
    return parser


def output_path(name: str, args: argparse.Namespace) -> Path:
    """--out, else bench/results/<name>.json (<name>.quick.json with --quick)."""
    return args.out or RESULTS / (f"{name}.quick.json" if args.quick else f"{name}.json")


def load_corpus(args: argparse.Namespace, quick_docs: int = 600, quick_categories: int = 4):
    """Reuters-21578 ModApte (12,902 documents), or with --quick a seeded synthetic corpus."""
    from xialpha.corpora import load_reuters, make_synthetic

    if args.quick:
        return make_synthetic(n_docs=quick_docs, n_categories=quick_categories, seed=1)
    return load_reuters(args.reuters, split="modapte")


def sweep_spec(args: argparse.Namespace):
    """The sweep of config/reuters.toml (corpus path from --reuters), or the --quick synthetic sweep."""
    from xialpha.spec.sweep import load_spec, parse_spec

    if args.quick:
        return parse_spec(QUICK_SPEC, source="bench quick spec")
    spec = load_spec(REUTERS_SPEC)
    # Benchmarks train on all of ModApte train and score held-out on its test split, as their peers
    # do; the shipped spec carves a validation split instead, to keep the test split sealed.
    spec = replace(spec, corpus=replace(spec.corpus, validation_fraction=None, test_split="test"))
    if args.reuters != DEFAULT_REUTERS:
        spec.corpus.args["path"] = str(args.reuters.resolve())
    return spec


def random_halves(n: int, n_splits: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """n_splits random 50/50 splits of range(n): (train, test) sorted index arrays, train gets n // 2 + n % 2."""
    rng = np.random.default_rng(seed)
    halves = []
    for _ in range(n_splits):
        order = rng.permutation(n)
        cut = n - n // 2
        halves.append((np.sort(order[:cut]), np.sort(order[cut:])))
    return halves


def vectorize(preprocessing, train_texts: list[str], test_texts: list[str] | None = None):
    """Fit `preprocessing` on the training texts: (X_train, X_test or None), CSR (n, d) and (m, d)."""
    fitted, X_train = preprocessing.fit_transform(train_texts)
    return X_train, None if test_texts is None else fitted.transform(test_texts)


def timed(function, *args, **kwargs):
    """(result, wall seconds) of one call."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def reference_rows(dataset: str = "reuters", path: Path = REFERENCE_TABLES) -> dict[tuple[str, float], dict]:
    """The seed's Tables 1-3 rows for `dataset`: {(category, rho): {column: float (percent)}}; {} if absent."""
    if not path.is_file():
        return {}
    with path.open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["dataset"] == dataset]
    return {
        (row["category"], float(row["rho"])): {
            k: float(v) for k, v in row.items() if k not in ("dataset", "category", "rho")
        }
        for row in rows
    }


def machine_info() -> dict:
    """Where the figures came from: cores, CPU model, memory, load (1, 5, 15 min) at start and end,
    Python and library versions, date."""
    import numpy
    import scipy
    import sklearn

    model = next(
        (line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor() or platform.machine(),
    )
    mem_kib = next((int(line.split()[1]) for line in _lines("/proc/meminfo") if line.startswith("MemTotal:")), 0)
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(mem_kib / 2**20, 1),
        "load_average_at_start": [round(value, 2) for value in LOAD_AT_START],
        "load_average_at_end": [round(value, 2) for value in os.getloadavg()],
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit_learn": sklearn.__version__,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def write_results(result: dict, path: Path) -> None:
    """Write `result` plus the machine info as indented JSON (NaN becomes null)."""
    payload = {**result, "machine": machine_info()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_plain(payload), indent=2, allow_nan=False) + "\n")
    print(f"wrote {path}")


def _plain(value):
    """JSON-ready copy: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def print_table(headers: list[str], rows: list[list], title: str | None = None) -> None:
    """A plain fixed-width table on stdout: first column left-aligned, the rest right-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(value) for value in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths))) for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    print("\n".join(([title] if title else []) + lines), flush=True)


def _cell(value) -> str:
    if isinstance(value, (float, np.floating)):
        return "nan" if not np.isfinite(value) else f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    return str(value)
