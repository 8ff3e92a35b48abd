"""Scale-out of a sweep: how much of it runs in parallel, what passes through the driver, and what
more workers would give.

Corpora: synthetic documents (`make_synthetic`'s model, its blocks generated one at a time) written
first to Parquet, row groups of 10,000 rows, so that loading is real I/O (cached in --cache).
Sweep: 32 categories x 2 preprocessings (min_df = 3, tf raw and log) x 8 C = 64 C paths, linear,
xi-alpha + span + holdout, on a local cluster of W worker processes (one thread each), into a
temporary store.

Per run (`runs`): wall_s end to end; work_s, the compute seconds of every task (Dask's task
stream); span_s, the critical path: the longest chain of dependent tasks, each counted with its
compute seconds (dependencies recorded by a scheduler plugin, plus the driver's waits: a task
submitted after the driver waited for others depends on them, BARRIERS); nonfit_critical_s, the part of
that chain that is not a C-path task; parallelism = work_s / span_s; first_task_s, seconds from
the sweep's start to its first task (the driver's serial work before the cluster computes
anything: with the corpus read in the driver, its loading and fingerprint); longest_fit_s;
driver_peak_rss_gb (this process: the client and the in-process scheduler) and
worker_peak_rss_gb (the largest worker process), sampled every 0.25 s; largest_message_mb, the
largest message this process's TCP comms read or wrote (so every message to or from the
scheduler and the client), and its direction and peer.

Also: speedup_2_vs_1_workers at 1e5 (wall of 1 worker / wall of 2); `projection`: Brent's bound
T_W <= work/W + span for W = 8, 32, 128 (the serial driver part added), from the largest run;
`cpath`: what splitting C paths into k warm-started segments would give the critical path.
Run under an older checkout (PYTHONPATH) the same script measures that design (--label).

    python bench/scale_out.py                          # 1e5 (1, 2 and 4 workers) and 1e6 (2 workers)
    python bench/scale_out.py --sizes 1e5 --workers 2  # choose
    python bench/scale_out.py --load-only 3e6          # read + vectorise only (no fit): the driver's memory
    python bench/scale_out.py --quick                  # 3,000 documents, 4 categories, 2 C
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from common import make_parser, output_path, print_table, write_results
from processes import SAMPLE_S, MessageMeter, ProcessTreeSampler, critical_path, dependency_recorder

SIZES = (100_000, 1_000_000)
QUICK_SIZES = (3_000,)
PROJECTED_WORKERS = (8, 32, 128)
ROW_GROUP = 10_000
TARGETS = {
    "driver_peak_rss_gb_1e6": 0.5,
    "largest_message_mb": 10.0,
    "nonfit_share_of_span_1e6": 0.10,
    "speedup_2_vs_1_workers_1e5": 1.9,
}
SPEC = """\
[sweep]
id = "scale-out-{n}"
estimator = "span"

[corpus]
loader = "table"
path = "{path}"
text_column = "text"
label_column = "labels"
id_column = "id"
split_column = "split"
train_split = "train"
test_split = "test"

[corpus.categories]
top_k = {categories}

[[preprocessing]]
min_df = 3
tf = ["raw", "log"]

[[kernels]]
name = "linear"

[svm]
C = {C}

[estimators]
rho = [1.0]
span = true
holdout = true

