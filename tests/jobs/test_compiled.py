"""`xialpha.jobs.compiled`: the specialisations `warm` compiles are exactly those a sweep's estimators
and loaders call, so a worker forked after `warm` never compiles in a task, and none is compiled for nothing.

Each side runs in a fresh interpreter (numba's specialisations are per process; its on-disk cache
only makes the second run fast) and reports every xialpha kernel's signatures."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

from xialpha.jobs import compiled

REPORT = """
import json, sys
from numba.core.dispatcher import Dispatcher
found = {}
for name, module in list(sys.modules.items()):
    if name.startswith("xialpha"):
        for attr, value in vars(module).items():
            if isinstance(value, Dispatcher) and value.__module__ == name and value.signatures:
                found[f"{name}.{attr}"] = sorted(str(tuple(s)) for s in value.signatures)
from xialpha.jobs.compiled import COMPILED_KERNELS
for kernel in COMPILED_KERNELS:  # kernels a module compiles when first asked for them are not its attributes
    signatures = kernel.dispatcher().signatures if kernel.module in sys.modules else []
    if signatures:
        found[f"{kernel.module}.{kernel.name}"] = sorted(str(tuple(s)) for s in signatures)
print(json.dumps(found))
"""
# What a sweep's tasks call: a C path of warm-started linear fits per category with span's dense
# and iterative paths (their blocks turn Fortran-ordered as points drop out), and a text file
# cut into parts, as the table and svmlight loaders do.
CALLS = """
import sys, tempfile
from xialpha.corpora.loading import make_synthetic
from xialpha.corpora.text_scan import cut_points
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.features.preprocessing import Preprocessing
from xialpha.jobs import tasks

corpus = make_synthetic(n_docs=1500, n_categories=4, seed=1)
counts = corpus.category_counts()
categories = sorted(counts, key=lambda c: -counts[c])[:2]
data = tasks.linear_data(tasks.vectorize(corpus, Preprocessing(min_df=2), "train", "test", categories))
for category in categories:
    fit = None
    for C in (0.1, 1.0, 10.0):
        fit = fit_svm(TrainingProblem(data.y_train[category], X=data.X), SVMParameters(C, tol=1e-3), warm_start=fit)
        for method in ("dense", "iterative"):
            span_estimate(fit, method=method)
with tempfile.NamedTemporaryFile("w", suffix=".csv") as file:
    file.write("id,text\\n" + "".join(f"{i},word {i}\\n" for i in range(100)))
    file.flush()
    cut_points(file.name, 1000, 100, quotes=True)
"""


def _signatures(code: str) -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", code + REPORT],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
        timeout=600,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def warmed() -> dict[str, list[str]]:
    return _signatures("from xialpha.jobs.compiled import warm\nwarm()\n")


@pytest.fixture(scope="module")
def called() -> dict[str, list[str]]:
    return _signatures(CALLS)


def test_no_call_compiles_a_specialisation_that_warm_did_not(warmed, called):
    beyond = {name: sorted(set(sigs) - set(warmed.get(name, ()))) for name, sigs in called.items()}
    assert {name: sigs for name, sigs in beyond.items() if sigs} == {}


def test_every_listed_specialisation_is_called(called):
    listed = {
        f"{kernel.module}.{kernel.name}": {str(tuple(s)) for s in kernel.signatures}
        for kernel in compiled.COMPILED_KERNELS
    }
    unused = {name: sorted(sigs - set(called.get(name, ()))) for name, sigs in listed.items()}
    assert {name: sigs for name, sigs in unused.items() if sigs} == {}


def test_a_cold_cache_is_compiled_in_two_processes_each_module_in_one():
    shares = compiled._balanced(compiled.modules(), compiled.COMPILED_KERNELS, 2)
    assert len(shares) == 2 and sorted(m for share in shares for m in share) == sorted(compiled.modules())
    weights = [sum(len(k.signatures) for k in compiled.COMPILED_KERNELS if k.module in share) for share in shares]
    assert max(weights) - min(weights) <= max(len(k.signatures) for k in compiled.COMPILED_KERNELS)
    assert compiled._balanced([], compiled.COMPILED_KERNELS, 2) == [[]]
