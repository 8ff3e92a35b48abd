"""The route of one sweep: which xialpha modules `xialpha sweep config/demo.toml` really runs.

Issue 32 (item 8) asks that docs/architecture.md name the modules a sweep passes from its spec
to a stored row, and that their number go down. This runs `xialpha sweep` of config/demo.toml
(with --quick: 400 documents and 2 C values, the same code paths: the linear and the kernel
path, held-out values, two rho) in a fresh store, with a profile hook installed in every process
of it (the driver, the fork server, the forked workers, every thread) through a
`sitecustomize` module on PYTHONPATH. The hook notes each xialpha module one of whose functions
(or methods, or comprehensions) runs; a module whose code only ran as it was imported (its body,
its class bodies) does not count.

The modules are grouped:

  command line   xialpha/cli.py and xialpha/commands/ (arguments, the summary the command prints)
  after storing  xialpha/selection/ and xialpha/reports/: the best configs the command prints
                 once the rows are stored
  processes      how worker processes start and progress is shown (jobs/worker_processes.py,
                 jobs/worker_preload.py, jobs/progress.py)
  route          the rest: from the spec to a stored row

    python bench/sweep_route.py            # config/demo.toml as it is
    python bench/sweep_route.py --quick    # 400 documents, 2 C values
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from common import REPO, make_parser, output_path, write_results

DEMO = REPO / "config" / "demo.toml"
PROCESSES = ("xialpha/jobs/worker_processes.py", "xialpha/jobs/worker_preload.py", "xialpha/jobs/progress.py")
HOOK = """
import os, sys, threading

_ROOT, _OUT = os.environ["XIALPHA_ROUTE_ROOT"], os.environ["XIALPHA_ROUTE_OUT"]
_seen = set()


def _profile(frame, event, arg):
    if event != "call":
        return
    code = frame.f_code
    if code.co_filename in _seen or not code.co_flags & 1:  # 1: CO_OPTIMIZED, not a module or class body
        return
    _seen.add(code.co_filename)
    if code.co_filename.startswith(_ROOT):
        with open(_OUT, "a") as out:
            out.write(code.co_filename[len(_ROOT):] + "\\n")


sys.setprofile(_profile)
threading.setprofile(_profile)
"""


def group(module: str) -> str:
    if module == "xialpha/cli.py" or module.startswith("xialpha/commands/"):
        return "command line"
    if module.startswith(("xialpha/selection/", "xialpha/reports/")):
        return "after storing"
    if module in PROCESSES:
        return "processes"
    return "route"


def main() -> None:
    args = make_parser(__doc__).parse_args()
    spec = DEMO.read_text()
    if args.quick:
        spec = spec.replace("n_docs = 3000", "n_docs = 400")
        spec = re.sub(r"(?m)^C = \[.*\]$", "C = [0.3, 3.0]", spec)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(HOOK)
        (Path(tmp) / "demo.toml").write_text(spec)
        out = Path(tmp) / "modules.txt"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([tmp, str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "XIALPHA_ROUTE_ROOT": str(REPO) + os.sep,
            "XIALPHA_ROUTE_OUT": str(out),
        }
        command = [sys.executable, "-m", "xialpha.cli", "sweep", str(Path(tmp) / "demo.toml")]
        done = subprocess.run([*command, "--store", str(Path(tmp) / "store")], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the sweep failed ({done.returncode}):\n{done.stderr[-3000:]}")
        modules = sorted(set(out.read_text().split()))
    groups: dict[str, list[str]] = {}
    for module in modules:
        groups.setdefault(group(module), []).append(module)
    print(f"xialpha modules whose functions run in `xialpha sweep {DEMO.relative_to(REPO)}`:")
    for name, names in groups.items():
        print(f"  {name} ({len(names)}): {' '.join(m.removeprefix('xialpha/') for m in names)}")
    print(f"all: {len(modules)}; the route from spec to stored row: {len(groups.get('route', []))}")
    write_results(
        {
            "benchmark": "sweep_route",
            "quick": args.quick,
            "spec": str(DEMO.relative_to(REPO)),
            "modules": len(modules),
            "route_modules": len(groups.get("route", [])),
            "groups": groups,
        },
        output_path("sweep_route", args),
    )


if __name__ == "__main__":
    main()
