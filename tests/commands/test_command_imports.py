"""The reading commands import what they use (issue 41): select, report (terminal and --html),
store ls, compare and certify load no numba, no scikit-learn, no Dask and no matplotlib, and
scipy only where a test is computed, then only scipy.special (never scipy.stats, whose import cost
select seconds of start-up under load). Each runs in a fresh interpreter on a store whose run
record holds a real spec (select parses it to count missing rows) and whose examples let select
and compare compute their significance tests."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from store_rows import result_rows

from xialpha.storage.opening import open_store

FITTING = ("numba", "sklearn", "dask", "distributed", "matplotlib", "scipy.stats", "scipy.sparse", "scipy.linalg")
SPEC = """
[sweep]
id = "r1"
[corpus]
loader = "synthetic"
n_docs = 300
n_categories = 3
seed = 1
train_split = "train"
[[preprocessing]]
min_df = [1, 2]
[svm]
C = [0.1, 1.0, 10.0, 100.0]
[estimators]
rho = [1.0, 2.0]
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """Hand-built results (3 categories x 2 preprocessings x 4 C x 2 rho, with holdout), the xi-alpha
    indicators behind their counts, a run record with a real spec, and two saved selections."""
    from xialpha.cli import main

    root = tmp_path_factory.mktemp("imports")
    store = open_store(str(root / "store"), create=True, writable=True)
    rows = result_rows()
    store.datasets.write_results(rows)
    examples = []
    for row in rows:
        bits = np.zeros(row["n"], dtype=bool)
        bits[: row["xa_d_pos"]] = True  # errors among the positives (the first n_pos), then the negatives
        bits[row["n_pos"] : row["n_pos"] + row["xa_d_neg"]] = True
        keys = {name: row[name] for name in ("sweep_id", "config_key", "category")}
        examples.append({**keys, "estimator": "xa", "bits": bits})
    store.datasets.write_examples(examples)
    store.datasets.append(
        "sweeps",
        [{"sweep_id": "r1", "run_id": "run1", "spec_toml": SPEC, "data_fingerprint": "fp", "categories": "a,b,c"}],
    )
    for extra in ([], ["--global"]):
        assert main(["select", store.uri, "--estimator", "xa", "--save", "--partial", *extra]) == 0
    return store.uri


def _loaded(code: str, cwd) -> dict:
    """What running `code` in a fresh interpreter imported: {module: bool} for FITTING and scipy."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps({{m: m in sys.modules for m in {[*FITTING, 'scipy']!r}}}))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", ["select", "report", "store", "compare", "certify"])
def test_importing_a_reading_command_loads_neither_the_fitting_stack_nor_scipy(command, tmp_path):
    loaded = _loaded(f"import xialpha.commands.{command}", tmp_path)
    assert not [name for name, present in loaded.items() if present], loaded


@pytest.mark.parametrize(
    ("argv", "tests"),
    [
        (["select", "{store}", "--estimator", "xa"], True),
        (["select", "{store}", "--estimator", "xa", "--global"], True),
        (["report", "{store}"], False),
        (["report", "{store}", "--html", "{tmp}/page.html"], False),
        (["store", "ls", "{store}"], False),
        (["compare", "r1", "r1", "--store", "{store}"], True),
    ],
)
def test_a_reading_command_runs_without_the_fitting_stack(store, tmp_path, argv, tests):
    """scipy (special) is loaded by the commands that compute a test, and by no other."""
    argv = [part.format(store=store, tmp=tmp_path) for part in argv]
    loaded = _loaded(f"from xialpha.cli import main\nassert main({argv!r}) == 0", tmp_path)
    assert not [name for name in FITTING if loaded[name]], loaded
    assert loaded["scipy"] == tests, loaded