[cluster]
kind = "local"
"""
C_GRID = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--sizes", type=_sizes, default=None, help="corpus sizes, e.g. 1e5,1e6")
    parser.add_argument("--workers", type=_sizes, default=None, help="worker counts at the first size (default 1,2,4)")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "xialpha-bench-corpora",
        help="directory of the Parquet corpora (written once, reused)",
    )
    parser.add_argument(
        "--load-only",
        type=lambda text: int(float(text)),
        default=None,
        help="read and vectorise a corpus of this many documents on 2 workers, no fit",
    )
    parser.add_argument("--label", default="", help="a name for the code measured (e.g. 'before')")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "scale_out", "quick": args.quick, "label": args.label, "sample_s": SAMPLE_S}
    if args.load_only:
        result["load_only"] = _load_only(args.load_only, args.cache)
        _print_load(result["load_only"])
        write_results(result, output_path("scale_out_load", args))
        return
    sizes = sorted(args.sizes or (QUICK_SIZES if args.quick else SIZES))
    categories, C = (4, [0.3, 3.0]) if args.quick else (32, C_GRID)
    first_workers = args.workers or ([1, 2] if args.quick else [1, 2, 4])
    runs = []
    for n in sizes:
        path = corpus_file(n, 32 if not args.quick else 4, args.cache)
        spec_text = SPEC.format(n=n, path=path, categories=categories, C=C)
        for workers in first_workers if n == sizes[0] else [2]:
            runs.append(measure(spec_text, n, workers))
    result["runs"] = runs
    result["speedup_2_vs_1_workers"] = _speedup(runs, sizes[0])
    result["speedup_decomposition"] = speedup_decomposition(runs, sizes[0])
    result["machine_two_at_once"] = two_at_once()
    largest = max((run for run in runs if run["workers"] == 2), key=lambda run: run["n_docs"])
    result["projection"] = projection(largest)
    result["cpath"] = cpath_split(largest)
    result["targets"] = TARGETS
    _print(result)
    write_results(result, output_path("scale_out" + (f"_{args.label}" if args.label else ""), args))


def _sizes(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part.strip()]


def corpus_file(n: int, n_categories: int, cache: Path) -> Path:
    """The synthetic corpus of `n` documents (seed 0) as Parquet: id, text, labels (list), split
    (written once: an older checkout measured with this script reads the same file)."""
    path = cache / f"synthetic-{n}x{n_categories}-seed0.parquet"
    if path.exists():
        return path
    import pyarrow as pa
    import pyarrow.parquet as pq

    from xialpha.corpora.parted import plan_parts
    from xialpha.corpora.synthetic import read_synthetic_part

    print(f"writing {path} ...", flush=True)
    partial = path.with_suffix(".partial")
    writer = None
    for part in plan_parts("synthetic", {"n_docs": n, "n_categories": n_categories, "seed": 0}):
        corpus = read_synthetic_part(part).corpus
        table = pa.table(
            {
                "id": corpus.ids.tolist(),
                "text": corpus.texts,
                "labels": [sorted(labels) for labels in corpus.labels],
                "split": corpus.splits.tolist(),
            }
        )
        writer = writer or pq.ParquetWriter(partial, table.schema)
        writer.write_table(table, row_group_size=ROW_GROUP)
    writer.close()
    partial.rename(path)
    return path


def measure(spec_text: str, n: int, workers: int, store: str | None = None) -> dict:
    """One end-to-end sweep on `workers` local workers: wall, work, critical path, memory, messages
    (into the store directory `store`, kept; default a temporary one)."""
    from distributed import get_task_stream

    from xialpha.jobs.cluster import connect
    from xialpha.jobs.sweep import run_sweep
    from xialpha.spec.sweep import parse_spec
    from xialpha.storage.opening import open_store

    print(f"n_docs={n:,}, {workers} worker(s) ...", flush=True)
    spec = parse_spec(spec_text, source=f"scale-out spec n={n}")
    row = {"n_docs": n, "workers": workers, "oversubscribed": workers > (os.cpu_count() or 1)}
    with (
        tempfile.TemporaryDirectory(prefix="xialpha-scale-out-") as scratch,
        ProcessTreeSampler() as tree,
        MessageMeter() as meter,
    ):
        directory = store or scratch
        with connect(spec.cluster, workers=workers) as client:
            recorder = dependency_recorder(client.cluster.scheduler)
            start, start_clock = time.perf_counter(), time.time()
            with get_task_stream(client) as stream:
                summary = run_sweep(spec, open_store(directory, create=True, writable=True), client=client)
            row["wall_s"] = time.perf_counter() - start
            tasks = stream.data
    row.update(_graph_figures(tasks, recorder.dependencies, start_clock))
    row.update(
        {
            "fits": summary.fits,
            "ok": summary.ok,
            "failed": summary.failed,
            "processes": tree.figures()["processes"],
            "driver_peak_rss_gb": tree.figures()["peak_rss_driver_gb"],
            "worker_peak_rss_gb": tree.figures()["peak_rss_worker_gb"],
            "cpu_s": tree.figures()["cpu_s"],
            **meter.figures(),
        }
    )
    print(
        f"  wall {row['wall_s']:.1f} s, work {row['work_s']:.1f} s, span {row['span_s']:.1f} s "
        f"(non-fit {row['nonfit_critical_s']:.1f} s), driver {row['driver_peak_rss_gb']:.2f} GB, "
        f"largest message {row['largest_message_mb']:.2f} MB",
        flush=True,
    )
    return row


# Where the driver waits for results before it submits more (xialpha.jobs.data: it reads the parts'
# list, then their censuses, then the summaries and fingerprint before it plans the fits): a task
# of the kind on the left was submitted only once every task of the kinds on the right had finished,
# so they count as its dependencies in the critical path.
BARRIERS = {
    "refine": ("plan",),
    "read": ("plan", "refine"),
    "part": ("census",),
    "count": ("summary", "fingerprint"),
    "block": ("summary", "fingerprint"),
}


def _graph_figures(tasks: list[dict], dependencies: dict[str, list[str]], start_clock: float) -> dict:
    dependencies = _with_barriers(dependencies)
    durations, starts, by_kind, counts = {}, [], {}, {}
    for task in tasks:
        key = str(task["key"])
        compute = [part for part in task["startstops"] if part["action"] == "compute"]
        if not compute:
            continue
        durations[key] = sum(part["stop"] - part["start"] for part in compute)  # a recomputed task counts again
        starts.append(min(part["start"] for part in compute))
        kind = _kind(key)
        by_kind[kind] = by_kind.get(kind, 0.0) + durations[key]
        counts[kind] = counts.get(kind, 0) + 1
    span, path = critical_path(durations, dependencies)
    work = sum(durations.values())
    fits = [seconds for key, seconds in durations.items() if _kind(key) == "fit"]
    nonfit = sum(durations.get(key, 0.0) for key in path if _kind(key) != "fit")
    return {
        "work_s": work,
        "span_s": span,
        "nonfit_critical_s": nonfit,
        "parallelism": work / span if span else None,
        "nonfit_share_of_span": nonfit / span if span else None,
        "longest_fit_s": max(fits, default=0.0),
        "first_task_s": min(starts) - start_clock if starts else None,
        "critical_path": [_kind(key) for key in path],
        "work_by_kind_s": by_kind,
        "tasks": len(durations),
        "tasks_by_kind": counts,
    }


def _with_barriers(dependencies: dict[str, list[str]]) -> dict[str, list[str]]:
    """The recorded dependencies plus the driver's waits (BARRIERS)."""
    by_kind: dict[str, list[str]] = {}
    for key in dependencies:
        by_kind.setdefault(_kind(key), []).append(key)
    return {
        key: deps + [other for kind in BARRIERS.get(_kind(key), ()) for other in by_kind.get(kind, [])]
        for key, deps in dependencies.items()
    }


