"""Benchmark: `xialpha sweep SPEC --dry-run` on a directory corpus of 8,000 files (issue 49.6: a user's
8 groups of 20 Newsgroups took 17-28 s; the target is 3 s).

A 20 Newsgroups "bydate"-like tree is generated in a temporary folder: 8 category folders under a
train and a test folder, `--files` small text files in all (100-500 words from a 20,000-word
vocabulary, about 4 KB each). The spec sweeps it with 2 preprocessings x 8 C, linear, on a local
cluster. The dry run runs as a subprocess (`python -m xialpha.cli sweep ... --dry-run`) `--repeat`
times; each run's wall seconds, CPU seconds (user + system, of the command's process) and the
1-minute load before it are kept, and the median wall. With --before DIR (a checkout of the code
before a change: `git archive <commit> | tar -x -C DIR`) each run of the current code is followed by
one of that code, so both see the same machine.

    python bench/dry_run.py                                  # writes bench/results/dry_run.json
    python bench/dry_run.py --before /tmp/old-checkout
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, make_parser, output_path, write_results

CATEGORIES = (
    "alt.atheism",
    "comp.graphics",
    "rec.autos",
    "rec.sport.hockey",
    "sci.med",
    "sci.space",
    "soc.religion.christian",
    "talk.politics.guns",
)
TRAIN_SHARE = 0.6  # of the files, in the train folder (20 Newsgroups bydate: 60 %)
TARGET_S = 3.0  # issue 49.6, on a corpus of 8,000 files
SPEC = """
[sweep]
id = "news8"
[corpus]
loader = "directory"
path = "{path}"
train_split = "train"
test_split = "test"
[[preprocessing]]
idf = ["log", "none"]
min_df = 2
[[kernels]]
name = "linear"
[svm]
C = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0]
[cluster]
kind = "local"
"""


def write_corpus(root: Path, n_files: int, seed: int = 0) -> int:
    """The bydate-like tree of `n_files` files under `root`; its bytes."""
    rng = random.Random(seed)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(20_000)]
    per_category = n_files // len(CATEGORIES)
    n_bytes = 0
    for category in CATEGORIES:
        for i in range(per_category):
            split = "train" if i < per_category * TRAIN_SHARE else "test"
            folder = root / f"20news-bydate-{split}" / category
            folder.mkdir(parents=True, exist_ok=True)
            body = " ".join(rng.choices(words, k=rng.randint(100, 500)))
            text = f"From: user{i}@example.com\nSubject: {' '.join(rng.choices(words, k=5))}\n\n{body}"
            n_bytes += (folder / str(50_000 + i)).write_text(text, encoding="utf-8")
    return n_bytes


def dry_run(code: Path, spec: Path, store: Path) -> dict:
    """One dry run of the checkout at `code`: wall and CPU seconds, the load before it, its output."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "xialpha.cli", "sweep", str(spec), "--store", str(store), "--dry-run"],
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"dry run of {code} failed ({done.returncode}): {done.stderr.strip()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "load_1min": round(load, 2), "output": done.stdout}


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--files", type=int, default=8000, help="files of the generated corpus (default 8000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each checkout (default 3)")
    parser.add_argument("--before", type=Path, default=None, help="a checkout of the code before the change")
    args = parser.parse_args()
    n_files, repeat = (400, 1) if args.quick else (args.files, args.repeat)
    codes = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    runs: dict[str, list[dict]] = {name: [] for name in codes}
    with tempfile.TemporaryDirectory(prefix="dry_run_bench") as tmp:
        root = Path(tmp) / "news"
        n_bytes = write_corpus(root, n_files)
        spec = Path(tmp) / "news.toml"
        spec.write_text(SPEC.format(path=root), encoding="utf-8")
        for _ in range(repeat):
            for name, code in codes.items():
                runs[name].append(dry_run(code, spec, Path(tmp) / "store"))
                print(f"{name}: {runs[name][-1]['wall_s']:.2f} s wall, {runs[name][-1]['cpu_s']:.2f} s CPU")
    result = {
        "benchmark": "dry_run",
        "quick": args.quick,
        "files": n_files,
        "corpus_mib": round(n_bytes / 2**20, 1),
        "target_s": TARGET_S,
        "median_wall_s": {name: statistics.median(run["wall_s"] for run in found) for name, found in runs.items()},
        "median_cpu_s": {name: statistics.median(run["cpu_s"] for run in found) for name, found in runs.items()},
        "runs": {
            name: [{k: v for k, v in run.items() if k != "output"} for run in found] for name, found in runs.items()
        },
        "output": {name: found[-1]["output"] for name, found in runs.items()},
    }
    write_results(result, output_path("dry_run", args))


if __name__ == "__main__":
    main()
