"""Linear sweeps on synthetic corpora of 10^4, 10^5 and 10^6 documents: wall, CPU and peak memory.

Each size is one real sweep: `make_synthetic(n_docs=n, n_categories=4, seed=0)` (70 % train, 30 %
test), 4 categories x 8 C (config/reuters.toml's grid) x 1 preprocessing (unit-norm TF-IDF,
min_df = 3), linear kernel, xi-alpha + span + holdout, on a LocalCluster of 2 workers (one thread
each) started by `xialpha.jobs.cluster.connect` exactly as `run_sweep` starts it, into a temporary
store. wall_s is end to end: cluster start, corpus generation (on the workers, a block of 10,000
documents per task, as `run_sweep` reads it), features, the 4 C-path tasks, storage, cluster stop.
cpu_s and peak_rss_gb cover ALL processes (the driver, which also hosts a LocalCluster's scheduler
and nannies, and every worker process): a background thread samples the process tree with psutil
every SAMPLE_S seconds; peak_rss_gb is the largest sum of resident
set sizes (pages shared between processes count once per process: pessimistic), cpu_s the sum of
every process's last-seen user + system seconds. `stages` breaks the wall down from the Dask task
stream (compute and transfer seconds, result size per task kind: the key's first word, e.g. read, count,
block, features, fit) and from the driver (cluster start; start of the first task).

At --compare-size (default 10^5) the same sweep also runs on 1 worker (speedup_2_vs_1_workers_1e5,
target >= 1.8) and GridSearchCV(LinearSVC(loss="hinge"), C grid, cv=10, scoring="f1", n_jobs=2,
refit=False) per category runs end to end on the same corpus and features (corpus generation,
`xialpha.jobs.tasks.vectorize`, searches; its process tree sampled the same way): gscv_wall_s_1e5
and speedup_1e5 = its wall / the 2-worker sweep's; the same with cv=5:
gscv_cv5_wall_s_1e5 and speedup_cv5_1e5. loglog_slope: least-squares slope of log wall vs
log n over the 2-worker runs. Targets (issue 14): 10^6 in <= 900 s with peak RSS <= 8 GB.

    python bench/scale.py                      # 1e4, 1e5, 1e6 (the last takes several minutes)
    python bench/scale.py --sizes 1e4,1e5      # choose the sizes
    python bench/scale.py --quick              # 300 and 1,500 documents, 3 folds
"""

from __future__ import annotations

import tempfile
import time
import warnings

import numpy as np
from common import make_parser, output_path, print_table, timed, write_results
from distributed import get_task_stream
from joblib.externals.loky import get_reusable_executor
from processes import SAMPLE_S, ProcessTreeSampler
from sklearn.model_selection import GridSearchCV
from sklearn.svm import LinearSVC

from xialpha.jobs.cluster import connect
from xialpha.jobs.sweep import run_sweep
from xialpha.jobs.tasks import vectorize
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store

SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (300, 1_500)
WORKERS = 2
CV5_FOLDS = 5  # the peer users run when 10 folds cost too much
LOAD_TASKS = ("plan", "refine", "read", "census", "part", "summary", "digests", "fingerprint")  # key prefixes
VECTORISE_TASKS = ("count", "frequencies", "merge", "vocabulary", "block", "features")
TARGET_WALL_1E6_S, TARGET_RSS_1E6_GB, TARGET_SPEEDUP_WORKERS = 900.0, 8.0, 1.8
SPEC = """\
[sweep]
id = "scale-{n}"
metric = "f1"
estimator = "span"

[corpus]
loader = "synthetic"
n_docs = {n}
n_categories = 4
seed = 0
train_split = "train"
test_split = "test"

[corpus.categories]
top_k = 4

[[preprocessing]]
min_df = 3

[[kernels]]
name = "linear"

[svm]
C = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]
j = [1.0]

[estimators]
rho = [1.0]
span = true
holdout = true

[cluster]
kind = "local"
"""


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=None,
        help="comma-separated corpus sizes, e.g. 1e4,1e5 (default 1e4,1e5,1e6; --quick 300,1500)",
    )
    parser.add_argument(
        "--compare-size",
        type=lambda text: int(float(text)),
        default=None,
        help="size of the 1-worker run and the GridSearchCV peer (default 1e5; --quick the largest)",
    )
    args = parser.parse_args()
    sizes = sorted(args.sizes or (QUICK_SIZES if args.quick else SIZES))
    compare = args.compare_size or (max(sizes) if args.quick else 100_000)
    folds = 3 if args.quick else 10
    runs, result = (
        [],
        {
            "benchmark": "scale",
            "quick": args.quick,
            "sizes": sizes,
            "compare_n_docs": compare,
            "workers": WORKERS,
            "sample_s": SAMPLE_S,
        },
    )
    for n in sizes:
        spec = parse_spec(SPEC.format(n=n), source=f"bench scale spec n={n}")
        runs.append(_sweep(spec, n, WORKERS))
        if n == compare:
            one = _sweep(spec, n, 1)
            runs.append(one)
            result["speedup_2_vs_1_workers_1e5"] = one["wall_s"] / runs[-2]["wall_s"] if "error" not in one else None
            sweep_wall = runs[-2]["wall_s"]
            peer = _gscv(spec, folds)
            peer_cv5 = _gscv(spec, CV5_FOLDS)
            result.update(
                {
                    "gscv": peer,
                    "gscv_wall_s_1e5": peer["wall_s"],
                    "speedup_1e5": peer["wall_s"] / sweep_wall,
                    "gscv_cv5": peer_cv5,
                    "gscv_cv5_wall_s_1e5": peer_cv5["wall_s"],
                    "speedup_cv5_1e5": peer_cv5["wall_s"] / sweep_wall,
                }
            )
    two = [r for r in runs if r["workers"] == WORKERS and "error" not in r]
    result["runs"] = runs
    result["loglog_slope"] = (
        float(np.polyfit(np.log([r["n_docs"] for r in two]), np.log([r["wall_s"] for r in two]), 1)[0])
        if len({r["n_docs"] for r in two}) >= 2
        else None
    )
    result["targets"] = {
        "wall_1e6_s": TARGET_WALL_1E6_S,
        "peak_rss_1e6_gb": TARGET_RSS_1E6_GB,
        "speedup_2_vs_1_workers": TARGET_SPEEDUP_WORKERS,
    }
    _print(result)
    write_results(result, output_path("scale", args))


def _sizes(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part.strip()]


def _sweep(spec, n: int, workers: int) -> dict:
    """One end-to-end sweep on `workers` local workers: wall, CPU and memory of all processes, stages."""
    print(f"n_docs={n:,}, {workers} worker(s): sweep ...", flush=True)
    row = {"n_docs": n, "workers": workers}
    with tempfile.TemporaryDirectory(prefix="xialpha-scale-") as directory, ProcessTreeSampler() as tree:
        start, start_clock = time.perf_counter(), time.time()
        try:
            with connect(spec.cluster, workers=workers) as client:
                cluster_start_s = time.perf_counter() - start
                with get_task_stream(client) as stream:
                    summary = run_sweep(
                        spec, open_store(directory, create=True, writable=True), address=client.scheduler.address
                    )
                tasks = stream.data
        except Exception as exc:  # e.g. a worker killed for memory: record it, go on with the other sizes
            row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
            tasks, summary = [], None
        row["wall_s"] = time.perf_counter() - start
    row.update(tree.figures())
    if summary is not None:
        row.update(
            {
                "fits": summary.fits,
                "ok": summary.ok,
                "failed": summary.failed,
                "failures": summary.failures[:3],
                "task_s": summary.task_seconds,
                "threads": summary.threads,
                "stages": {"cluster_start_s": cluster_start_s, **_stages(tasks, start_clock)},
            }
        )
    print(
        f"  wall {row['wall_s']:.1f} s, cpu {row['cpu_s']:.1f} s, peak RSS {row['peak_rss_gb']:.2f} GB"
        + (f", {row['fits']} fits, {row['failed']} failed" if summary else f": {row['error']}"),
        flush=True,
    )
    return row


def _stages(tasks: list[dict], start_clock: float) -> dict:
    """Compute and transfer seconds and the largest result (GB) per task kind (the key's first word:
    read, count, block, features, fit, ...), and when the first task started and the last one
    ended, seconds after the sweep began."""
    kinds: dict[str, dict] = {}
    starts, stops = [], []
    for task in tasks:
        kind = str(task["key"]).split("-")[0].strip("('\"")
        entry = kinds.setdefault(kind, {"tasks": 0, "compute_s": 0.0, "transfer_s": 0.0, "result_gb": 0.0})
        entry["tasks"] += 1
        entry["result_gb"] = max(entry["result_gb"], (task.get("nbytes") or 0) / 1e9)  # Dask's sizeof of the result
        for part in task["startstops"]:
            seconds = part["stop"] - part["start"]
            if part["action"] == "compute":
                entry["compute_s"] += seconds
                starts.append(part["start"])
                stops.append(part["stop"])
            elif part["action"] == "transfer":
                entry["transfer_s"] += seconds
    out = {"by_task": kinds}
    if starts:
        out["first_task_start_s"] = min(starts) - start_clock
        out["last_task_end_s"] = max(stops) - start_clock
    return out


