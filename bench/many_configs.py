"""Benchmark: every reading command on a store of 10^4, 10^5 (and 10^6) configurations (issue 33).

A real sweep (synthetic corpus, many categories x C x 2 preprocessings, span off, on a local
cluster) is run once; its result and example rows are then replicated under new config keys and
new category names, through the store's own writer (`Datasets.write_results` /
`write_examples`), until the store holds each size: one file per copy, the layout of a sweep
that has not ended ("batches"). For the layout a sweep leaves when it ends ("compacted"), a copy
of that store is finished as a sweep finishes (`ResultStore.finish_sweep`: its partitions
compacted, its summary stored; timed as `finish_sweep_s`). Each command runs as a subprocess
(`python -m xialpha.cli ...`), timed wall-clock, its peak RSS sampled with psutil, the 1-minute
load beside it. With --before DIR (a checkout of the code before a change) every command is
also run with that code, right after the current code's run, on its own copy of the same store
(the selections each version saves stay its own: one made before issue 41 stores other columns),
so before and after compare within one run. Beside them: pyarrow reading the same columns of the results once,
and the start time of `xialpha --help`. With --profile, select at the largest size is profiled
(cProfile, top 25 by cumulative time printed). certify is not timed: the replicated categories
are not in the corpus, so there is nothing to certify them on.

    python bench/many_configs.py            # 10^4 and 10^5 configurations
    python bench/many_configs.py --quick    # 10^3 (CI smoke)
    python bench/many_configs.py --sizes 100000,1000000 --store-dir /tmp/mc --before /tmp/old-checkout

The figures of issue 41 (select, select --global, report, report --html at 10^5 and 10^6 on the
compacted layout, beside the code before it) come from

    git worktree add /tmp/xialpha-69d6b19 69d6b19
    python bench/many_configs.py --sizes 100000,1000000 --layouts compacted --store-dir /tmp/mc \
        --before /tmp/xialpha-69d6b19 --out bench/results/many_configs_issue41.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's xialpha, as the commands it times get
RESULTS = REPO / "bench" / "results"
SWEEP = "many"

SPEC = """\
[sweep]
id = "many"
metric = "f1"
estimator = "xa"

[corpus]
loader = "synthetic"
n_docs = {n_docs}
n_categories = {n_categories}
seed = 5
train_split = "train"
test_split = "test"

[[preprocessing]]
stemming = ["none", "porter"]
min_df = 1

[[kernels]]
name = "linear"

[svm]
C = {c_values}
j = [1.0]

[estimators]
rho = [1.0]
span = false

[cluster]
kind = "local"
"""

COMMANDS = {
    "select": ["select"],
    "select --global": ["select", "--global"],
    "select --save": ["select", "--save"],
    "report": ["report"],
    "report --html": ["report", "--html", "{tmp}/report.html"],
    "store ls": ["store", "ls"],
    "--help": ["--help"],
}


def finish(store_uri: str) -> float:
    """Finish the store's sweep as a sweep ends (compaction, summary); its seconds."""
    from xialpha.storage.opening import open_store

    start = time.perf_counter()
    open_store(store_uri, create=True, writable=True).finish_sweep(SWEEP)
    return time.perf_counter() - start


