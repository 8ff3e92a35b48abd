"""Running a benchmark script's quick run from the tests (tests/test_bench_quick.py,
tests/test_bench_campaign.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"


def run_quick(name: str, out: Path) -> dict:
    completed = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), "--quick", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, f"{name} --quick failed:\n{completed.stderr[-3000:]}"
    return json.loads(out.read_text())
