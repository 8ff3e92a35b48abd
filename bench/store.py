"""Benchmark: the result store on a local directory, as a sweep uses it, and at scale.

Writes a sweep's results as many small files (one per batch of finished configs), rewrites 10%
of the configs (as `--force` does), then times done_keys, a full deduplicated read, a filtered
read, compaction, and the same reads after it. Prints a table and writes bench/results/store.json.

With --scale SIZES (issues 41.8, 42.1, 44.1), per size a store of that many configurations is
written as 1,000 batch files (the layout of a sweep that has not ended), and measured:

- what validating the sweep's summary costs, three ways, on the batch layout and on the layout a
  sweep leaves when it ends (`finish_sweep`: one compacted file): the listing alone (names,
  sizes, modification times), the stamps xialpha records (size, rows, SHA-256 of every byte, and
  the footer's statistics: `xialpha.storage.files.stamp`), and a SHA-256 of every byte alone;
  `ResultStore.sweeps()` answered from the summary, and from the rows;
- what a read of one version costs (`Datasets._snapshot`): the full read of the results, and
  the one listing it adds;
- `xialpha store compact` of the batch layout in a subprocess: wall time and peak RSS (psutil),
  with --before CHECKOUT also of that code on a copy of the same store;
- a reader (read_results, sweeps) looping beside a process that rewrites rows and ends the sweep
  (compaction, summary) over and over: answers that differ from alone, warnings, and how many
  reads were tried again.

    python bench/store.py            # 600 files x 30 rows = 18,000 configs
    python bench/store.py --quick    # 40 files x 10 rows, and --scale 200 (CI smoke)
    python bench/store.py --scale 100000,1000000 --before /tmp/main-checkout   # bench/results/store.json

With --ls STORE (issue 44's speed condition) only `xialpha store ls STORE` is timed, start-up
included, with this checkout and with --before CHECKOUT alternately, --ls-repeats times each, on
the same store (made first when STORE does not exist: --ls-configs configurations in 1,000 batch
files, then ended as a sweep ends, compacted with its summary); bench/results/store_ls.json:

    python bench/store.py --ls /tmp/store-1e5 --before /tmp/main-checkout --ls-repeats 5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
from many_configs import run_command

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's xialpha, as the commands it times get

from xialpha.storage import datasets as datasets_module  # noqa: E402
from xialpha.storage.contract import StoreQueries  # noqa: E402
from xialpha.storage.files import stamp  # noqa: E402
from xialpha.storage.opening import open_store  # noqa: E402
from xialpha.storage.rows import config_key  # noqa: E402

RESULTS = REPO / "bench" / "results" / "store.json"
CATEGORIES = [f"cat{i:02d}" for i in range(90)]
SCALE_FILES = 1000  # batch files of a store at scale (of at least 10 rows each)


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
    parser.add_argument("--scale", default=None, help="comma-separated store sizes to measure at scale")
    parser.add_argument("--before", type=Path, default=None, help="a checkout of the code before, for compaction")
    parser.add_argument("--race-seconds", type=float, default=60.0, help="how long the reader loops beside compactions")
    parser.add_argument("--ls", type=Path, default=None, help="only time `store ls` of this store (made if absent)")
    parser.add_argument("--ls-configs", type=int, default=100_000, help="configurations of the --ls store when made")
    parser.add_argument("--ls-repeats", type=int, default=5, help="runs of `store ls` per checkout, alternating")
    args = parser.parse_args()
    if args.ls:
        ls_only(args.ls, args.ls_configs, args.before, args.ls_repeats, RESULTS.with_name("store_ls.json"))
        return
    files, rows_per_file = (40, 10) if args.quick else (600, 30)
    configs = files * rows_per_file

    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as directory:
        store = open_store(f"{directory}/store", create=True, writable=True)
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
        "load_average_at_start": os.getloadavg(),
    }
    _print_table(result)
    sizes = [200] if args.quick and not args.scale else [int(n) for n in (args.scale or "").split(",") if n]
    if sizes:
        race, repeats = (5.0, 1) if args.quick else (args.race_seconds, 3)
        result["scale"] = {str(n): scale(n, args.before, race, repeats) for n in sizes}
        result["load_average_now"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


def _time_reads(store: StoreQueries, seconds: dict, suffix: str, configs: int) -> None:
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


def scale_table(configs: int, first: int, sweep_id: str = "scale") -> pa.Table:
    """Result rows of configurations first .. first + configs - 1, as columns (no Python per row),
    about as incompressible as a real sweep's: digests for config keys, measured times and
    estimates as random floats, 40 configurations per category."""
    i = np.arange(first, first + configs)
    rng = np.random.default_rng(first)
    n = len(i)
    text = lambda values: pa.array(values.astype(str))  # noqa: E731
    uniform = lambda: pa.array(rng.random(n))  # noqa: E731
    return pa.table(
        {
            "sweep_id": pa.array([sweep_id] * n),
            "run_id": pa.array(["bench"] * n),
            "config_key": pa.array(_digests(rng, n)),
            "status": pa.array(["ok"] * n),
            "data_fingerprint": pa.array(["fp"] * n),
            "category": text(np.char.add("cat", (i // 40).astype(str))),
            "preprocessing_id": text(np.char.add("pp", (i % 2).astype(str))),
            "kernel": pa.array(["linear"] * n),
            "kernel_id": pa.array(["linear"] * n),
            "C": pa.array(2.0 ** (i % 20 // 2 - 5)),
            "j": pa.array(np.ones(n)),
            "rho": pa.array(np.ones(n)),
            "n": pa.array(np.full(n, 9603)),
            "n_pos": pa.array(rng.integers(1, 500, n)),
            "n_sv": pa.array(rng.integers(100, 3000, n)),
            "n_bounded_sv": pa.array(rng.integers(0, 100, n)),
            "r_delta2": uniform(),
            "fit_seconds": uniform(),
            "estimate_seconds": uniform(),
            **{
                f"{p}_{name}": values
                for p in ("xa", "span")
                for name, values in (
                    ("d_pos", pa.array(rng.integers(0, 40, n))),
                    ("d_neg", pa.array(rng.integers(0, 40, n))),
                    ("error", uniform()),
                    ("recall", uniform()),
                    ("precision", uniform()),
                    ("f1", uniform()),
                )
            },
        }
    )


def _digests(rng: np.random.Generator, n: int) -> list[str]:
    """`n` random 32-hex-digit keys, as `config_key` digests look."""
    raw = rng.bytes(16 * n)
    return [raw[16 * k : 16 * k + 16].hex() for k in range(n)]


def write_scale_store(uri: str, configs: int) -> None:
    store = open_store(uri, create=True, writable=True)
    per_file = max(configs // SCALE_FILES, 10)
    for first in range(0, configs, per_file):
        store.datasets.write_results(scale_table(min(per_file, configs - first), first))


def _best_of(function, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _validation_costs(store: StoreQueries) -> dict:
    """Seconds to tell the sweep's files unchanged: listing only, stamps, every byte hashed alone."""
    location = store.datasets.location
    partition = location.path("results", "sweep_id=scale")

    def every_byte() -> None:
        for file in location.data_files(partition):
            digest = hashlib.sha256()
            with open(file.path, "rb") as stream:
                while chunk := stream.read(1 << 20):
                    digest.update(chunk)

    files = location.data_files(partition)
    return {
        "files": len(files),
        "bytes": sum(file.size or 0 for file in files),
        "listing_s": round(_best_of(lambda: location.data_files(partition)), 4),
        "stamps_s": round(_best_of(lambda: [stamp(location, f) for f in location.data_files(partition)]), 4),
        "sha256_every_byte_s": round(_best_of(every_byte), 4),
        "sweeps_from_summary_s": round(_best_of(lambda: open_store(store.uri, create=True, writable=True).sweeps()), 4),
        "sweeps_from_rows_s": round(
            _best_of(lambda: open_store(store.uri, create=True, writable=True)._summarise("scale"), 1), 4
        ),
    }


