"""The public package: `xialpha.__all__` names exactly what `import xialpha` offers, lazily."""

from __future__ import annotations

import subprocess
import sys

import xialpha


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


def test_store_ls_imports_no_dask_scikit_learn_numba_or_scipy_stats(tmp_path):
    """`xialpha store ls` only reads the store: it must start without the fitting stack (issue 33:
    scikit-learn alone cost a second of start-up when the kernel table moved next to its checks;
    scipy.stats, through the selection comparison's imports, 1.4 s under load). The store exists,
    so its (empty) listing goes through the terminal tables."""
    (tmp_path / "store").mkdir()
    code = (
        "import sys\nfrom xialpha.cli import main\nmain(['store', 'ls', 'store'])\n"
        "print(sorted(m for m in ('dask', 'distributed', 'sklearn', 'numba', 'scipy.stats') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr
