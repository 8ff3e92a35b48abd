"""The fixed cost of a sweep: what a tiny sweep (1 category x 1 C on 200 synthetic documents) takes end to end.

Issue 14's target: a small sweep's fixed overhead (cluster start, imports, corpus shipping,
store) is at most 3 s. Measured, each REPEAT times (the median counts):

  cli_s          `xialpha sweep SPEC --store DIR` as a user runs it: a new Python process,
                 imports, spec, a LocalCluster of 2 worker processes, the graph, the store, exit;
  import_s       `python -c "import xialpha.cli"` alone (the interpreter and the CLI's imports);
  cluster_s      `xialpha.jobs.cluster.connect` starting and stopping that LocalCluster in process
                 (the first run also starts the fork server the workers are forked from, which
                 the later runs of this process reuse, as a notebook's later sweeps do);
  run_sweep_s    `run_sweep` of the same spec against an already running cluster (graph, corpus
                 shipping, one fit, the store), i.e. the part a long-lived client pays per sweep.

The fit itself takes milliseconds, so cli_s is the fixed overhead.

With --parts it measures instead the fixed cost of `xialpha sweep config/reuters.toml` run as a
user runs it (issue 47.2: target <= 1.5 s, numba's cache warm), and where it goes. The sweep runs
as a process whose `before_the_stack` and `run_sweep` are wrapped to note the time (nothing else
changes), timed from outside (the process's start to its end):

  to_spec         the interpreter's start, the CLI's imports, the arguments and the spec read;
  early_start     the corpus looked at and the fork server started (`before_the_stack`);
  driver_imports  the Dask stack imported and the store opened, until `run_sweep` starts;
  cluster_start ... finish   `SweepSummary.phases` (cluster start, corpus load, planning, to the
                  first fit, fit imbalance, storing tail, cluster close, finish);
  exit            from `run_sweep`'s return to the process's end (the best per category, exit).

fixed_s = the process's wall - fit_task_seconds / threads (the sum of the parts). With --before DIR
(a checkout of the code before a change: `git archive <commit> | tar -x -C DIR`) each repeat also
runs that code right after this one, so that before and after compare within one script run.

Before the sweeps, --parts also times the imports of each side (`imports`; alone with --imports,
into fixed_imports.json): IMPORT_REPEAT fresh processes each (the fewest seconds count, from the
interpreter's start to the last import) import

  preload  what the fork server of the local workers imports (LOCAL_WORKER_MODULES: distributed
           and xialpha.jobs.worker_preload, with its numba kernels loaded and a tiny fit), which
           every sweep's cluster start waits for;
  driver   the sweep command's stack before its cluster starts (DRIVER_MODULES),

and say whether scikit-learn was among them.

    python bench/fixed_overhead.py            # REPEAT runs of each
    python bench/fixed_overhead.py --quick    # one run of each
    python bench/fixed_overhead.py --parts --repeat 3 --before /tmp/old   # writes fixed_parts.json
    python bench/fixed_overhead.py --imports --before /tmp/old            # writes fixed_imports.json
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, REUTERS_SPEC, make_parser, output_path, print_table, write_results

from xialpha.jobs.cluster import connect
from xialpha.jobs.sweep import run_sweep
from xialpha.jobs.worker_processes import LOCAL_WORKER_MODULES
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store

REPEAT = 5
TARGET_S = 3.0
SPEC = """\
[sweep]
id = "tiny"

[corpus]
loader = "synthetic"
n_docs = 200
n_categories = 2
seed = 0
train_split = "train"
test_split = "test"

[corpus.categories]
top_k = 1

[[preprocessing]]
min_df = 1

[[kernels]]
name = "linear"

[svm]
C = [1.0]

[estimators]
holdout = true