def _snapshot_costs(store: StoreQueries) -> dict:
    location = store.datasets.location
    partition = location.path("results", "sweep_id=scale")
    read = _best_of(lambda: open_store(store.uri, create=True, writable=True).datasets.read_results("scale"), 2)
    listing = _best_of(lambda: location.data_files(partition))
    return {"read_results_s": round(read, 4), "added_listing_s": round(listing, 4), "added_share": listing / read}


def _compact_in_process(code: Path, uri: str) -> dict:
    """`xialpha store compact --dataset results` with `code`: wall seconds and peak RSS (GB)."""
    wall, peak, _ = run_command(
        ["store", "compact", uri, "--dataset", "results"], {**os.environ, "PYTHONPATH": str(code)}
    )
    return {"wall_s": round(wall, 2), "peak_rss_gb": round(peak, 3), "load_1min": os.getloadavg()[0]}


def _store_ls(code: Path, uri: str, repeats: int) -> dict:
    """`xialpha store ls` with `code` (its start-up included), the best of `repeats`: wall seconds, peak RSS (GB)."""
    runs = [run_command(["store", "ls", uri], {**os.environ, "PYTHONPATH": str(code)})[:2] for _ in range(repeats)]
    wall, peak = min(runs)
    return {"wall_s": round(wall, 3), "peak_rss_gb": round(peak, 3), "load_1min": os.getloadavg()[0]}


