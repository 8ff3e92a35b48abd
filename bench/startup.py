"""Benchmark: how long the reading commands take to start and run on a 3,200-config store (issue 41).

A real sweep (many_configs' spec: synthetic corpus, 200 categories x 8 C x 2 preprocessings,
linear, xi-alpha, span off, local cluster) makes the store once; two selections are saved on it
(per category and --global) so that compare has something to compare. Then each command runs as
a subprocess (`python -m xialpha.cli ...`, as many_configs runs them), `--repeat` times, the
median wall time kept beside the 1-minute load: select, select --global, report, report --html,
store ls, compare. Each also runs once under `python -X importtime`, which gives the seconds its
imports took in all, the ten slowest top-level imports (cumulative) and which of the heavy
libraries it loaded (numba, scikit-learn, scipy.stats, scipy, matplotlib, Dask). certify trains
on the corpus: only `import xialpha.commands.certify` is timed, with the libraries it loads.

With --before DIR (a checkout of the code before a change: `git archive <commit> | tar -x -C DIR`)
every command also runs with that code right after the current code's run on the same store,
so before and after compare within one run on a shared machine.

    python bench/startup.py                                   # writes bench/results/startup.json
    python bench/startup.py --store-dir /tmp/startup --before /tmp/old-checkout
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from many_configs import SPEC, SWEEP, run_command

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
CATEGORIES, C_VALUES, N_DOCS = 200, [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0], 4000
VOCABULARY = 20_000  # words of the synthetic corpus: room for 200 sets of topic words
TARGETS_S = {"select": 1.5, "store ls": 0.5, "report --html": 3.0}  # issue 41, on an idle machine
COMMANDS = {
    "select": ["select", "{store}"],
    "select --global": ["select", "--global", "{store}"],
    "report": ["report", "{store}"],
    "report --html": ["report", "--html", "{tmp}/report.html", "{store}"],
    "store ls": ["store", "ls", "{store}"],
    "compare": ["compare", "{a}", "{b}", "--store", "{store}"],
}
IMPORT_ONLY = {"certify": "xialpha.commands.certify"}
HEAVY = ("numba", "sklearn", "scipy.stats", "scipy", "matplotlib", "dask", "distributed", "pandas", "pyarrow")
STORED = re.compile(r"selection (sel-[0-9A-Za-z-]+)")  # "stored selection ID" or "selection ID is stored already"
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def import_profile(log: str) -> dict:
    """From a `-X importtime` log: the seconds of all imports, the ten slowest top-level ones
    (cumulative seconds) and which HEAVY libraries were imported."""
    rows = []
    for line in log.splitlines():
        match = IMPORT_LINE.match(line)
        if match:
            rows.append((int(match.group(2)) / 1e6, len(match.group(3)) // 2, match.group(4)))
    top = [(name, cumulative) for cumulative, depth, name in rows if depth == 0]
    loaded = {name for _, _, name in rows}
    return {
        "imports_s": round(sum(seconds for _, seconds in top), 3),
        "slowest": {name: round(seconds, 3) for name, seconds in sorted(top, key=lambda t: -t[1])[:10]},
        "heavy": [name for name in HEAVY if name in loaded],
    }


def profiled(argv: list[str], env: dict[str, str]) -> dict:
    """`python -X importtime -m xialpha.cli argv`'s import profile (the command's output is dropped)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "xialpha.cli", *argv],
        env=env,
        cwd=tempfile.gettempdir(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    return import_profile(done.stderr)


def imported(module: str, env: dict[str, str]) -> dict:
    """Wall seconds of `python -c "import module"` and its import profile."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        env=env,
        cwd=tempfile.gettempdir(),
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    return {"wall_s": round(time.perf_counter() - start, 3), **import_profile(done.stderr)}


def make_store(store: str, env: dict[str, str]) -> dict:
    """The sweep (when `store` does not exist yet: in this process, its local cluster's workers
    importing this checkout) and the two saved selections compare reads."""
    made = {}
    if not Path(store).exists():
        os.environ["PYTHONPATH"] = env["PYTHONPATH"]
        import xialpha

        spec = SPEC.format(n_docs=N_DOCS, n_categories=CATEGORIES, c_values=json.dumps(C_VALUES))
        spec = spec.replace("[corpus]\n", f"[corpus]\nvocabulary_size = {VOCABULARY}\n")
        start = time.perf_counter()
        xialpha.sweep(spec, store=store, quiet=True)
        made["sweep_s"] = round(time.perf_counter() - start, 1)
    ids = []
    for extra in ([], ["--global"]):
        _, _, output = run_command(["select", "--save", *extra, store], env)
        ids.append(STORED.search(output).group(1))
    made["selections"] = ids
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store-dir", type=Path, default=None, help="keep the store here and reuse it")
    parser.add_argument("--before", type=Path, default=None, help="a checkout of the code before, run beside")
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (the median is kept)")
    parser.add_argument("--out", type=Path, default=RESULTS / "startup.json")
    args = parser.parse_args()
    codes = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    envs = {name: {**os.environ, "PYTHONPATH": str(code), "COLUMNS": "100"} for name, code in codes.items()}
    result: dict = {
        "what": "wall seconds of each reading command on a 3,200-config store, and what it imports",
        "store": f"a real sweep: {CATEGORIES} synthetic categories x {len(C_VALUES)} C x 2 preprocessings, "
        f"{N_DOCS} documents, span off (bench/many_configs.py's spec)",
        "targets_idle_s": TARGETS_S,
        "load_average_at_start": os.getloadavg(),
        "code": {name: str(code) for name, code in codes.items()},
        "wall_s": {},
        "load_1min": {},
        "imports": {},
    }
    with tempfile.TemporaryDirectory(prefix="xialpha-startup-") as tmp:
        store = str(args.store_dir / "store") if args.store_dir else f"{tmp}/store"
        sys.path.insert(0, str(REPO))  # the sweep runs in this process, with this checkout's code
        result["made"] = made = make_store(store, envs["after"])
        a, b = made["selections"]
        for name, argv in COMMANDS.items():
            argv = [part.format(store=store, tmp=tmp, a=a, b=b) for part in argv]
            for code, env in envs.items():
                walls = [run_command(argv, env)[0] for _ in range(args.repeat)]
                load = os.getloadavg()[0]
                result["wall_s"].setdefault(code, {})[name] = round(statistics.median(walls), 3)
                result["load_1min"].setdefault(code, {})[name] = round(load, 2)
                result["imports"].setdefault(code, {})[name] = profile = profiled(argv, env)
                print(
                    f"{code:<6} {name:<16} {statistics.median(walls):6.2f} s  imports {profile['imports_s']:5.2f} s  "
                    f"load {load:5.2f}  heavy: {', '.join(profile['heavy']) or '-'}",
                    flush=True,
                )
                write(args.out, result)
        for name, module in IMPORT_ONLY.items():
            for code, env in envs.items():
                profile = imported(module, env)
                result["imports"].setdefault(code, {})[f"import {name}"] = profile
                print(f"{code:<6} import {name:<9} {profile['wall_s']:6.2f} s  heavy: {', '.join(profile['heavy'])}")
    write(args.out, result)
    print(f"wrote {args.out}")


def write(out: Path, result: dict) -> None:
    """Write what was measured so far, with the machine and the load now."""
    out.parent.mkdir(parents=True, exist_ok=True)
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    out.write_text(
        json.dumps({**result, "sweep_id": SWEEP, "load_average_now": os.getloadavg(), "machine": machine}, indent=1)
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