def _kind(key: str) -> str:
    """A task key's kind: its first word ("fit" for fit-batch-3-<run>, "read", "count", ...)."""
    return key.strip("('\"").split("-")[0]


def _speedup(runs: list[dict], n: int) -> float | None:
    walls = {run["workers"]: run["wall_s"] for run in runs if run["n_docs"] == n}
    return walls[1] / walls[2] if 1 in walls and 2 in walls else None


def speedup_decomposition(runs: list[dict], n: int) -> dict | None:
    """Why 2 workers are not 2x 1 worker: speedup = 2 x (work_1 / work_2) x schedule efficiency, where
    work_1 / work_2 is how much slower each task runs when two run at once (the machine) and the
    schedule efficiency (work_2 / 2) / wall_2 how well the 2 workers were kept busy (the scheduler)."""
    by_workers = {run["workers"]: run for run in runs if run["n_docs"] == n}
    if 1 not in by_workers or 2 not in by_workers:
        return None
    one, two = by_workers[1], by_workers[2]
    return {
        "task_slowdown_two_at_once": two["work_s"] / one["work_s"],
        "schedule_efficiency_2": two["work_s"] / 2 / two["wall_s"],
        "ceiling_from_task_slowdown": 2 * one["work_s"] / two["work_s"],
    }


def _sparse_products() -> float:
    """Seconds for a fixed amount of sparse matrix-vector products (memory-bound, like the solver's
    inner loop) on a 200,000 x 50,000 matrix of 4 million nonzeros."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    indptr = np.arange(0, 4_000_001, 20)
    X = sp.csr_matrix((rng.random(4_000_000), rng.integers(0, 50_000, 4_000_000), indptr), shape=(200_000, 50_000))
    v = np.ones(50_000)
    start = time.perf_counter()
    for _ in range(300):
        v = X.T @ (X @ v) / 4e6
    return time.perf_counter() - start


def two_at_once() -> dict:
    """The machine's own limit on 2 workers: the same single-threaded sparse products run alone,
    then in two processes at once; `ratio` = seconds at once / seconds alone (1.0 = two real cores)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as pool:
        alone = pool.submit(_sparse_products).result()
        together = [future.result() for future in [pool.submit(_sparse_products) for _ in range(2)]]
    return {"alone_s": alone, "together_s": together, "ratio": max(together) / alone}


