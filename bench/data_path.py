"""The data path of a sweep's tasks, in process time, before and after a change (issue 47.3 and 47.5).

What a sweep's workers spend outside the solver and the estimates, task by task, called in one
process as the cluster calls them (`xialpha.jobs.data` and `xialpha.jobs.tasks`): the corpus's
parts read and finished as `load_on_cluster` reads them (`read`), each part's term counts
(`count`, the unstemmed tokenising; `stem`, a stemming preprocessing's counts from them), the
document frequencies and the vocabulary (`vocabulary`: per part, their merge, the fit), each
part's rows weighted (`block`), the blocks stacked (`stack`), the linear path's training data
(`linear_data`), then every batch of the plan (2 threads) as `fit_batch` runs it, with BLAS on one
thread: `fit_task` in all, of which the solver (`fit`: `fit_svm`), the estimates (`estimates`: the
rest of each job's `_fit_one`, held-out scoring included) and held-out scoring alone (`held_out`:
`holdout`); `bookkeeping` is the rest of the fit task (result and example rows), `pickle` the
rows pickled as a worker sends them to the driver.
  data_path_s          = count + stem + vocabulary + block + stack + linear_data + bookkeeping + pickle
  data_path_over_fit_task = (data_path_s + held_out) / fit_task  (issue 47.3's measure: <= 0.15;
                         `read` is the corpus load, reported apart)
All seconds are CPU seconds of this process (`time.process_time`), so the machine's load changes
them little; each side runs in its own process, once unrecorded (numba's cache filled), then the
two alternating (before, after, before, ...) --repeat times; the median of each part is reported
with the ratio after / before.

    python bench/data_path.py --before DIR      # DIR: a copy of the old tree (git archive <commit> xialpha)
    python bench/data_path.py --before DIR --n-docs 100000   # the same on scale.py's 10^5 synthetic corpus
    python bench/data_path.py --quick           # a small synthetic sweep, this tree only
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path

from common import LOAD_AT_START, REPO, make_parser, output_path, sweep_spec, write_results

PARTS = ("read", "count", "stem", "vocabulary", "block", "stack", "linear_data")
FIT_PARTS = ("fit_task", "fit", "estimates", "held_out", "bookkeeping", "pickle")
DATA_PATH = ("count", "stem", "vocabulary", "block", "stack", "linear_data", "bookkeeping", "pickle")
TARGET_OVER_FIT_TASK = 0.15


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--before", type=Path, default=None, help="a copy of the old tree (its xialpha/ inside)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument("--n-docs", type=int, default=None, help="scale.py's synthetic corpus of this size")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # one side's measuring process
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args)))
        return
    sides = {"after": REPO} if args.before is None else {"before": args.before.resolve(), "after": REPO}
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for tree in sides.values():  # a first run per side fills its numba cache (a copied tree compiles anew)
        _run(tree, args)
    for _ in range(1 if args.quick else args.repeat):
        for side, tree in sides.items():
            runs[side].append(_run(tree, args))
            print(side, json.dumps(runs[side][-1]), flush=True)
    result = {
        "benchmark": "data_path",
        "quick": args.quick,
        "corpus": "synthetic" if args.quick or args.n_docs else "reuters21578",
        "n_docs": args.n_docs,
        "repeat": len(runs["after"]),
        "load_at_start": LOAD_AT_START,
        "uptime_at_end": _uptime(),
        "units": "CPU seconds of the measuring process (median over the runs)",
        **{side: _summary(side_runs) for side, side_runs in runs.items()},
        "runs": runs,
    }
    if "before" in runs:
        result["after_over_before"] = {
            part: result["after"][part] / result["before"][part] if result["before"][part] else None
            for part in result["after"]
        }
    out = output_path("data_path" if not args.n_docs else f"data_path_{args.n_docs:.0e}".replace("+0", ""), args)
    write_results(result, out)


def _run(tree: Path, args) -> dict:
    """One measuring process on `tree` (its xialpha imported first): its parts' CPU seconds."""
    command = [sys.executable, str(Path(__file__).resolve()), "--measure", "--reuters", str(args.reuters)]
    command += ["--quick"] if args.quick else []
    command += ["--n-docs", str(args.n_docs)] if args.n_docs else []
    environment = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"measuring {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _summary(side_runs: list[dict]) -> dict:
    parts = {part: statistics.median(run[part] for run in side_runs) for part in side_runs[0]}
    parts["data_path_s"] = statistics.median(sum(run[p] for p in DATA_PATH) for run in side_runs)
    parts["data_path_over_fit_task"] = statistics.median(
        (sum(run[p] for p in DATA_PATH) + run["held_out"]) / run["fit_task"] for run in side_runs
    )
    parts["data_path_over_fit"] = statistics.median(
        (sum(run[p] for p in DATA_PATH) + run["held_out"]) / run["fit"] for run in side_runs
    )
    return parts


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _spec(args):
    """The sweep measured: config/reuters.toml (its validation split, as shipped), scale.py's
    synthetic corpus of --n-docs, or with --quick the common quick sweep."""
    from xialpha.spec.sweep import load_spec, parse_spec

    if args.quick:
        return sweep_spec(args)
    if args.n_docs:
        sys.path.insert(0, str(Path(__file__).parent))
        from scale import SPEC

        return parse_spec(SPEC.format(n=args.n_docs), source="bench scale spec")
    spec = load_spec(REPO / "config" / "reuters.toml")
    return replace(spec, corpus=replace(spec.corpus, args={**spec.corpus.args, "path": str(args.reuters.resolve())}))


