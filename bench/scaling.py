"""The Reuters sweep (config/reuters.toml) on a LocalCluster with 1 and 2 workers: wall vs compute floor.

One LocalCluster (one thread per worker process) is started first and scaled up between runs;
before each run every worker imports the task code, so no run pays for process start or imports
(cluster start and stop are reported apart). Each run writes into a fresh temporary store. Wall
is `run_sweep`'s against the running cluster, from spec to the last stored batch (corpus loading,
planning and storage included); the floor is the summed task compute seconds (Dask task stream)
divided by the worker threads; overhead = (wall x threads - compute) / compute (target <= 30 %,
issue 5). The end-to-end `xialpha sweep` wall, cluster start included, is in vs_cross_validation.

    python bench/scaling.py           # the Reuters ModApte sweep, 160 fits per run
    python bench/scaling.py --quick   # a 600-document synthetic sweep
"""

from __future__ import annotations

import tempfile
import time

from common import make_parser, output_path, print_table, sweep_spec, timed, write_results
from distributed import Client, LocalCluster

from xialpha.jobs.sweep import run_sweep
from xialpha.storage.opening import open_store

TARGET_OVERHEAD = 0.30


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2], help="worker counts, one run each")
    args = parser.parse_args()
    spec = sweep_spec(args)
    runs = {}
    started = time.perf_counter()
    cluster = LocalCluster(
        n_workers=min(args.workers), threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1"
    )
    client = Client(cluster)
    cluster_start_s = time.perf_counter() - started
    for workers in sorted(args.workers):
        cluster.scale(workers)
        client.wait_for_workers(workers)
        client.run(_import_task_code)
        with tempfile.TemporaryDirectory(prefix="xialpha-scaling-") as directory:
            summary = run_sweep(
                spec, open_store(directory, create=True, writable=True), address=cluster.scheduler_address
            )
        if summary.failed:
            raise SystemExit(f"workers={workers}: {summary.failed} configs failed, e.g. {summary.failures[0]}")
        floor = summary.task_seconds / summary.threads
        runs[str(workers)] = {
            "wall_s": summary.wall_seconds,
            "task_s": summary.task_seconds,
            "threads": summary.threads,
            "floor_s": floor,
            "wall_over_floor": summary.wall_seconds / floor,
            "overhead": summary.overhead,
            "fits": summary.fits,
            "configs": summary.ok,
        }
        print(f"{workers} worker(s): {summary.fits} fits in {summary.wall_seconds:.1f} s", flush=True)
    _, cluster_stop_s = timed(lambda: (client.close(), cluster.close()))
    result = {
        "benchmark": "scaling",
        "quick": args.quick,
        "sweep_id": spec.id,
        "runs": runs,
        "cluster_start_s": cluster_start_s,
        "cluster_stop_s": cluster_stop_s,
        "target_overhead": TARGET_OVERHEAD,
    }
    if "1" in runs and "2" in runs:
        result["speedup_2_vs_1"] = runs["1"]["wall_s"] / runs["2"]["wall_s"]
    largest = runs[str(max(args.workers))]
    result["wall_over_floor"] = largest["wall_over_floor"]
    result["overhead"] = largest["overhead"]
    print_table(
        ["workers", "fits", "wall_s", "task_s", "floor_s", "wall/floor", "overhead_%"],
        [
            [w, r["fits"], r["wall_s"], r["task_s"], r["floor_s"], r["wall_over_floor"], 100 * r["overhead"]]
            for w, r in runs.items()
        ],
        title=f"\nsweep {spec.id!r}",
    )
    if "speedup_2_vs_1" in result:
        print(f"speedup 2 vs 1 worker: {result['speedup_2_vs_1']:.2f}x")
    print(f"cluster start {cluster_start_s:.1f} s, stop {cluster_stop_s:.1f} s (not in the walls above)")
    write_results(result, output_path("scaling", args))


def _import_task_code() -> None:
    """Run on each worker: import what the sweep's tasks need."""
    import sklearn.svm  # noqa: F401

    import xialpha.jobs.tasks  # noqa: F401


if __name__ == "__main__":
    main()
