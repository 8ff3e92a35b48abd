"""Benchmark: the result store on a local directory, as a sweep uses it.

Writes a sweep's results as many small files (one per batch of finished configs), rewrites 10%
of the configs (as `--force` does), then times done_keys, a full deduplicated read, a filtered
read, compaction, and the same reads after it. Prints a table and writes bench/results/store.json.

    python bench/store.py            # 600 files x 30 rows = 18,000 configs
    python bench/store.py --quick    # 40 files x 10 rows (CI smoke)
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

from xialpha.storage.rows import config_key
from xialpha.storage.store import ResultStore

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "store.json"
CATEGORIES = [f"cat{i:02d}" for i in range(90)]


def result_row(i: int, sweep_id: str) -> dict:
    """A plausible results row for config number i."""
    return {
        "sweep_id": sweep_id,
        "run_id": "bench",
        "config_key": config_key(i=i),
        "status": "ok",
        "data_fingerprint": "fp",
        "category": CATEGORIES[i % len(CATEGORIES)],
        "preprocessing_id": f"pp{i % 4}",
        "pp_lowercase": True,
        "pp_min_df": 3.0,
        "pp_tf": "log",
        "pp_idf": "idf",
        "pp_norm": "l2",
        "kernel": "linear",
        "kernel_id": "linear",
        "C": 2.0 ** (i % 7 - 3),
        "j": 1.0 + i % 3,
        "rho": 2.0,
        "n": 9603,
        "n_pos": 1 + i % 500,
        "n_sv": 800 + i % 300,
        "n_bounded_sv": 50,
        "stable": True,
        "r_delta2": 1.0,
        "fit_seconds": 1.5,
        "estimate_seconds": 0.01,
        "xa_d_pos": i % 40,
        "xa_d_neg": i % 17,
        "xa_d": i % 40 + i % 17,
        "xa_error": 0.01,
        "xa_recall": 0.9,
        "xa_precision": 0.8,
        "xa_f1": 0.85,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON results")
    args = parser.parse_args()
    files, rows_per_file = (40, 10) if args.quick else (600, 30)
    configs = files * rows_per_file

    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as directory:
        store = ResultStore(f"{directory}/store")
        start = time.perf_counter()
        for f in range(files):
            store.datasets.write_results([result_row(f * rows_per_file + r, "bench") for r in range(rows_per_file)])
        seconds["write_files"] = time.perf_counter() - start
        start = time.perf_counter()
        for f in range(0, files, 10):
            store.datasets.write_results([result_row(f * rows_per_file + r, "bench") for r in range(rows_per_file)])
        seconds["rewrite_10pct"] = time.perf_counter() - start
        _time_reads(store, seconds, "", configs)
        start = time.perf_counter()
        before, after = store.compact()
        seconds["compact"] = time.perf_counter() - start
        _time_reads(store, seconds, "_compacted", configs)

    result = {
        "benchmark": "store",
        "quick": args.quick,
        "configs": configs,
        "files_written": before,
        "files_after_compact": after,
        "rows_per_file": rows_per_file,
        "ms_per_file_write": round(1000 * seconds["write_files"] / files, 2),
        "seconds": {name: round(value, 3) for name, value in seconds.items()},
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
    }
    _print_table(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


def _time_reads(store: ResultStore, seconds: dict, suffix: str, configs: int) -> None:
    for name, read in {
        "done_keys": lambda: store.done_keys("bench"),
        "read_results": lambda: store.datasets.read_results("bench"),
        "read_filtered": lambda: store.datasets.read_results("bench", filters=[("category", "==", "cat07")]),
    }.items():
        start = time.perf_counter()
        got = read()
        seconds[name + suffix] = time.perf_counter() - start
        if name != "read_filtered" and len(got) != configs:
            raise SystemExit(f"{name}{suffix}: {len(got)} configs, expected {configs}")


def _print_table(result: dict) -> None:
    print(
        f"{result['configs']} configs in {result['files_written']} files -> {result['files_after_compact']} "
        f"after compaction; {result['ms_per_file_write']} ms per file write"
    )
    print(f"{'step':<26}{'seconds':>10}")
    for name, value in result["seconds"].items():
        print(f"{name:<26}{value:>10.3f}")


if __name__ == "__main__":
    main()