def ls_only(store: Path, configs: int, before: Path | None, repeats: int, out: Path) -> None:
    """`xialpha store ls` of `store` with this checkout and `before`, alternating: every wall time,
    the median and best of each, and the ratio of the medians (after / before)."""
    if not store.exists():
        write_scale_store(str(store), configs)
        open_store(str(store), create=True, writable=True).finish_sweep("scale")
    codes = {"after": REPO, **({"before": before} if before else {})}
    walls: dict[str, list[float]] = {name: [] for name in codes}
    loads = [os.getloadavg()[0]]
    for _ in range(repeats):
        for name, code in codes.items():
            walls[name].append(run_command(["store", "ls", str(store)], {**os.environ, "PYTHONPATH": str(code)})[0])
        loads.append(os.getloadavg()[0])
    figures: dict = {
        name: {"wall_s": [round(w, 3) for w in times], "median_s": round(sorted(times)[len(times) // 2], 3)}
        for name, times in walls.items()
    }
    for name, times in walls.items():
        figures[name]["best_s"] = round(min(times), 3)
    if before:
        figures["ratio_median_after_before"] = round(figures["after"]["median_s"] / figures["before"]["median_s"], 3)
    result = {"benchmark": "store_ls", "store": str(store), "repeats": repeats, "load_1min": loads, **figures}
    print(json.dumps(result, indent=1))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


CHURN = """
import os, sys
from xialpha.storage.opening import open_store

store = open_store(sys.argv[1], create=True, writable=True)
ends = 0
while not os.path.exists(sys.argv[2]):
    store.datasets.write_results(store.datasets.read_results("scale", include_failed=True).slice(0, 3))
    store.finish_sweep("scale")
    ends += 1
print(ends)
"""


def _race(uri: str, seconds: float) -> dict:
    """A reader looping beside a process that rewrites 3 rows as they are and ends the sweep again
    and again: the answers against alone, warnings, reads tried again."""

    def answers() -> tuple:
        store = open_store(uri, create=True, writable=True)
        return store.datasets.read_results("scale").num_rows, store.sweeps().to_dict("list")

    alone = answers()
    tries, sleep = [0], time.sleep

    def counted(wait: float) -> None:  # the snapshot read waits once before each try again
        tries[0] += 1
        sleep(wait)

    datasets_module.time.sleep = counted  # type: ignore[attr-defined]
    stop = Path(tempfile.mkdtemp()) / "stop"
    churn = subprocess.Popen(
        [sys.executable, "-c", CHURN, uri, str(stop)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    reads, differing, warned = 0, 0, []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                differing += answers() != alone
            warned += [str(w.message)[:200] for w in caught]
            reads += 1
    finally:
        stop.touch()
        ends = int((churn.communicate(timeout=600)[0] or "0").strip() or 0)
        datasets_module.time.sleep = sleep  # type: ignore[attr-defined]
    return {
        "reads": reads,
        "sweep_ends_beside": ends,
        "differing": differing,
        "warnings": warned[:5],
        "tries_again": tries[0],
    }


def scale(configs: int, before: Path | None, race_seconds: float, repeats: int) -> dict:
    """Every at-scale figure of one store size (see the module)."""
    with tempfile.TemporaryDirectory() as directory:
        uri = f"{directory}/store"
        start = time.perf_counter()
        write_scale_store(uri, configs)
        figures: dict = {"write_s": round(time.perf_counter() - start, 1)}
        copies = {"after": f"{directory}/after", **({"before": f"{directory}/before"} if before else {})}
        for target in copies.values():
            shutil.copytree(uri, target)
        store = open_store(uri, create=True, writable=True)
        store.datasets.write_sweep_summary("scale")  # a summary of the batch layout (as `store compact` leaves one)
        figures["batches"] = {**_validation_costs(store), **_snapshot_costs(store)}
        figures["compact"] = {
            name: _compact_in_process(REPO if name == "after" else before, target) for name, target in copies.items()
        }  # type: ignore[arg-type]
        compacted = open_store(copies["after"], create=True, writable=True)
        compacted.finish_sweep("scale")
        figures["compacted"] = {**_validation_costs(compacted), **_snapshot_costs(compacted)}
        figures["store_ls"] = {  # each code on the store its own `store compact` left (its own summary)
            name: _store_ls(REPO if name == "after" else before, target, repeats)  # type: ignore[arg-type]
            for name, target in copies.items()
        }
        figures["race"] = _race(copies["after"], race_seconds)
    print(json.dumps({str(configs): figures}, indent=1), flush=True)
    return figures


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
