"""The numba kernels a sweep's tasks call, each with the specialisations (argument types and
layouts) the tasks call it with, and `warm`, which compiles them, or loads them from numba's
on-disk cache, once per process before any task runs.

numba compiles a kernel for each new combination of argument types it meets (int32 or int64
indices, C- or Fortran-ordered arrays, read-only buffers), and keeps each specialisation in its
cache (`__pycache__` beside the source, or NUMBA_CACHE_DIR) under the source file's content
hash. A local cluster's workers are forked from a fork server that imported
`xialpha.jobs.worker_preload`, which calls `warm`: with the cache warm that loads every
specialisation in a fraction of a second, and a worker never compiles in a task. With the cache
cold (the first sweep after an install, or after a kernel's source changed) `warm` compiles
them, once for the machine, and the modules in two processes at once (`COLD_PROCESSES`): a
sweep's specialisations cost about 10 s of one core to compile (bench/first_run.py).

COMPILED_KERNELS lists each kernel a task calls from Python (the kernels they call are compiled with
them) and the signatures of its calls. tests/jobs/test_compiled.py runs a sweep's estimators on
a fresh process and fails when a call compiles a specialisation not listed here, or a listed one
is never called: when a kernel's arguments change, its signatures change here.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import subprocess
import sys
from dataclasses import dataclass

from numba import types
from numba.core.dispatcher import Dispatcher

COLD_PROCESSES = 2  # processes that compile a cold cache's modules at once (one of them this one)

_I32, _I64, _F64, _B = types.int32[::1], types.int64[::1], types.float64[::1], types.boolean[::1]
_C2, _F2 = types.float64[:, ::1], types.float64[::1, :]  # 2-d float64, C- and Fortran-ordered


@dataclass(frozen=True)
class CompiledKernel:
    """A compiled function `name` of module `module` and the argument types of each of its
    specialisations that tasks call. `name` is the dispatcher itself or a function without
    arguments returning it (a module that compiles its kernel when first asked for it)."""

    module: str
    name: str
    signatures: tuple[tuple[types.Type, ...], ...]

    def dispatcher(self) -> Dispatcher:
        found = getattr(importlib.import_module(self.module), self.name)
        return found if isinstance(found, Dispatcher) else found()


COMPILED_KERNELS = (
    # the linear solver: CSR features (scipy's int32 indices), labels, bounds, row statistics, w
    CompiledKernel(
        "xialpha.estimators.dcd",
        "solve_biased",
        (
            (_I32, _I32, _F64, _F64, _F64, _F64, _F64, _F64, _F64)
            + (types.float64,) * 4
            + (types.int64, types.int64, _F64),
        ),
    ),
    # kernel blocks of sparse features into a given block: symmetric K_UU, rectangular K_{rows, cols}
    # (the features a mask leaves to the sparse loops), and a block's frequent features scattered dense
    CompiledKernel("xialpha.estimators.kernel_rows", "_symmetric", ((_I32, _I32, _F64, _B, _C2),)),
    CompiledKernel("xialpha.estimators.kernel_rows", "_rectangular", ((_I32, _I32, _F64, _I32, _I32, _F64, _B, _C2),)),
    CompiledKernel("xialpha.estimators.kernel_rows", "_scatter_columns", ((_I32, _I32, _F64, _I64, _C2),)),
    # span: the nearest unbounded SV of each point; K_UU + eps I gathered with the undecided last
    CompiledKernel("xialpha.estimators.span", "_nearest_rows", ((_C2, _F64, _I64),)),
    CompiledKernel("xialpha.estimators.span", "_ridged_in_order", ((_C2, _I64, types.float64),)),
    # span's iterative path: its blocks' arrays turn Fortran-ordered once points drop out
    CompiledKernel("xialpha.estimators.span_iterative", "_project", ((_C2, _I64),)),
    CompiledKernel(
        "xialpha.estimators.span_iterative",
        "_cg_update",
        ((_C2, _C2, _C2, _C2, _C2, _I64, _F64, _F64), (_F2, _F2, _F2, _F2, _C2, _I64, _F64, _F64)),
    ),
    CompiledKernel(
        "xialpha.estimators.span_iterative",
        "certified_bounds",
        (
            (_C2, _F64, _C2, _C2, _I64, types.float64),
            (_F2, _F64, _F2, _F2, _I64, types.float64),
            (_C2, _F64, _F2, _C2, _I64, types.float64),
        ),
    ),
    # cutting text files into parts (table and svmlight corpora): the bytes read, read-only
    CompiledKernel(
        "xialpha.corpora.text_scan",
        "_compiled_scan",
        (
            (
                types.uint8[::1].copy(readonly=True),
                types.int64,
                types.boolean,
                types.int64,
                types.boolean,
                types.int64,
                _I64,
                types.int64[:, ::1],
            ),
        ),
    ),
)


def modules(kernels: tuple[CompiledKernel, ...] = COMPILED_KERNELS) -> list[str]:
    """The modules of `kernels`, in order: the unit `warm` compiles in one process (numba keeps one
    index file per kernel, which two processes compiling the same kernel would overwrite)."""
    return list(dict.fromkeys(kernel.module for kernel in kernels))


def warm(kernels: tuple[CompiledKernel, ...] = COMPILED_KERNELS, *, processes: int = COLD_PROCESSES) -> None:
    """Compile, or load from numba's cache, every specialisation of `kernels` in this process.

    The modules whose first specialisation is not cached are compiled in up to `processes`
    processes at once (this one and helpers started with this interpreter), balanced by their
    number of specialisations; this process then loads the helpers' work from the cache (and
    compiles what a failed helper left). A specialisation that fails to compile is skipped: the
    task that calls it compiles it again and reports the error with its config."""
    cold = [module for module in modules(kernels) if not _cached(next(k for k in kernels if k.module == module))]
    shares = _balanced(cold, kernels, max(1, min(processes, os.cpu_count() or 1)))
    helpers = [helper for helper in map(_helper, shares[1:]) if helper is not None]
    try:
        _compile([kernel for kernel in kernels if kernel.module in shares[0]])
    finally:
        for helper in helpers:
            helper.wait()
    _compile(kernels)


def _helper(modules: list[str]) -> subprocess.Popen | None:
    """A process of this interpreter compiling the kernels of `modules` into numba's cache (None
    where it cannot start: this process then compiles them)."""
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}  # this xialpha
    try:
        return subprocess.Popen(
            [sys.executable, "-m", __name__, *modules], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=environ
        )
    except OSError:
        return None


def _compile(kernels) -> None:
    for kernel in kernels:
        dispatcher = kernel.dispatcher()
        for signature in kernel.signatures:
            with contextlib.suppress(Exception):
                dispatcher.compile(signature)


def _cached(kernel: CompiledKernel) -> bool:
    """Whether numba's cache holds the first specialisation of `kernel` (False where it cannot tell)."""
    try:
        dispatcher = kernel.dispatcher()
        return dispatcher._cache.load_overload(kernel.signatures[0], dispatcher.targetctx) is not None
    except Exception:
        return False


def _balanced(names: list[str], kernels: tuple[CompiledKernel, ...], processes: int) -> list[list[str]]:
    """`names` (modules) dealt to `processes` shares, the most specialisations first to the lightest
    share; always at least one (possibly empty) share, the first for this process."""
    weight = {name: sum(len(k.signatures) for k in kernels if k.module == name) for name in names}
    shares: list[list[str]] = [[] for _ in range(max(1, min(processes, len(names))))]
    for name in sorted(names, key=lambda n: -weight[n]):
        min(shares, key=lambda share: sum(weight[n] for n in share)).append(name)
    return shares


if __name__ == "__main__":  # a helper of `warm`: compile the kernels of the modules named
    _compile(tuple(kernel for kernel in COMPILED_KERNELS if kernel.module in sys.argv[1:]))
