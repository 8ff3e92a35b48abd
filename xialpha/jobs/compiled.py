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
sweep's specialisations cost about 10 s of one core to compile (bench/first_run.py). It says so
as it goes (`COMPILING`, and how many of them are done), which the sweep shows as its stage.

A damaged cache entry (a truncated, emptied or swapped data file, a garbled index: numba would
fail to unpickle it, or run another function's code) is found before anything is loaded
(`_damaged`): its index is removed and the kernel compiled again, with a note saying so; where
the index cannot be removed, `DamagedCache` names the directory and how to clear it.

The cache is where numba puts it: `__pycache__` beside the installed sources when they are
writable (compiled once per install, and trusted as the sources are: whoever can write them can
change the code), else numba's per-user directory; NUMBA_CACHE_DIR moves it (README).

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
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from numba import types
from numba.core.dispatcher import Dispatcher

from xialpha.errors import UserError

COMPILING = "compiling kernels once for this machine (`xialpha compile` does it at install)"
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

    def __str__(self) -> str:
        return f"{self.module}.{self.name}"


class DamagedCache(UserError):
    """numba's cache of a kernel is damaged and cannot be cleared here (its index is not writable)."""


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


@dataclass(frozen=True)
class Warmed:
    """What `warm` did: `specialisations` in all, of which `compiled` were compiled (those of the kernels
    whose cache was cold or damaged; the others were loaded from numba's cache), in `seconds` (wall,
    this process and its helpers), and the directories of numba's cache that hold them (its
    `__pycache__` beside each kernel's module, or under NUMBA_CACHE_DIR; none where numba cannot say)."""

    specialisations: int
    compiled: int
    seconds: float
    cache_dirs: tuple[str, ...]


def modules(kernels: tuple[CompiledKernel, ...] = COMPILED_KERNELS) -> list[str]:
    """The modules of `kernels`, in order: the unit `warm` compiles in one process (numba keeps one
    index file per kernel, which two processes compiling the same kernel would overwrite)."""
    return list(dict.fromkeys(kernel.module for kernel in kernels))


def warm(
    kernels: tuple[CompiledKernel, ...] | None = None,
    *,
    processes: int = COLD_PROCESSES,
    stage: Callable[[str], None] = lambda text: None,
    note: Callable[[str], None] = lambda text: None,
) -> Warmed:
    """Compile, or load from numba's cache, every specialisation of `kernels` (None: COMPILED_KERNELS)
    in this process; returns what it did (`Warmed`).

    A kernel whose cache entries are damaged has its index removed first (`note` says which,
    and where), and is compiled again; DamagedCache where the index cannot be removed. The
    kernels whose first specialisation is not cached are compiled in up to `processes`
    processes at once (this one and helpers started with this interpreter; a module's kernels in
    one), balanced by their number of specialisations, `stage` told COMPILING and the count done as
    they go (and "" at the end); this process then loads the helpers' work from the cache (and
    compiles what a failed helper left). A specialisation that fails to compile is skipped: the task that calls it
    compiles it again and reports the error with its config."""
    start = time.perf_counter()
    kernels = COMPILED_KERNELS if kernels is None else kernels
    for kernel in kernels:
        if (reason := _damaged(kernel)) is not None:
            note(_cleared(kernel, reason))
    cold = tuple(kernel for kernel in kernels if not _cached(kernel))
    total = sum(len(kernel.signatures) for kernel in cold)
    if cold:
        counted = _Count(total, stage)
        shares = _balanced(modules(cold), cold, max(1, min(processes, os.cpu_count() or 1)))
        helpers = [
            helper
            for helper in (_helper([str(k) for k in cold if k.module in share], counted) for share in shares[1:])
            if helper is not None
        ]
        try:
            _compile([kernel for kernel in cold if kernel.module in shares[0]], counted.one)
        finally:
            for process, reader in helpers:
                process.wait()
                reader.join()
        stage("")
    _compile(kernels)
    return Warmed(
        sum(len(kernel.signatures) for kernel in kernels),
        total,
        time.perf_counter() - start,
        tuple(sorted({path for kernel in kernels if (path := _cache_dir(kernel)) is not None})),
    )


class _Count:
    """Specialisations compiled so far out of `total`, told to `stage` as each one is done
    ("COMPILING: done/total", which `compiling_count` reads back)."""

    def __init__(self, total: int, stage: Callable[[str], None]):
        self.total, self.done, self._stage, self._lock = total, 0, stage, threading.Lock()
        stage(f"{COMPILING}: 0/{total}")

    def one(self) -> None:
        with self._lock:
            self.done = min(self.done + 1, self.total)
            self._stage(f"{COMPILING}: {self.done}/{self.total}")


def compiling_count(text: str) -> tuple[int, int] | None:
    """(done, total) of a stage text `warm` gives as it compiles; None for any other (its closing "")."""
    what, _, count = text.rpartition(": ")
    if what != COMPILING:
        return None
    done, _, total = count.partition("/")
    return int(done), int(total)


def _helper(names: list[str], counted: _Count) -> tuple[subprocess.Popen, threading.Thread] | None:
    """A process of this interpreter compiling the kernels `names` ("module.name") into numba's cache, and the
    thread counting the specialisations it says it compiled (None where it cannot start: this
    process then compiles them)."""
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}  # this xialpha
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", __name__, *names], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=environ
        )
    except OSError:
        return None

    def count() -> None:
        assert process.stdout is not None  # stdout=PIPE
        for _ in process.stdout:
            counted.one()

    reader = threading.Thread(target=count, name="xialpha-compile-count", daemon=True)
    reader.start()
    return process, reader


