"""Benchmark: the nesting check of the store's JSON files on the worst text at each size limit
(issue 48, item 2): the marker (64 KiB), a claim (1 MiB) and a summary (64 MiB), each generated in
memory in four shapes: a quote followed by escaped quotes and never closed (what made the old
string-stripping regex backtrack in O(n^2)), one long run of backslashes, "[" nested all the way,
and "[\\"" repeated (a bracket and an escaped quote in turn). Per case the best of --repeats
wall times of `jsonfiles.nesting_depth` and its throughput; with --before DIR (a checkout of the
code before the change) the same on that code's check for the marker only, under a time cap,
since its time grows with the square of the length.

    python bench/json_depth.py                     # writes bench/results/json_depth.json
    python bench/json_depth.py --before /tmp/old-checkout
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's xialpha

from xialpha.storage.location import CLAIM_BYTES  # noqa: E402
from xialpha.storage.marker import MARKER_BYTES  # noqa: E402
from xialpha.storage.summary import SUMMARY_BYTES  # noqa: E402

LIMITS = {"marker": MARKER_BYTES, "claim": CLAIM_BYTES, "summary": SUMMARY_BYTES}
SHAPES = {
    "unclosed_escaped_quotes": lambda n: b'"' + b'\\"' * ((n - 1) // 2),
    "backslashes": lambda n: b'"' + b"\\" * (n - 1),
    "nested_brackets": lambda n: b"[" * n,
    "bracket_escaped_quote": lambda n: b'[\\"' * (n // 3),
}
BEFORE_CAP_S = 120


def _best(data: bytes, repeats: int) -> float:
    from xialpha.storage.jsonfiles import nesting_depth

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        nesting_depth(data)
        times.append(time.perf_counter() - start)
    return min(times)


def _before(code: Path) -> dict:
    """The old check on the marker-sized worst text, in a process ended after BEFORE_CAP_S seconds."""
    script = (
        "import time; from xialpha.storage.jsonfiles import nesting_depth; "
        f"data = bytes([34]) + bytes([92, 34]) * {(MARKER_BYTES - 1) // 2}; "
        "t = time.perf_counter(); nesting_depth(data); print(time.perf_counter() - t)"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONPATH": str(code)},
            capture_output=True,
            text=True,
            timeout=BEFORE_CAP_S,
        )
        return {"marker_unclosed_escaped_quotes_s": round(float(done.stdout), 3)}
    except subprocess.TimeoutExpired:
        return {"marker_unclosed_escaped_quotes_s": f"over {BEFORE_CAP_S} s (ended)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None, help="a checkout of the code before the change")
    args = parser.parse_args()
    cases: dict = {}
    for limit, size in LIMITS.items():
        for shape, make in SHAPES.items():
            data = make(size)
            seconds = _best(data, args.repeats)
            cases[f"{limit}.{shape}"] = {
                "bytes": len(data),
                "best_s": round(seconds, 4),
                "mb_per_s": round(len(data) / seconds / 1e6, 1),
            }
            print(f"{limit:8} {shape:24} {len(data):>12,} B {seconds:8.3f} s")
    result = {"benchmark": "json_depth", "repeats": args.repeats, "load_1min": os.getloadavg()[0], "cases": cases}
    if args.before:
        result["before"] = _before(args.before)
        print("before:", result["before"])
    out = REPO / "bench" / "results" / "json_depth.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