def _gscv(spec, folds: int) -> dict:
    """GridSearchCV(LinearSVC(loss="hinge")) per category end to end on the spec's corpus and features."""
    print(f"GridSearchCV(LinearSVC), cv={folds}, n_jobs={WORKERS} ...", flush=True)
    get_reusable_executor().shutdown(wait=True)  # it starts its worker pool inside the timed block
    with ProcessTreeSampler() as tree:
        start = time.perf_counter()
        corpus, load_s = timed(spec.corpus.load)
        train = corpus.split(spec.corpus.train_split)
        categories = train.choose_categories(top_k=spec.corpus.categories.top_k)
        data, vectorize_s = timed(vectorize, corpus, spec.preprocessings[0], spec.corpus.train_split, None, categories)
        search_s = {}
        for category in categories:
            search = GridSearchCV(
                LinearSVC(loss="hinge", random_state=0),
                {"C": list(spec.C)},
                cv=folds,
                scoring="f1",
                n_jobs=WORKERS,
                refit=False,
            )
            with warnings.catch_warnings():
                warnings.simplefilter(
                    "ignore"
                )  # LinearSVC's non-convergence at large C, F1 of folds without a positive
                _, search_s[category] = timed(search.fit, data.X_train, data.targets()[0][category])
        wall = time.perf_counter() - start
    row = {
        "wall_s": wall,
        "load_s": load_s,
        "vectorize_s": vectorize_s,
        "search_s": search_s,
        "folds": folds,
        **tree.figures(),
    }
    print(
        f"  wall {wall:.1f} s (corpus {load_s:.1f}, features {vectorize_s:.1f}, searches "
        f"{sum(search_s.values()):.1f}), peak RSS {row['peak_rss_gb']:.2f} GB",
        flush=True,
    )
    return row


def _print(result: dict) -> None:
    rows = []
    for r in result["runs"]:
        stages = r.get("stages", {})
        by_task = stages.get("by_task", {})
        rows.append(
            [
                f"{r['n_docs']:,}",
                r["workers"],
                r["wall_s"],
                r["cpu_s"],
                r["peak_rss_gb"],
                r["peak_rss_driver_gb"],
                r.get("fits", "-"),
                r.get("failed", r.get("error", "-")),
                stages.get("cluster_start_s", float("nan")),
                stages.get("first_task_start_s", float("nan")),
                sum(by_task.get(kind, {}).get("compute_s", 0.0) for kind in LOAD_TASKS),
                sum(by_task.get(kind, {}).get("compute_s", 0.0) for kind in VECTORISE_TASKS),
                by_task.get("fit", {}).get("compute_s", float("nan")),
                sum(kind["transfer_s"] for kind in by_task.values()),
            ]
        )
    print_table(
        [
            "n_docs",
            "workers",
            "wall_s",
            "cpu_s",
            "peak_rss_gb",
            "driver_gb",
            "fits",
            "failed",
            "cluster_s",
            "first_task_s",
            "load_s",
            "vectorize_s",
            "fit_tasks_s",
            "transfer_s",
        ],
        rows,
        title="\nlinear sweeps, 4 categories x 8 C, xi-alpha + span + holdout",
    )
    if result["loglog_slope"] is not None:
        print(f"log-log slope of wall vs n (2 workers): {result['loglog_slope']:.2f}")
    if "gscv" in result:
        n = result["compare_n_docs"]
        print(
            f"n={n:,}: GridSearchCV(LinearSVC) cv={result['gscv']['folds']} {result['gscv_wall_s_1e5']:.1f} s "
            f"(peak RSS {result['gscv']['peak_rss_gb']:.2f} GB) -> xialpha speedup {result['speedup_1e5']:.2f}x; "
            f"cv={result['gscv_cv5']['folds']} {result['gscv_cv5_wall_s_1e5']:.1f} s "
            f"-> {result['speedup_cv5_1e5']:.2f}x; "
            f"2 vs 1 workers {result['speedup_2_vs_1_workers_1e5'] or float('nan'):.2f}x"
        )


if __name__ == "__main__":
    main()