def _compile(kernels: Iterable[CompiledKernel], compiled: Callable[[], None] = lambda: None) -> None:
    """Compile (or load) each specialisation of `kernels`, calling `compiled` after each one."""
    for kernel in kernels:
        dispatcher = kernel.dispatcher()
        for signature in kernel.signatures:
            with contextlib.suppress(Exception):
                dispatcher.compile(signature)
            compiled()


def _damaged(kernel: CompiledKernel) -> str | None:
    """What is wrong with numba's cache entries of `kernel` (None: each is missing or loads as this
    kernel's code for its signature): an entry that fails to load, or loads another function or
    signature (a data file swapped or copied over another)."""
    try:
        dispatcher = kernel.dispatcher()
        cache = dispatcher._cache  # type: ignore[attr-defined]  # numba's private cache, not in its stubs
        context = dispatcher.targetctx
    except Exception:  # no cache to look at (not cached, or a kernel that fails to import): nothing damaged
        return None
    for signature in kernel.signatures:
        try:
            loaded = cache.load_overload(signature, context)
        except Exception as exc:
            return f"{type(exc).__name__} reading it"
        if loaded is None:
            continue
        if loaded.fndesc.qualname != dispatcher.py_func.__qualname__ or tuple(loaded.signature.args) != signature:
            return f"it holds {loaded.fndesc.qualname}{tuple(loaded.signature.args)}"
    return None


def _cleared(kernel: CompiledKernel, reason: str) -> str:
    """Remove the damaged cache index of `kernel` (its data files are then unused, and overwritten
    as it compiles again): what was done, as a note; DamagedCache where it cannot be removed."""
    cache = kernel.dispatcher()._cache  # type: ignore[attr-defined]  # numba's private cache, not in its stubs
    directory = cache.cache_path
    try:
        with contextlib.suppress(FileNotFoundError):
            os.remove(cache._cache_file._index_path)
    except OSError as exc:
        raise DamagedCache(
            f"numba's cache of {kernel} in {directory} is damaged ({reason}) and cannot be removed "
            f"({exc.strerror}): delete its *.nbi and *.nbc files (rm {directory}/*.nb[ic]), or set "
            "NUMBA_CACHE_DIR to a directory of your own"
        ) from None
    return f"numba's cache of {kernel} in {directory} was damaged ({reason}): compiling it again"


def _cache_dir(kernel: CompiledKernel) -> str | None:
    """The directory of numba's cache of `kernel` (None where numba cannot say)."""
    try:
        return str(kernel.dispatcher()._cache.cache_path)  # type: ignore[attr-defined]  # numba's private cache
    except Exception:
        return None


def _cached(kernel: CompiledKernel) -> bool:
    """Whether numba's cache holds the first specialisation of `kernel` (False where it cannot tell)."""
    try:
        dispatcher = kernel.dispatcher()
        cache = dispatcher._cache  # type: ignore[attr-defined]  # numba's private cache, not in its stubs
        return cache.load_overload(kernel.signatures[0], dispatcher.targetctx) is not None
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


if __name__ == "__main__":  # a helper of `warm`: compile the kernels named ("module.name"), a line each
    _compile(
        tuple(kernel for kernel in COMPILED_KERNELS if str(kernel) in sys.argv[1:]),
        lambda: print("compiled", flush=True),
    )
