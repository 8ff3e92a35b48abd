"""Benchmark: a real sweep of 10^4 configurations, then every reading command on its store (issue 33).

bench/many_configs.py times the reading commands on stores replicated from a small sweep (no
corpus behind the copies, so nothing to certify). This runs the sweep itself: many_configs' spec
(synthetic corpus, n_categories categories x the C grid x 2 preprocessings, linear, xi-alpha, span
off) on a local cluster of 2 workers, as `xialpha sweep` runs it (the sweep compacts its files and
stores its summary as it ends). Recorded: its wall, fits, fits per second and busy share (compute
seconds of the tasks / (wall x worker threads)); then, each as a subprocess with its peak RSS and
the 1-minute load beside it: select, select --global, select --save, report, report --html,
store ls, and certify of the saved selection on the corpus' sealed test split.

    python bench/real_sweep.py                                  # 100 categories x 50 C x 2 = 10^4 configs
    python bench/real_sweep.py --categories 20 --n-c 5 --n-docs 1500   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from many_configs import SPEC, run_command

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
RESULTS = REPO / "bench" / "results"
COMMANDS = {
    "select": ["select"],
    "select --global": ["select", "--global"],
    "select --save": ["select", "--save"],
    "report": ["report"],
    "report --html": ["report", "--html", "{tmp}/report.html"],
    "store ls": ["store", "ls"],
    "certify": ["certify", "--selection", "{selection}", "--test-split", "test", "--draws", "1000"],
}
STORED = re.compile(r"stored selection (sel-[0-9A-Za-z-]+)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--categories", type=int, default=100)
    parser.add_argument("--n-c", type=int, default=50, help="C values, log-spaced from 0.01 to 100")
    parser.add_argument("--n-docs", type=int, default=20_000, help="documents of the synthetic corpus")
    parser.add_argument("--out", type=Path, default=RESULTS / "real_sweep.json")
    args = parser.parse_args()
    import xialpha

    c_values = [float(f"{c:.3g}") for c in np.logspace(-2, 2, args.n_c)]
    spec = SPEC.format(n_docs=args.n_docs, n_categories=args.categories, c_values=json.dumps(c_values))
    with tempfile.TemporaryDirectory(prefix="xialpha-real-") as tmp:
        store = f"{tmp}/store"
        load_start = os.getloadavg()
        start = time.perf_counter()
        swept = xialpha.sweep(spec, store=store, quiet=True)
        wall = time.perf_counter() - start
        summary = swept.summary
        configs = len(c_values) * 2 * args.categories
        result = {
            "benchmark": "real_sweep",
            "spec": spec,
            "configs": configs,
            "sweep": {
                "wall_s": wall,
                "fits": summary.fits,
                "stored": summary.ok,
                "failed": summary.failed,
                "fits_per_s": summary.fits / wall,
                "task_seconds": summary.task_seconds,
                "threads": summary.threads,
                "busy_share": summary.task_seconds / (wall * summary.threads) if summary.threads else None,
                "load_1min_before": load_start[0],
                "load_1min_after": os.getloadavg()[0],
            },
            "wall_s": {},
            "peak_rss_gb": {},
            "load_1min": {},
        }
        print(
            f"sweep: {configs:,} configs, {summary.fits:,} fits in {wall:.1f} s "
            f"({summary.fits / wall:.0f} fits/s, busy {result['sweep']['busy_share']:.0%})",
            flush=True,
        )
        env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
        selection = None
        for name, argv in COMMANDS.items():
            argv = [part.format(tmp=tmp, selection=selection) for part in argv]
            load = os.getloadavg()[0]
            seconds, rss, output = run_command([*argv, store], env)
            if name == "select --save":
                selection = STORED.search(output).group(1)
            result["wall_s"][name], result["peak_rss_gb"][name], result["load_1min"][name] = seconds, rss, load
            print(f"  {name:<16} {seconds:7.2f} s  {rss:5.2f} GB  (load {load:.1f})", flush=True)
    result["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "date": time.ctime()}
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
