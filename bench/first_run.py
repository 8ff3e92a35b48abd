"""The first sweep after `pip install` against the second: does a user's first sweep compile numba?

For each kind of install (`--install`, default both), in a fresh temporary directory:
  editable  a fresh copy of this tree's package sources (no __pycache__, so no numba cache beside
            them), installed into a fresh virtual environment with `pip install -e`;
  wheel     the same copy built and installed as a wheel (`pip install`, non-editable): the package
            lands in the venv's site-packages, where numba's cache goes beside it.
The venv's dependencies are this interpreter's site-packages, named by a .pth file (already
byte-compiled, as pip leaves what it installs; nothing is downloaded); they hold no numba cache of
xialpha's, and NUMBA_CACHE_DIR and PYTHONPATH are unset for the runs, as on a user's machine. So
the first run meets exactly what a fresh install's first run meets: every kernel uncompiled.

Each install is made twice: as the README's set-up command makes it (`pip install`, then `xialpha
compile`, which compiles the kernels into numba's cache: `compile_s`), and without the compile step
(the first sweep compiles them as its cluster starts). After each, `xialpha sweep SPEC --store DIR`
runs twice from the venv's own `xialpha` command, each
into a new store (the second recomputes everything), timed from outside (the interpreter's start
to its exit: what a user waits for). SPEC is config/reuters.toml as shipped (its corpus path from
--reuters); with --quick the bench's small synthetic sweep. Recorded per install: both walls,
`first_over_second` (target <= 1.2, issues 40 and 47), the fit and estimate task seconds of each run's
stored rows (compiling inside a task shows there), the numba specialisations in the installed
package's caches after each run (the second run adds none when the first compiled them all), and
whether each run said it was compiling (`said_compiling`: the first only).

    python bench/first_run.py                       # Reuters, both installs (about 4 sweeps' time)
    python bench/first_run.py --install wheel       # one kind of install
    python bench/first_run.py --quick               # the small synthetic sweep
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from common import QUICK_SPEC, REPO, REUTERS_SPEC, make_parser, output_path, print_table, write_results

from xialpha.jobs.compiled import COMPILING
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store

TARGET = 1.2
INSTALLS = ("editable", "wheel")
SOURCES = ("pyproject.toml", "README.md", "xialpha")  # what `pip install` of this tree reads


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--install", choices=(*INSTALLS, "both"), default="both", help="which installs to time")
    args = parser.parse_args()
    text = QUICK_SPEC if args.quick else _reuters_spec(args.reuters)
    installs = INSTALLS if args.install == "both" else (args.install,)
    runs = {kind: _first_and_second(kind, text, compile_step=True) for kind in installs}
    bare = {kind: _first_and_second(kind, text, compile_step=False) for kind in installs}
    result = {
        "benchmark": "first_run",
        "quick": args.quick,
        "spec": "bench quick spec" if args.quick else str(REUTERS_SPEC.relative_to(REPO)),
        "target_first_over_second": TARGET,
        "installs": runs,
        "installs_without_compile_step": bare,
        "first_over_second": max(run["first_over_second"] for run in runs.values()),
        "first_over_second_without_compile_step": max(run["first_over_second"] for run in bare.values()),
    }
    print_table(
        ["install", "compile_s", "first_s", "second_s", "first/second", "estimate_task_s 1st/2nd", "nbc 1st/2nd"],
        [
            [
                f"{kind}{'' if run['compile_s'] is not None else ' (no compile step)'}",
                run["compile_s"],
                run["walls_s"][0],
                run["walls_s"][1],
                run["first_over_second"],
                "/".join(f"{s:.1f}" for s in run["estimate_s"]),
                "/".join(str(n) for n in run["specialisations"]),
            ]
            for kind, run in [*runs.items(), *bare.items()]
        ],
    )
    print(
        f"first sweep / second: {result['first_over_second']:.2f} after the README's install, "
        f"{result['first_over_second_without_compile_step']:.2f} without its compile step (target <= {TARGET})"
    )
    write_results(result, output_path("first_run", args))


def _reuters_spec(reuters: Path) -> str:
    """config/reuters.toml with its corpus path made absolute (the spec is run from elsewhere)."""
    lines = REUTERS_SPEC.read_text().splitlines()
    return "\n".join(f'path = "{reuters.resolve()}"' if line.startswith("path = ") else line for line in lines) + "\n"


def _first_and_second(kind: str, text: str, *, compile_step: bool) -> dict:
    """A fresh `kind` install (with `xialpha compile` after pip when compile_step) and two sweeps of `text`."""
    with tempfile.TemporaryDirectory(prefix=f"xialpha-first-run-{kind}-") as directory:
        root = Path(directory)
        source = _copy_sources(root / "source")
        venv = _fresh_venv(root / "venv")
        started = time.perf_counter()
        _run(
            [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet"]
            + ["--no-deps"]
            + (["-e", str(source)] if kind == "editable" else [str(source)])
        )
        install_s = time.perf_counter() - started
        compile_s = None
        if compile_step:
            started = time.perf_counter()
            _run([str(venv / "bin" / "xialpha"), "compile"])
            compile_s = time.perf_counter() - started
        package = Path(
            _run([str(venv / "bin" / "python"), "-c", "import xialpha; print(xialpha.__file__)"]).stdout.strip()
        )
        package = package.parent
        spec_path = root / "spec.toml"
        spec_path.write_text(text)
        sweep_id = parse_spec(text, source=str(spec_path)).id
        walls, fits, estimates, specialisations, said = [], [], [], [], []
        for run in (1, 2):
            store = root / f"store{run}"
            started = time.perf_counter()
            done = _run([str(venv / "bin" / "xialpha"), "sweep", str(spec_path), "--store", str(store)])
            walls.append(time.perf_counter() - started)
            said.append(COMPILING in done.stderr)
            rows = open_store(str(store), create=True, writable=True).read_results_df(sweep_id)
            fits.append(float(rows["fit_seconds"].sum()))
            estimates.append(float(rows["estimate_seconds"].sum()))
            specialisations.append(sum(1 for _ in package.rglob("__pycache__/*.nbc")))
            print(f"{kind}{'' if compile_step else ' (no compile step)'}: run {run} {walls[-1]:.1f} s", flush=True)
    return {
        "install_s": install_s,
        "compile_s": compile_s,
        "walls_s": walls,
        "first_over_second": walls[0] / walls[1],
        "fit_s": fits,
        "estimate_s": estimates,
        "specialisations": specialisations,
        "said_compiling": said,
    }


def _copy_sources(target: Path) -> Path:
    """This tree's package sources without any cache (no __pycache__, no build leftovers)."""
    target.mkdir()
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(path, target / name)
    return target


def _fresh_venv(path: Path) -> Path:
    """A new virtual environment whose dependencies are this interpreter's site-packages."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(path)])
    site = _run(
        [str(path / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    ).stdout
    (Path(site.strip()) / "xialpha-bench-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path


def _run(command: list[str]) -> subprocess.CompletedProcess:
    environ = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    done = subprocess.run(command, cwd=tempfile.gettempdir(), env=environ, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:4])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


if __name__ == "__main__":
    main()
