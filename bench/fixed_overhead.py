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

    python bench/fixed_overhead.py            # REPEAT runs of each
    python bench/fixed_overhead.py --quick    # one run of each
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, make_parser, output_path, print_table, write_results

from xialpha.jobs.cluster import connect
from xialpha.jobs.sweep import run_sweep
from xialpha.spec.sweep import parse_spec
from xialpha.storage.store import ResultStore

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


def main() -> None:
    args = make_parser(__doc__).parse_args()
    repeat = 1 if args.quick else REPEAT
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
                sweeps.append(_wall(lambda: run_sweep(spec, ResultStore(f"{directory}/lib{i}"), client=client)))
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