def run_command(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in GB, its stdout and stderr) of `python -m xialpha.cli argv`; raises if
    it fails. The output goes to a file, not a pipe, which a long output would fill while we wait."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as output:
        start = time.perf_counter()
        process = psutil.Popen(  # run outside the checkout: `-m` puts the working directory first on the path
            [sys.executable, "-m", "xialpha.cli", *argv],
            env=env,
            cwd=tempfile.gettempdir(),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        peak = 0
        while process.poll() is None:
            try:
                peak = max(peak, process.memory_info().rss)
            except psutil.NoSuchProcess:
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        output.seek(0)
        text = output.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {text[-2000:]}")
    return wall, peak / 1e9, text


def real_sweep(store: str, n_categories: int, c_values: list[float], n_docs: int) -> float:
    """Run the real sweep into `store`; its wall seconds."""
    import xialpha

    spec = SPEC.format(n_docs=n_docs, n_categories=n_categories, c_values=json.dumps(c_values))
    start = time.perf_counter()
    xialpha.sweep(spec, store=store, quiet=True)
    return time.perf_counter() - start


def replicate(store_uri: str, target: int) -> int:
    """Write copies of the sweep's original rows under new keys and categories until the results
    hold `target` configurations; the number they hold."""
    from xialpha.storage.opening import open_store

    store = open_store(store_uri, create=True, writable=True)
    base = store.datasets.read_results(SWEEP)
    base = base.filter(pc.invert(pc.match_substring(base["category"], "_r")))
    examples = store.datasets.read("examples", sweep_id=SWEEP)
    examples = examples.filter(pc.is_in(examples["config_key"], base["config_key"]))
    have = store.datasets.read_results(SWEEP, columns=["config_key"]).num_rows
    copy = have // base.num_rows
    while have < target:
        suffix = f"_r{copy:04d}"
        for table, name in ((base, "results"), (examples, "examples")):
            renamed = table.set_column(
                table.schema.get_field_index("config_key"),
                "config_key",
                pc.binary_join_element_wise(table["config_key"], pa.scalar(suffix), ""),
            )
            if name == "results":
                renamed = renamed.set_column(
                    renamed.schema.get_field_index("category"),
                    "category",
                    pc.binary_join_element_wise(renamed["category"], pa.scalar(suffix), ""),
                )
                store.datasets.write_results(renamed)
            else:
                store.datasets.write_examples(renamed.to_pylist())
        have += base.num_rows
        copy += 1
    return have


def copy_of(store: str, code: str) -> str:
    """A copy of `store` for the code `code` to run on (made once, kept with --store-dir)."""
    copy = f"{store}-{code}"
    if not Path(copy).exists():
        shutil.copytree(store, copy)
    return copy


def pyarrow_once(store: str) -> float:
    """Seconds for pyarrow to read, once, the results columns select needs."""
    columns = [
        "config_key",
        "status",
        "category",
        "preprocessing_id",
        "kernel_id",
        "C",
        "j",
        "rho",
        "n",
        "n_pos",
        "n_sv",
        "xa_d_pos",
        "xa_d_neg",
        "span_d_pos",
        "span_d_neg",
    ]
    start = time.perf_counter()
    dataset = ds.dataset(f"{store}/results/sweep_id={SWEEP}", format="parquet")
    names = [c for c in columns if c in dataset.schema.names]
    dataset.to_table(columns=names)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run (10^3 configurations)")
    parser.add_argument("--sizes", default=None, help="comma-separated sizes (default 10000,100000)")
    parser.add_argument("--only", default=None, help="comma-separated command names to time")
    parser.add_argument("--layouts", default="batches,compacted", help="batches, compacted or both (default)")
    parser.add_argument("--store-dir", type=Path, default=None, help="keep the stores here and reuse them")
    parser.add_argument("--before", type=Path, default=None, help="a checkout of the code before, run beside")
    parser.add_argument("--profile", action="store_true", help="cProfile select at the largest size")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    sizes = [1000] if args.quick else [int(s) for s in (args.sizes or "10000,100000").split(",")]
    layouts = args.layouts.split(",")
    out = args.out or RESULTS / ("many_configs.quick.json" if args.quick else "many_configs.json")
    commands = {k: v for k, v in COMMANDS.items() if args.only is None or k in args.only.split(",")}
    n_categories, c_values, n_docs = (
        (10, [0.1, 1.0, 10.0], 200) if args.quick else (40, [0.03, 0.1, 0.3, 1, 3, 10], 400)
    )
    codes = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    envs = {
        name: {**os.environ, "PYTHONPATH": str(code) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        for name, code in codes.items()
    }
    result: dict = {
        "what": "per-command wall time and peak RSS on stores of many configurations",
        "load_average_at_start": os.getloadavg(),
        "code": {name: str(code) for name, code in codes.items()},
        "layouts": {},
        "pyarrow_read_once_s": {},
        "finish_sweep_s": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = args.store_dir or Path(tmp)
        store = f"{work}/store"
        if not Path(store).exists():
            result["real_sweep_seconds"] = round(real_sweep(store, n_categories, c_values, n_docs), 1)
        real_configs = 2 * n_categories * len(c_values)
        result["how"] = (
            f"a real sweep of {real_configs} configurations ({n_categories} synthetic categories x {len(c_values)} "
            "C x 2 preprocessings, span off, local cluster), then its result and example rows replicated under new "
            "config keys and category names through the store's own writer up to each size (one file per copy: "
            "the 'batches' layout); 'compacted': a copy finished as a sweep ends (ResultStore.finish_sweep)"
        )
        for size in sizes:
            held = replicate(store, size)
            for layout in layouts:
                target = store
                if layout == "compacted":
                    target = f"{work}/compacted-{size}"
                    if not Path(target).exists():
                        shutil.copytree(store, target)
                        result["finish_sweep_s"][str(size)] = round(finish(target), 3)
                        print(f"{held:>7} configs  finish_sweep {result['finish_sweep_s'][str(size)]:7.2f} s")
                stores = {code: target if code == "after" else copy_of(target, code) for code in envs}
                for name, argv in commands.items():
                    argv = [part.format(tmp=tmp) for part in argv]
                    for code, env in envs.items():
                        w, r, _ = run_command(argv if argv[0] == "--help" else [*argv, stores[code]], env)
                        load = os.getloadavg()[0]
                        figures = result["layouts"].setdefault(layout, {}).setdefault(code, {})
                        for key, value in (("wall_s", w), ("peak_rss_gb", r), ("load_1min", load)):
                            figures.setdefault(key, {}).setdefault(str(size), {})[name] = round(value, 3)
                        print(
                            f"{held:>7} configs  {layout:<9} {code:<6} {name:<16} {w:7.2f} s  {r:6.3f} GB  "
                            f"load {load:.2f}",
                            flush=True,
                        )
                        write_json(out, result)
                once = round(pyarrow_once(target), 3)
                result["pyarrow_read_once_s"].setdefault(layout, {})[str(size)] = once
                print(f"{held:>7} configs  {layout:<9} {'pyarrow once':<16} {once:7.2f} s", flush=True)
                write_json(out, result)
        if args.profile:
            profile = f"{tmp}/select.prof"
            subprocess.run(
                [sys.executable, "-m", "cProfile", "-o", profile, "-m", "xialpha.cli", "select", store],
                env=envs["after"],
                stdout=subprocess.DEVNULL,
                check=True,
            )
            import pstats

            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)

    print(f"wrote {out}")


def write_json(out: Path, result: dict) -> None:
    """Write what was measured so far (each command adds to it: a long run leaves its figures)."""
    layouts = result["layouts"]
    headline = layouts.get("compacted", layouts.get("batches", {})).get("after", {})
    result = {
        "wall_s": headline.get("wall_s", {}),  # the current code on the layout a sweep leaves when it ends
        "peak_rss_gb": headline.get("peak_rss_gb", {}),
        **result,
        "load_average_now": os.getloadavg(),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
