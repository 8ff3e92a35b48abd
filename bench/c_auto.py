"""svm.C = "auto" (sweeps in rounds, xialpha.jobs.auto) against config/reuters.toml's fixed 8-C grid.

Three sweeps of the same spec, C apart, on one corpus each: the 8-C grid, C = "auto" (x4 ladders:
the shipped AUTO_C_FACTOR) and C = "auto" with x2 ladders (the factor the choice of x4 is measured
against). Per sweep: fits, rounds, wall seconds, the default selection's choices at their C range's
edge (select's at_edge) and its held-out regret: per category, the best held-out F1 of any stored row
of the three sweeps (same split, same data) minus the held-out F1 of the configuration the selection
chose, averaged over categories. Corpora: Reuters ModApte (config/reuters.toml: its 10 most frequent
categories, 2 preprocessings, held out its seeded validation split) and a 20-category synthetic corpus
(the same preprocessings, held out its test split). One in-process cluster (2 threads) for all sweeps,
after an untimed small sweep that compiles the solvers (the first timed sweep would pay for it).

    python bench/c_auto.py            # Reuters + 20-category synthetic
    python bench/c_auto.py --quick    # a 400-document synthetic corpus only
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time

from common import REUTERS_SPEC, make_parser, output_path, print_table, write_results
from distributed import Client

from xialpha.jobs import auto
from xialpha.jobs.sweep import run_sweep
from xialpha.selection.options import SelectionOptions
from xialpha.selection.workflow import select_sweep
from xialpha.spec.sweep import parse_spec
from xialpha.storage.contract import StoreQueries
from xialpha.storage.opening import open_store

SYNTHETIC = """[corpus]
loader = "synthetic"
n_docs = {n_docs}
n_categories = {n_categories}
seed = 5
train_split = "train"
test_split = "test"

[corpus.categories]
top_k = {n_categories}
"""


def _spec_text(kind: str, args) -> str:
    """config/reuters.toml, on Reuters (its corpus path made absolute) or with a synthetic [corpus]."""
    text = REUTERS_SPEC.read_text()
    if kind == "reuters":
        return re.sub(r'path = "[^"]*"', f'path = "{args.reuters}"', text)
    corpus = SYNTHETIC.format(n_docs=400 if args.quick else 6000, n_categories=3 if args.quick else 20)
    start, end = text.index("[corpus]"), text.index("[[preprocessing]]")
    return text[:start] + corpus + "\n" + text[end:]


def _sweep(client, store: StoreQueries, text: str, sweep_id: str, C: str, factor: float) -> dict:
    spec_text = re.sub(r"(?m)^C = .*$", f"C = {C}", text).replace('id = "reuters"', f'id = "{sweep_id}"')
    spec = parse_spec(spec_text, source=sweep_id, base_dir=str(REUTERS_SPEC.parent))
    auto.AUTO_C_FACTOR = factor
    start = time.perf_counter()
    summary = run_sweep(spec, store, client=client)
    wall = time.perf_counter() - start
    frame = select_sweep(store, sweep_id, SelectionOptions()).frame
    return {
        "fits": summary.fits,
        "wall_s": wall,
        "rounds": summary.auto.rounds if summary.auto else 1,
        "summary": summary.auto.describe() if summary.auto else None,
        "stops": summary.auto.stops if summary.auto else None,
        "at_edge": {row.category: row.at_edge for row in frame.itertuples() if row.at_edge is not None},
        "chosen": {row.category: (row.preprocessing_id, float(row.C)) for row in frame.itertuples()},
        "chosen_keys": dict(zip(frame["category"], frame["config_key"])),
    }


def _regret(store: StoreQueries, runs: dict[str, dict]) -> None:
    """Each run's mean held-out F1 regret against the best held-out F1 of any row of the runs."""
    rows = {name: store.read_results_df(name) for name in runs}
    best = {}
    for frame in rows.values():
        for category, value in frame.groupby("category")["holdout_f1"].max().items():
            best[category] = max(best.get(category, 0.0), float(value))
    for name, run in runs.items():
        held_out = rows[name].set_index("config_key")["holdout_f1"]
        regret = {c: best[c] - float(held_out[key]) for c, key in run.pop("chosen_keys").items()}
        run["regret"] = regret
        run["mean_regret"] = sum(regret.values()) / len(regret)


def main() -> None:
    args = make_parser(__doc__).parse_args()
    shipped = auto.AUTO_C_FACTOR
    grid = re.search(r"(?m)^C = (.*)$", REUTERS_SPEC.read_text()).group(1)
    result = {"benchmark": "c_auto", "quick": args.quick, "grid": grid, "auto_factor": shipped, "corpora": {}}
    corpora = ["synthetic"] if args.quick else ["reuters", "synthetic"]
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as client:
        with tempfile.TemporaryDirectory() as directory:  # compiles the solvers before any timed sweep
            quick = make_parser(__doc__).parse_args(["--quick"])
            _sweep(
                client,
                open_store(f"{directory}/store", create=True, writable=True),
                _spec_text("synthetic", quick),
                "warm",
                grid,
                shipped,
            )
        for kind in corpora:
            text = _spec_text(kind, args)
            with tempfile.TemporaryDirectory() as directory:
                store = open_store(f"{directory}/store", create=True, writable=True)
                uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
                runs = {
                    "grid": _sweep(client, store, text, "grid", grid, shipped),
                    "auto": _sweep(client, store, text, "auto", '"auto"', shipped),
                    "auto_x2": _sweep(client, store, text, "auto_x2", '"auto"', 2.0),
                }
                auto.AUTO_C_FACTOR = shipped
                _regret(store, runs)
            result["corpora"][kind] = {"uptime_before": uptime, "runs": runs}
            print_table(
                ["sweep", "fits", "rounds", "wall s", "at edge", "mean regret"],
                [
                    [name, r["fits"], r["rounds"], f"{r['wall_s']:.1f}", len(r["at_edge"]), f"{r['mean_regret']:.4f}"]
                    for name, r in runs.items()
                ],
                title=f"{kind}: C auto vs the grid {grid} ({uptime})",
            )
            for name, r in runs.items():
                if r["summary"]:
                    print(f"  {name}: {r['summary']}")
    result["uptime_after"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    write_results(result, output_path("c_auto", args))


if __name__ == "__main__":
    main()