[cluster]
kind = "local"
workers = 2
"""


IMPORT_REPEAT = 5
# the modules `xialpha sweep` imports before its cluster starts: the CLI, the command, the spec, the store, the stack
DRIVER_MODULES = (
    "xialpha.cli",
    "xialpha.commands.sweep",
    "xialpha.spec.sweep",
    "xialpha.storage.store",
    "xialpha.jobs.sweep",
)
IMPORTED = {"preload": LOCAL_WORKER_MODULES, "driver": DRIVER_MODULES}
# A process importing the modules named in argv, in order, then saying when it was done (time.time()).
TIMED_IMPORTS = """
import importlib, json, sys, time
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps({"done": time.time(), "sklearn": "sklearn" in sys.modules}))
"""

PART_NAMES = ("to_spec", "early_start", "driver_imports")  # then SweepSummary.phases, then "exit"
# The sweep as the CLI runs it, its stages noted in the JSON file named by argv[1] (all times in
# time.time() seconds); the CLI's arguments follow.
TIMED_CLI = """
import json, sys, time
noted, out = {}, sys.argv.pop(1)
import xialpha.commands.sweep as command
checked = command.before_the_stack
def before_the_stack(*args, **kwargs):
    noted["spec_read"] = time.time()
    checked(*args, **kwargs)
    noted["early_started"] = time.time()
    import xialpha.jobs.sweep as jobs
    sweep = jobs.run_sweep
    def run_sweep(*args, **kwargs):
        noted["run_sweep"] = time.time()
        summary = sweep(*args, **kwargs)
        noted.update(returned=time.time(), phases=summary.phases, fit_task_seconds=summary.fit_task_seconds,
                     threads=summary.threads, wall_seconds=summary.wall_seconds)
        with open(out, "w") as file:
            json.dump(noted, file)
        return summary
    jobs.run_sweep = run_sweep
