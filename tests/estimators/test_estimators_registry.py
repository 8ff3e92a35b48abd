"""The estimator registry: adding an estimator is its module and one registry entry, nothing else.

The test copies the package, writes a toy estimator's module into the copy and its entry into the
copy's registry (only those two files change), and runs the copy in a fresh interpreter: its spec
key, stored columns and per-example indicators, `xialpha select --estimator`, `xialpha report`
and `XiAlphaSearchCV(estimate=)` all know it, and configurations that do not use it keep their
config keys. The other tests check what the registry derives for the estimators xialpha has.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

from xialpha.estimators import registry
from xialpha.planning.plan import estimator_settings
from xialpha.selection.objective import ESTIMATOR_CHOICES
from xialpha.spec.sweep import parse_spec
from xialpha.storage.arrow_schema import RESULT_COLUMNS, SELECTION_COLUMNS

TOY_MODULE = '''
"""The margin estimate: every training example inside the margin (y f(x) < 1) counts as an error."""

from xialpha.estimators.metrics import Estimate


def margin_estimate(fit) -> Estimate:
    """Examples with y f(x) < 1 of a fit counted as errors: a pessimistic leave-one-out bound."""
    return Estimate.from_indicator("margin", fit.y, fit.y * fit.decision < 1)
'''

TOY_ENTRY = """
def _margin(fit, data: FitData):
    from xialpha.estimators.margin import margin_estimate

    return margin_estimate(fit)


ESTIMATORS += (
    Estimator("margin", "examples inside the margin", FIT, _margin, settings=(
        Setting("margin", False, "count the examples inside the margin", keyed_at_default=False),), columns=(
        ExtraColumn("margin_inside", "int", "margin: examples inside the margin",
                     lambda estimate, settings: int(estimate.d)),)),
)
"""

SPEC = """
[sweep]
id = "toy"
estimator = "margin"
[corpus]
loader = "synthetic"
n_docs = 160
n_categories = 2
seed = 5
[svm]
C = [0.5, 5.0]
[estimators]
margin = true
"""

SCRIPT = """
import json, sys
from pathlib import Path

import numpy as np
from distributed import Client
from sklearn.svm import SVC

import xialpha
from xialpha.cli import main
from xialpha.planning.plan import estimator_settings
from xialpha.search import XiAlphaSearchCV
from xialpha.spec.sweep import parse_spec
from xialpha.storage.arrow_schema import results_schema
from xialpha.storage.opening import open_store

spec_text = sys.argv[1]
found = {"package": xialpha.__file__, "columns": [c for c in results_schema().names if c.startswith("margin")]}
without = spec_text.replace("margin = true", "").replace('estimator = "margin"', "")
found["settings without it"] = estimator_settings(parse_spec(without, source="s"))
spec = parse_spec(spec_text, source="s")
found["enabled"] = list(spec.estimators.enabled)
with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
    result = xialpha.sweep(spec_text, store="store", client=client)
rows = result.results
found["stored"] = bool(rows["margin_error"].notna().all() and (rows["margin_inside"] == rows["margin_d_pos"]
                                                              + rows["margin_d_neg"]).all())
keys = list(rows["config_key"])
found["indicators"] = len(open_store("store", create=True, writable=True).read_examples(keys, "margin", sweep_id="toy"))
found["select"] = main(["select", "store", "--estimator", "margin", "--save"])
found["report"] = main(["report", "store", "--estimator", "margin"])
X = np.random.default_rng(0).normal(size=(40, 3))
y = (X[:, 0] > 0).astype(int)
search = XiAlphaSearchCV(SVC(kernel="rbf", gamma=1.0), {"C": [0.5, 5.0]}, estimate="margin").fit(X, y)
found["search"] = sorted(k for k in search.cv_results_ if k.startswith("margin"))
print("RESULT " + json.dumps(found))
"""


def test_adding_an_estimator_is_its_module_and_its_registry_entry(tmp_path):
    copy = tmp_path / "package"
    shutil.copytree(REPO / "xialpha", copy / "xialpha", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "xialpha" / "estimators" / "margin.py").write_text(TOY_MODULE, encoding="utf-8")
    registry_file = copy / "xialpha" / "estimators" / "registry.py"
    source = registry_file.read_text(encoding="utf-8")
    anchor = "\nBY_NAME = "
    assert anchor in source
    registry_file.write_text(source.replace(anchor, TOY_ENTRY + anchor, 1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), SPEC],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.split("RESULT ", 1)[1])
    assert found["package"] == str(copy / "xialpha" / "__init__.py")
    assert found["columns"] == [
        f"margin_{name}" for name in ("d_pos", "d_neg", "error", "recall", "precision", "f1")
    ] + ["margin_inside"]
    assert found["enabled"] == ["xa", "apparent", "span", "margin"]
    assert found["stored"] and found["indicators"] == 4  # 2 categories x 2 C, one rho
    assert found["select"] == 0 and found["report"] == 0
    assert found["search"] == [f"margin_{name}" for name in ("d_neg", "d_pos", "error", "f1", "precision", "recall")]
    # the configs that do not use it keep their keys: the settings a key holds are the ones before
    assert found["settings without it"] == estimator_settings(
        parse_spec(SPEC.replace("margin = true", "").replace('estimator = "margin"', ""), source="s")
    )


def test_the_schema_holds_each_registered_estimator_and_its_own_columns():
    names = [c.name for c in RESULT_COLUMNS]
    for entry in registry.ESTIMATORS:
        assert f"{entry.name}_error" in names and f"{entry.name}_d_pos" in names
        for column in entry.columns:
            assert column.name in names
    assert names.index("xa_d") > names.index("xa_ext_f1")  # estimates first, then their own columns
    assert "estimate_f1" in {c.name for c in SELECTION_COLUMNS}


def test_only_selectable_estimators_are_choices_and_apparent_is_none():
    assert "apparent" not in ESTIMATOR_CHOICES and set(ESTIMATOR_CHOICES) == set(registry.NAMES) - {"apparent"}
    assert (
        registry.by_preference(registry.NAMES)[0] == "span" and registry.by_preference(registry.NAMES)[-1] == "apparent"
    )


def test_settings_come_from_the_registry_with_their_rules():
    spec = parse_spec(
        '[corpus]\nloader = "synthetic"\ntrain_split = "train"\ntest_split = "test"\n'
        "[estimators]\nkfold = 3\nholdout = true\n",
        source="s",
    )
    assert spec.estimators["kfold"] == 3 and spec.estimators.enabled == ("xa", "apparent", "holdout", "kfold", "span")
    assert spec.estimators.needs(registry.HELD_OUT) and not spec.estimators.needs(registry.KERNEL_ROWS)
    assert estimator_settings(spec) == {
        "tol": 1e-3,
        "span": True,
        "xa_ext_depth": 0,
        "exact_loo": False,
        "loo_prune": "support",
        "holdout": True,
        "kfold": 3,
        "bootstrap": 0,
    }


@pytest.mark.parametrize("name", registry.NAMES)
def test_every_entry_names_what_it_needs(name):
    entry = registry.estimator(name)
    assert entry.needs in registry.NEEDS
    assert entry.switch is None or entry.switch.key in registry.DEFAULT_SETTINGS