def projection(run: dict) -> dict:
    """Brent's bound work/W + span for more workers, plus the driver's serial part (its first task's
    start: what no worker can take over)."""
    serial = run["first_task_s"] or 0.0
    return {str(w): serial + run["work_s"] / w + run["span_s"] for w in PROJECTED_WORKERS} | {"serial_s": serial}


def cpath_split(run: dict) -> dict:
    """The critical path if each C path were split into k warm-started segments (the fits of the
    longest path divided by k; an optimistic bound, warm starts from the previous segment's end)."""
    other = run["span_s"] - run["longest_fit_s"]
    return {
        "longest_fit_share_of_span": run["longest_fit_s"] / run["span_s"] if run["span_s"] else None,
        **{f"span_if_split_{k}_s": other + run["longest_fit_s"] / k for k in (2, 4, 8)},
    }


def _load_only(n: int, cache: Path) -> dict:
    """Read and vectorise (one preprocessing) a corpus of `n` documents on 2 local workers, no fit."""
    from distributed import wait

    from xialpha.jobs.cluster import connect
    from xialpha.jobs.data import load_on_cluster, submit_features
    from xialpha.spec.sweep import parse_spec

    path = corpus_file(n, 32, cache)
    spec = parse_spec(SPEC.format(n=n, path=path, categories=32, C=[1.0]), source="load-only spec")
    print(f"reading and vectorising {n:,} documents on 2 workers ...", flush=True)
    with ProcessTreeSampler() as tree, MessageMeter() as meter:
        with connect(spec.cluster, workers=2) as client:
            start = time.perf_counter()
            corpus = load_on_cluster(client, spec.corpus, "load-only")
            loaded = time.perf_counter() - start
            categories = list(corpus.summary.counts("train"))[:32]
            features = submit_features(client, corpus, spec.preprocessings[0], "train", "test", categories, "load-only")
            wait(features.blocks)
            nnz = sum(
                client.gather(
                    [
                        client.submit(lambda block: block.X_train.nnz + block.X_test.nnz, block)
                        for block in features.blocks
                    ]
                )
            )
            wall = time.perf_counter() - start
    figures = tree.figures()
    return {
        "n_docs": n,
        "workers": 2,
        "parts": len(corpus.parts),
        "load_s": loaded,
        "wall_s": wall,
        "nnz": nnz,
        "driver_peak_rss_gb": figures["peak_rss_driver_gb"],
        "worker_peak_rss_gb": figures["peak_rss_worker_gb"],
        "peak_rss_gb": figures["peak_rss_gb"],
        **meter.figures(),
    }


def _print(result: dict) -> None:
    rows = [
        [
            f"{r['n_docs']:,}",
            r["workers"],
            r["wall_s"],
            r["work_s"],
            r["span_s"],
            r["nonfit_critical_s"],
            r["parallelism"],
            r["first_task_s"],
            r["driver_peak_rss_gb"],
            r["worker_peak_rss_gb"],
            r["largest_message_mb"],
        ]
        for r in result["runs"]
    ]
    print_table(
        [
            "n_docs",
            "workers",
            "wall_s",
            "work_s",
            "span_s",
            "nonfit_crit_s",
            "parallelism",
            "first_task_s",
            "driver_gb",
            "worker_gb",
            "max_msg_mb",
        ],
        rows,
        title="\nscale-out: 64 C paths, xi-alpha + span + holdout",
    )
    print(
        f"machine: one process's sparse products take {result['machine_two_at_once']['ratio']:.2f}x as long "
        "when two run at once"
    )
    print(
        f"2 vs 1 workers: {result['speedup_2_vs_1_workers'] or float('nan'):.2f}x; projection "
        + ", ".join(f"{w} workers {result['projection'][str(w)]:.0f} s" for w in PROJECTED_WORKERS)
    )


def _print_load(load: dict) -> None:
    print(
        f"{load['n_docs']:,} documents in {load['parts']} parts read in {load['load_s']:.1f} s, vectorised by "
        f"{load['wall_s']:.1f} s; driver {load['driver_peak_rss_gb']:.2f} GB, largest worker "
        f"{load['worker_peak_rss_gb']:.2f} GB, largest message {load['largest_message_mb']:.2f} MB"
    )


if __name__ == "__main__":
    sys.exit(main())
