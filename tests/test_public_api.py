"""The public package: `xialpha.__all__` names exactly what `import xialpha` offers, lazily."""

from __future__ import annotations

import subprocess
import sys

from store_rows import T0, certify_by_hand, result_rows, saved_selections
from swept import small_spec

import xialpha
from xialpha.cli import main
from xialpha.storage.opening import open_store
from xialpha.storage.rows import RunRow


def test_every_public_name_resolves():
    for name in xialpha.__all__:
        assert getattr(xialpha, name) is not None, name
    assert set(xialpha.__all__) <= set(dir(xialpha))


def test_star_import_gives_the_workflow_and_nothing_private():
    namespace: dict = {}
    exec("from xialpha import *", namespace)
    public = {name for name in namespace if name != "__builtins__"}
    assert public == set(xialpha.__all__)
    assert {"sweep", "select", "certify", "report", "XiAlphaSearchCV"} <= public


def test_importing_xialpha_stays_light():
    code = (
        "import sys, xialpha; print(sorted(m for m in ('dask', 'distributed', 'sklearn', 'numba') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_store_ls_imports_no_pandas_dask_scikit_learn_numba_or_scipy_stats(tmp_path):
    """`xialpha store ls` only reads the store: it must start without the fitting stack (issue 33:
    scikit-learn alone cost a second of start-up when the kernel table moved next to its checks;
    scipy.stats, through the selection comparison's imports, 1.4 s under load) and without pandas
    (issue 44: 0.52 s of its 0.92 s at 10^5 configurations). The store holds every kind it lists
    (a sweep with a recorded run, so its missing rows are counted; selections, a certification, a
    drift check), listed as a table, CSV and JSON."""
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results(result_rows())
    assert main(["select", store.uri, "--estimator", "xa", "--save"]) == 0
    certify_by_hand(store, saved_selections(store))
    store.datasets.append("drift", [{"check_id": "c0", "run_id": "d", "sweep_id": "d1", "verdict": "drift"}])
    store.add_run(  # after the selection: the run planned rows r1 does not hold
        RunRow(
            sweep_id="r1",
            run_id="run-1",
            spec_toml=small_spec("r1"),
            spec_dir=str(tmp_path),
            data_fingerprint="fp",
            categories="acq,earn",
            xialpha_version=None,
            command="xialpha sweep",
            created_at=T0,
        )
    )
    code = (
        "import sys\nfrom xialpha.cli import main\n"
        "for fmt in ('table', 'csv', 'json'):\n    assert main(['store', 'ls', 'store', '--format', fmt]) == 0\n"
        "heavy = ('pandas', 'dask', 'distributed', 'sklearn', 'numba', 'scipy.stats')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    out = done.stdout.strip().splitlines()
    assert {"sweeps", "selections", "certifications", "drift"} <= {line.strip() for line in out}, done.stdout
    assert "rows missing" in done.stdout and '"kind": "drift"' in done.stdout, done.stdout
    assert out[-1] == "[]", done.stderr