def measure(args) -> dict:
    """The parts' CPU seconds on the tree first on sys.path (imported here, after PYTHONPATH is set)."""
    from threadpoolctl import threadpool_limits

    from xialpha.corpora.parted import parted, plan_parts, read_part
    from xialpha.corpora.parts import carve_positions, census, finish, finishes, number_parts, stamped
    from xialpha.estimators import baselines
    from xialpha.features.blocks import count_part, feature_block, frequencies_of, stack, stem_part
    from xialpha.features.preprocessing import DocumentFrequencies
    from xialpha.jobs import tasks
    from xialpha.planning.plan import make_plan
    from xialpha.storage.rows import BatchColumns

    spec = _spec(args)
    seconds = dict.fromkeys(PARTS + FIT_PARTS, 0.0)

    def timed(part: str, function, *arguments):
        start = time.process_time()
        value = function(*arguments)
        seconds[part] += time.process_time() - start
        return value

    corpus_spec = spec.corpus
    loader = parted(corpus_spec.loader)
    start = time.process_time()
    parts = number_parts(
        [piece for part in plan_parts(corpus_spec.loader, corpus_spec.args) for piece in loader.refined(stamped(part))]
    )
    raws = [read_part(part) for part in parts]
    censuses = [census(raw) for raw in raws]
    train_split = corpus_spec.train_split
    carved = (
        carve_positions(
            [c.split_sizes.get(train_split, 0) for c in censuses],
            corpus_spec.validation_fraction,
            corpus_spec.validation_seed,
        )
        if corpus_spec.validation_fraction
        else [None] * len(raws)
    )
    chunks = [finish(raw, how, moved) for raw, how, moved in zip(raws, finishes(parts, censuses, train_split), carved)]
    seconds["read"] = time.process_time() - start
    train_counts = Counter(
        label
        for chunk in chunks
        for split, labels in zip(chunk.splits, chunk.labels)
        if split == train_split
        for label in labels
    )
    categories = corpus_spec.categories.choose(train_counts, "measured")
    held_out = spec.held_out_split
    base = spec.preprocessings[0].unstemmed()
    # the held-out split counted too where count_part counts only the rows it is told of (after 47.3)
    rows = {"held_out_split": held_out} if "held_out_split" in inspect.signature(count_part).parameters else {}
    unstemmed = [timed("count", partial(count_part, **rows), chunk, base, train_split) for chunk in chunks]
    data = []
    for preprocessing in spec.preprocessings:
        counts = (
            unstemmed
            if preprocessing.stemming == "none"
            else [timed("stem", stem_part, count, preprocessing.stemming) for count in unstemmed]
        )
        frequencies = [timed("vocabulary", frequencies_of, count) for count in counts]
        fitted = timed(
            "vocabulary", preprocessing.fit_frequencies, timed("vocabulary", DocumentFrequencies.merge, frequencies)
        )
        blocks = [
            timed("block", feature_block, chunk, train_split, held_out, categories, count, fitted)
            for chunk, count in zip(chunks, counts)
        ]
        data.append(timed("linear_data", tasks.linear_data, timed("stack", stack, blocks)))
    plan = make_plan(spec, categories, "measured", data[0].n, 0, set(), threads=2)
    inner = {"fit_one": 0.0}
    fit_one, fit_svm, holdout = tasks._fit_one, tasks.fit_svm, baselines.holdout

    def counted(part: str, function):
        def call(*arguments, **keywords):
            start = time.process_time()
            try:
                return function(*arguments, **keywords)
            finally:
                inner[part] = inner.get(part, 0.0) + time.process_time() - start

        return call

    tasks._fit_one, tasks.fit_svm, baselines.holdout = (
        counted("fit_one", fit_one),
        counted("fit", fit_svm),
        counted("held_out", holdout),
    )
    try:
        with threadpool_limits(1):
            for batch in plan.batches:
                columns = BatchColumns.of(
                    spec.id,
                    "measured",
                    plan.fingerprint,
                    spec.preprocessings[batch.preprocessing],
                    spec.kernels[batch.kernel],
                )
                rows = timed(
                    "fit_task", tasks.fit_batch, data[batch.preprocessing], batch, columns, spec.estimators, spec.tol
                )
                timed("pickle", pickle.dumps, rows)
    finally:
        tasks._fit_one, tasks.fit_svm, baselines.holdout = fit_one, fit_svm, holdout
    seconds["fit"], seconds["held_out"] = inner.get("fit", 0.0), inner.get("held_out", 0.0)
    seconds["estimates"] = inner["fit_one"] - seconds["fit"]
    seconds["bookkeeping"] = seconds["fit_task"] - inner["fit_one"]
    seconds["configurations"] = float(sum(len(batch.jobs) for batch in plan.batches))
    return seconds


if __name__ == "__main__":
    main()
