"""The C axis (issue 36): one C path cut into segments that run at once when worker threads outnumber
the paths, against the whole warm-started path on one thread.

Sweep: 1 category x 1 preprocessing x 16 C (0.01 .. 300, log-spaced), linear, xi-alpha + span, on
the synthetic corpus of bench/scale_out.py (Parquet, read by the workers), 10^5 documents
(--quick: 3,000). Runs, each a real sweep on a local cluster into a temporary store
(`scale_out.measure`: wall, work and critical path from Dask's task stream):
  cut_W      [cluster] workers = W for W in 1, 2, 4, 8: the plan cuts the path into W segments
             (beyond 2 workers this 2-core machine is oversubscribed: `oversubscribed` says so);
  whole      2 workers with the cut switched off (today's plan before the cut: one task);
  cut_32     2 workers, the plan made as for 32 threads (16 segments of one C, each cold): the
             work and critical path that 32 workers would have.
`projected_wall_s` {"32", "128"}: Brent's bound (serial driver part + work / W + critical path) of
cut_32; `projected_wall_s_unsplit` the same of `whole`; target: projected_wall_s["32"] <= 1/4 of
projected_wall_s_unsplit["32"]. `same_results`: per stored key, the largest difference of the
error and F1 estimates between each cut run and `whole` (a solution within the solver's tolerance
moves at most a borderline example: 1 / n).

    python bench/c_axis.py           # 10^5 documents
    python bench/c_axis.py --quick   # 3,000 documents
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
from common import make_parser, output_path, print_table, write_results
from scale_out import corpus_file, measure

from xialpha.jobs import plan as plan_module

C_GRID = [float(f"{c:.3g}") for c in np.logspace(-2, np.log10(300), 16)]
WORKERS = (1, 2, 4, 8)
PROJECTED = (32, 128)
COMPARED = ("xa_error", "span_error", "xa_f1", "span_f1")
SPEC = """\
[sweep]
id = "c-axis-{label}"

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
top_k = 1

[[preprocessing]]
min_df = 3

[[kernels]]
name = "linear"

[svm]
C = {C}

[estimators]
rho = [1.0]
span = true

[cluster]
kind = "local"
workers = {workers}
"""


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "xialpha-bench-corpora",
        help="directory of the Parquet corpora (written once, reused)",
    )
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    n = 3_000 if args.quick else 100_000
    path = corpus_file(n, 4 if args.quick else 32, args.cache)
    runs, rows = {}, {}
    for label, workers, slots in [*[(f"cut_{w}", w, None) for w in WORKERS], ("whole", 2, 0), ("cut_32", 2, 32)]:
        runs[label], rows[label] = run(path, n, label, workers, slots)
    result = {
        "benchmark": "c_axis",
        "quick": args.quick,
        "n_docs": n,
        "C": C_GRID,
        "cpus": os.cpu_count(),
        "runs": runs,
        "projected_wall_s": projection(runs["cut_32"]),
        "projected_wall_s_unsplit": projection(runs["whole"]),
        "same_results": {label: largest_differences(rows["whole"], rows[label]) for label in rows if label != "whole"},
    }
    result["projected_ratio_32"] = result["projected_wall_s"]["32"] / result["projected_wall_s_unsplit"]["32"]
    result["target_projected_ratio_32"] = 0.25
    print_table(
        ["run", "workers", "fit tasks", "wall s", "work s", "critical path s", "oversubscribed"],
        [
            [label, r["workers"], r["fit_tasks"], r["wall_s"], r["work_s"], r["span_s"], r["oversubscribed"]]
            for label, r in runs.items()
        ],
        title=f"1 category x 16 C, {n:,} documents",
    )
    print(
        f"projected wall at 32 / 128 workers: cut {result['projected_wall_s']['32']:.1f} / "
        f"{result['projected_wall_s']['128']:.1f} s, whole path {result['projected_wall_s_unsplit']['32']:.1f} / "
        f"{result['projected_wall_s_unsplit']['128']:.1f} s (ratio at 32: {result['projected_ratio_32']:.2f}; "
        "target <= 0.25)"
    )
    print(f"largest estimate differences vs the whole path: {result['same_results']}")
    write_results(result, output_path("c_axis", args))


def run(path: Path, n: int, label: str, workers: int, slots: int | None) -> tuple[dict, dict]:
    """One sweep; slots None: the plan as the cluster makes it, 0: whole paths, k: cut as for k threads."""
    spec_text = SPEC.format(label=label.replace("_", "-"), path=path, C=C_GRID, workers=workers)
    original = plan_module.cut_paths

    def cut(paths, cluster_slots):
        if slots is None:
            return original(paths, cluster_slots)
        return [[path] for path in paths] if slots == 0 else original(paths, slots)

    with (
        tempfile.TemporaryDirectory(prefix="xialpha-c-axis-") as store,
        mock.patch.object(plan_module, "cut_paths", cut),
    ):
        figures = measure(spec_text, n, workers, store=store)
        from xialpha.storage.opening import open_store

        stored = open_store(store, create=True, writable=True).read_results_df(f"c-axis-{label.replace('_', '-')}")
    figures["fit_tasks"] = figures["tasks_by_kind"].get("fit", 0)
    return figures, {row["C"]: row for row in stored.to_dict("records")}


def projection(run: dict) -> dict:
    """Brent's bound for W workers: the driver's serial part + work / W + critical path (seconds)."""
    serial = run["first_task_s"] or 0.0
    return {str(w): serial + run["work_s"] / w + run["span_s"] for w in PROJECTED}


def largest_differences(whole: dict, cut: dict) -> dict:
    """{estimate column: the largest |cut - whole| over the C values}, and 1 / n for scale."""
    found = {column: max(abs(cut[C][column] - whole[C][column]) for C in whole) for column in COMPARED}
    return found | {"one_example": 1.0 / min(row["n"] for row in whole.values())}


if __name__ == "__main__":
    main()