command.before_the_stack = before_the_stack
from xialpha.cli import console  # what the `xialpha` command runs
console()
"""


def sweep_parts(code: Path, spec: Path, store: Path) -> dict:
    """One `xialpha sweep SPEC --store STORE --quiet` of the checkout `code` as a process: its wall,
    fixed_s and the seconds of each part (see the docstring)."""
    noted = store.with_suffix(".json")
    environ = {**os.environ, "PYTHONPATH": str(code)}
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", TIMED_CLI, str(noted), "sweep", str(spec), "--store", str(store), "--quiet"],
        cwd=code,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    end = time.time()
    if done.returncode != 0:
        sys.exit(f"the sweep of {code} failed ({done.returncode}): {done.stderr[-2000:]}")
    times = json.loads(noted.read_text())
    parts = {
        "to_spec": times["spec_read"] - start,
        "early_start": times["early_started"] - times["spec_read"],
        "driver_imports": times["run_sweep"] - times["early_started"],
        **times["phases"],
        "exit": end - times["returned"],
    }
    fits = times["fit_task_seconds"] / max(times["threads"], 1)
    return {
        "wall_s": end - start,
        "fixed_s": end - start - fits,
        "fits_s": fits,
        "parts": parts,
        "load_1min": os.getloadavg()[0],
    }


def import_seconds(codes: dict[str, Path], repeat: int) -> dict:
    """{"preload"|"driver": {code's name: {"min_s", "runs", "sklearn"}}}: `repeat` fresh processes of each
    checkout in `codes` importing IMPORTED's modules, the sides alternating; seconds from the process's
    start to its last import, as seen from outside."""
    found: dict = {what: {name: {"runs": []} for name in codes} for what in IMPORTED}
    for _ in range(repeat):
        for what, modules in IMPORTED.items():
            for name, code in codes.items():
                start = time.time()
                done = subprocess.run(
                    [sys.executable, "-c", TIMED_IMPORTS, *modules],
                    cwd=code,
                    env={**os.environ, "PYTHONPATH": str(code)},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                said = json.loads(done.stdout)
                found[what][name]["runs"].append(said["done"] - start)
                found[what][name]["sklearn"] = said["sklearn"]
    for sides in found.values():
        for side in sides.values():
            side["min_s"] = min(side["runs"])
    return found


def print_imports(imports: dict) -> None:
    print_table(
        ["imports", *[f"{name} min s" for name in next(iter(imports.values()))], "scikit-learn"],
        [
            [
                what,
                *[f"{side['min_s']:.2f}" for side in sides.values()],
                " ".join(str(s["sklearn"]) for s in sides.values()),
            ]
            for what, sides in imports.items()
        ],
    )


def main_imports(args) -> None:
    """--imports: the preload's and the driver's import seconds, this code (and --before's)."""
    codes = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    imports = import_seconds(codes, IMPORT_REPEAT)
    print_imports(imports)
    result = {
        "benchmark": "fixed_imports",
        "code": {name: str(code) for name, code in codes.items()},
        "repeat": IMPORT_REPEAT,
        "load_1min": os.getloadavg()[0],
        "imports": imports,
    }
    write_results(result, output_path("fixed_imports", args))


def main_parts(args) -> None:
    """--parts: the Reuters sweep's fixed cost as a process, this code (and --before's) REPEAT times."""
    codes = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    runs: dict[str, list[dict]] = {name: [] for name in codes}
    imports = import_seconds(codes, IMPORT_REPEAT)
    print_imports(imports)
    with tempfile.TemporaryDirectory(prefix="xialpha-fixed-parts-") as directory:
        spec = Path(directory) / "reuters.toml"
        corpus = f'path = "{args.reuters.resolve()}"'
        spec.write_text(
            "\n".join(corpus if line.startswith("path = ") else line for line in REUTERS_SPEC.read_text().splitlines())
        )
        for i in range(args.repeat):
            for name, code in codes.items():
                runs[name].append(sweep_parts(code, spec, Path(directory) / f"{name}{i}"))
                run = runs[name][-1]
                print(
                    f"{name} {i}: wall {run['wall_s']:.2f} s, fixed {run['fixed_s']:.2f} s, "
                    f"load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    medians = {
        name: {
            "wall_s": statistics.median(run["wall_s"] for run in done),
            "fixed_s": statistics.median(run["fixed_s"] for run in done),
            "parts": {part: statistics.median(run["parts"][part] for run in done) for part in done[0]["parts"]},
        }
        for name, done in runs.items()
    }
    result = {
        "benchmark": "fixed_parts",
        "spec": str(REUTERS_SPEC.relative_to(REPO)),
        "target_fixed_s": 1.5,
        "code": {name: str(code) for name, code in codes.items()},
        "median": medians,
        "runs": runs,
        "imports": imports,
    }
    if "before" in medians:
        result["after_over_before"] = {
            key: medians["after"][key] / medians["before"][key] for key in ("wall_s", "fixed_s")
        }
    names = list(codes)
    print_table(
        ["part", *[f"{name} s" for name in names]],
        [[part, *[f"{medians[name]['parts'][part]:.2f}" for name in names]] for part in medians["after"]["parts"]]
        + [[key, *[f"{medians[name][key]:.2f}" for name in names]] for key in ("fixed_s", "wall_s")],
    )
    write_results(result, output_path("fixed_parts", args))


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--parts", action="store_true", help="the Reuters sweep's fixed cost as a process, by part")
    parser.add_argument("--repeat", type=int, default=REPEAT, help="runs of each (the median counts)")
    parser.add_argument("--imports", action="store_true", help="only the preload's and the driver's import seconds")
    parser.add_argument(
        "--before", type=Path, default=None, help="a checkout of the code before (with --parts or --imports)"
    )
    args = parser.parse_args()
    if args.parts:
        main_parts(args)
        return
    if args.imports:
        main_imports(args)
        return
    repeat = 1 if args.quick else args.repeat
    with tempfile.TemporaryDirectory(prefix="xialpha-overhead-") as directory:
        spec_path = Path(directory) / "tiny.toml"
        spec_path.write_text(SPEC)
        xialpha = Path(sys.executable).with_name("xialpha")
        cli = [
            _wall(
                lambda i=i: _run([str(xialpha), "sweep", str(spec_path), "--store", f"{directory}/cli{i}", "--quiet"])
            )
            for i in range(repeat)
        ]
        imports = [_wall(lambda: _run([sys.executable, "-c", "import xialpha.cli"])) for _ in range(repeat)]
        spec = parse_spec(SPEC, source="bench fixed_overhead spec")
        cluster, sweeps = [], []
        for i in range(repeat):
            start = time.perf_counter()
            with connect(spec.cluster) as client:
                started = time.perf_counter()
                sweeps.append(
                    _wall(
                        lambda: run_sweep(
                            spec, open_store(f"{directory}/lib{i}", create=True, writable=True), client=client
                        )
                    )
                )
                stop = time.perf_counter()
            cluster.append((started - start) + (time.perf_counter() - stop))
    result = {
        "benchmark": "fixed_overhead",
        "quick": args.quick,
        "repeat": repeat,
        "target_s": TARGET_S,
        "cli_s": statistics.median(cli),
        "import_s": statistics.median(imports),
        "cluster_s": statistics.median(cluster),
        "run_sweep_s": statistics.median(sweeps),
        "runs": {"cli_s": cli, "import_s": imports, "cluster_s": cluster, "run_sweep_s": sweeps},
    }
    print_table(
        ["what", "median s", "runs"],
        [
            [key, f"{result[key]:.2f}", " ".join(f"{v:.2f}" for v in result["runs"][key])]
            for key in ("cli_s", "import_s", "cluster_s", "run_sweep_s")
        ],
    )
    print(f"fixed overhead of `xialpha sweep`: {result['cli_s']:.2f} s (target <= {TARGET_S:g} s)")
    write_results(result, output_path("fixed_overhead", args))


def _wall(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _run(command: list[str]) -> None:
    subprocess.run(command, check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


if __name__ == "__main__":
    main()
