"""`xialpha.jobs.compiled`: the specialisations `warm` compiles are exactly those a sweep's estimators
and loaders call, so a worker forked after `warm` never compiles in a task, and none is compiled for nothing.
A cold cache is compiled saying so, with its count, which the sweep shows while its cluster starts;
a damaged one is compiled again with a note, or is one error naming its directory.

Each side runs in a fresh interpreter (numba's specialisations are per process; its on-disk cache
only makes the second run fast) and reports every xialpha kernel's signatures."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

from xialpha.jobs import compiled, worker_processes
from xialpha.jobs.progress import Progress, ProgressMode

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


# --- a cold or damaged cache: tiny kernels of a module of their own, cached beside it -------

TINY_KERNELS = """
from numba import njit


@njit(cache=True)
def scaled(a):
    return 2.0 * a


@njit(cache=True)
def summed(a, b, c):
    return a + b + c
"""


@pytest.fixture
def tiny(tmp_path, monkeypatch, request):
    """Two tiny kernels (a module in tmp_path, its numba cache in tmp_path/__pycache__) and a
    function importing that module afresh (numba's specialisations are kept per dispatcher: a
    fresh one loads from the cache, or compiles), returning its CompiledKernels."""
    name = f"xialpha_tiny_kernels_{request.node.name.split('[')[-1].strip(']').replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TINY_KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    vector = compiled.types.float64[::1]
    kernels = (
        compiled.CompiledKernel(name, "scaled", ((vector,),)),
        compiled.CompiledKernel(name, "summed", ((vector, vector, vector), (compiled.types.float64,) * 3)),
    )

    def fresh():
        sys.modules.pop(name, None)
        return kernels

    fresh.name = name  # type: ignore[attr-defined]
    yield fresh
    sys.modules.pop(name, None)


def _warm(kernels) -> tuple[list[str], list[str]]:
    stages, notes = [], []
    compiled.warm(kernels, processes=1, stage=stages.append, note=notes.append)
    return stages, notes


def test_a_cold_cache_says_it_compiles_and_counts_then_a_warm_one_says_nothing(tiny):
    stages, notes = _warm(tiny())
    assert stages == [f"{compiled.COMPILING}: {done}/3" for done in range(4)] + [""] and notes == []
    assert _warm(tiny()) == ([], [])


def _truncated(cache: Path) -> None:
    data = next(cache.glob("*summed*.nbc"))
    data.write_bytes(data.read_bytes()[:100])


def _emptied(cache: Path) -> None:
    next(cache.glob("*summed*.nbc")).write_bytes(b"")


def _swapped(cache: Path) -> None:  # another kernel's code under summed's name (it takes 1 argument, not 3)
    shutil.copy(next(cache.glob("*scaled*.nbc")), next(cache.glob("*summed*.1.nbc")))


def _garbled_index(cache: Path) -> None:
    index = next(cache.glob("*summed*.nbi"))
    index.write_bytes(index.read_bytes()[:20] + b"\x00garbled" + index.read_bytes()[28:])


@pytest.mark.parametrize("damage", [_truncated, _emptied, _swapped, _garbled_index])
def test_a_damaged_cache_is_compiled_again_with_a_note(tiny, tmp_path, damage):
    _warm(tiny())
    damage(tmp_path / "__pycache__")
    stages, notes = _warm(tiny())
    assert len(notes) == 1 and "numba's cache of " in notes[0] and ".summed in " in notes[0], notes
    assert str(tmp_path / "__pycache__") in notes[0] and "compiling it again" in notes[0]
    summed = sys.modules[tiny.name].summed  # called as by a worker forked after `warm`
    assert summed(np.ones(2), np.ones(2), np.ones(2)).tolist() == [3.0, 3.0]
    assert _warm(tiny()) == ([], [])  # compiled again into the cache: whole now


def test_a_damaged_cache_that_cannot_be_cleared_is_one_error_naming_it(tiny, tmp_path, monkeypatch):
    _warm(tiny())
    _emptied(tmp_path / "__pycache__")

    def refused(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(os, "remove", refused)
    with pytest.raises(compiled.DamagedCache) as raised:
        _warm(tiny())
    message = str(raised.value)
    assert "\n" not in message and str(tmp_path / "__pycache__") in message and "NUMBA_CACHE_DIR" in message


def test_the_preload_reports_its_stage_then_each_note_and_error_once(tmp_path, monkeypatch):
    monkeypatch.setenv(worker_processes.PRELOAD_REPORT, str(tmp_path / "report.txt"))
    report = worker_processes.PreloadReport()
    assert report.stage() == "" and report.news() == ([], [])
    worker_processes.preload_reporter("stage")(f"{compiled.COMPILING}: 1/3")
    worker_processes.preload_reporter("note")("cache damaged\nin two lines")
    assert report.stage() == f"{compiled.COMPILING}: 1/3"
    worker_processes.preload_reporter("stage")("")
    worker_processes.preload_reporter("error")("cannot clear")
    assert report.stage() == "" and report.news() == (["cache damaged in two lines"], ["cannot clear"])
    assert report.news() == ([], [])


def test_the_sweep_shows_the_compiling_stage_while_its_cluster_starts_and_no_later():
    progress = Progress(None, ProgressMode.QUIET)
    said = [f"{compiled.COMPILING}: 0/3"]
    progress.set_stage("starting cluster")
    progress.follow(lambda: said[0], "starting cluster")
    progress._follow()
    assert progress.stage == f"{compiled.COMPILING}: 0/3"
    said[0] = ""  # compiled: the cluster goes on starting
    progress._follow()
    assert progress.stage == "starting cluster"
    progress.set_stage("loading corpus")
    said[0] = f"{compiled.COMPILING}: 1/3"  # (a late line) the stage has moved on
    progress._follow()
    assert progress.stage == "loading corpus"


def test_the_sweep_prints_the_preloads_notes_even_quiet_and_stops_at_its_error_in_one_line(tmp_path, monkeypatch):
    from xialpha.errors import UserError
    from xialpha.jobs.sweep import _report_preload

    monkeypatch.setenv(worker_processes.PRELOAD_REPORT, str(tmp_path / "report.txt"))
    worker_processes.preload_reporter("note")("numba's cache of k in /c was damaged (EOFError reading it): compiling")
    worker_processes.preload_reporter("error")("numba's cache of k in /c is damaged ... cannot be removed")
    shown = io.StringIO()
    with pytest.raises(UserError, match="cannot be removed"):
        _report_preload(worker_processes.PreloadReport(), Progress(None, ProgressMode.QUIET, stream=shown))
    assert shown.getvalue().count("\n") == 1 and "was damaged" in shown.getvalue()
