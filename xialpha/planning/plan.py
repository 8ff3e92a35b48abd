"""The sweep plan: which configurations to train, their store keys, and how fits are batched.

Pure bookkeeping, no Dask: the graph module turns a plan into tasks. One config is
(preprocessing, kernel, category, C, j); it yields one stored row per rho, each with its own key.
Linear kernels are batched as C paths (warm starts) — cut into segments that run at once when the
cluster has more worker slots than there are paths (`cut_paths`); kernel-path fits in batches of
MAX_BATCH at most.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from xialpha.estimators import LINEAR
from xialpha.estimators.registry import HELD_OUT, keyed_settings
from xialpha.spec.grid import AUTO_C_LIMIT
from xialpha.spec.sweep import SweepSpec
from xialpha.storage.rows import config_key

MAX_BATCH = 16  # fits per task at most, so results still arrive (and are stored) steadily
KEY_BYTES = 230  # a planned row's share of its FitJob and its key: 228 measured (tracemalloc, 40,000 keys)
CPath = tuple[int, int, str, float]  # a C path: (preprocessing index, kernel index, category, j)


@dataclass(frozen=True)
class FitJob:
    """One SVM training and its estimates; keys maps each rho to the row's config key."""

    category: str
    C: float
    j: float
    keys: tuple[tuple[float, str], ...]


@dataclass(frozen=True)
class Batch:
    """Fits that share one training data (features or Gram): preprocessing index, kernel index, the
    jobs; on the linear path one C path of one (category, j), in ascending C."""

    preprocessing: int
    kernel: int
    jobs: tuple[FitJob, ...]
    whole_path: bool = False  # the jobs are every C the sweep fits of their C path (not cut, none done before)


@dataclass(frozen=True)
class PathCut:
    """How the linear path's C paths became tasks: `paths` C paths (one per preprocessing, linear
    kernel, category and j) of `longest` C at most, in `segments` tasks, for `slots` worker threads."""

    paths: int
    longest: int
    segments: int
    slots: int

    def describe(self) -> str:
        """One line for a dry run: how the paths were cut and why."""
        paths = f"{_count(self.paths, 'C path')} of up to {self.longest} C"
        threads = _count(self.slots, "worker thread")
        if self.segments == self.paths:
            why = f"{threads} for {_count(self.paths, 'path')}" if self.paths >= self.slots else "one C per path"
            return f"{paths}: each path one task, warm-started along C ({why})"
        return (
            f"{paths} cut into {self.segments} segments that run at once ({threads} for "
            f"{_count(self.paths, 'path')}); each segment warm-starts along its C after a cold first C"
        )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass
class SweepPlan:
    """Everything the graph needs, and the counts a dry run prints."""

    spec: SweepSpec
    categories: list[str]
    fingerprint: str
    n_train: int
    n_test: int
    batches: list[Batch] = field(default_factory=list)
    n_keys: int = 0
    n_skipped: int = 0
    path_cut: PathCut | None = None  # None when no linear-path fit is pending

    @property
    def n_fits(self) -> int:
        return sum(len(b.jobs) for b in self.batches)

    @property
    def data_pairs(self) -> list[tuple[int, int]]:
        """The (preprocessing, kernel) training data that pending fits need."""
        return sorted({(b.preprocessing, b.kernel) for b in self.batches})

    def is_linear(self, kernel: int) -> bool:
        """True when kernel index `kernel` trains on features (the linear path), not on a Gram."""
        return self.spec.kernels[kernel].name == LINEAR

    def gram_bytes(self) -> int:
        """Bytes of one float64 Gram of the kernel path: train (n, n) plus test-vs-train (m, n) with holdout."""
        return 8 * self.n_train * (self.n_train + (self.n_test if self.spec.estimators.needs(HELD_OUT) else 0))

    def grams_per_preprocessing(self) -> dict[int, int]:
        """{preprocessing: Gram matrices its pending kernel-path fits need} (the linear one they derive from, plus
        one per kernel)."""
        derived: dict[int, int] = {}
        for p, k in self.data_pairs:
            if not self.is_linear(k):
                derived[p] = derived.get(p, 1) + 1
        return derived

    def peak_gram_bytes_per_worker(self, workers: int) -> int:
        """The most Gram memory one worker holds: a worker keeps the Grams of its preprocessings'
        kernel-path fits (`xialpha.jobs.graph` runs them where their Gram lives), and preprocessings
        are spread over the workers, ceil(P / workers) of them per worker at most."""
        per_preprocessing = sorted(self.grams_per_preprocessing().values(), reverse=True)
        if not per_preprocessing:
            return 0
        share = math.ceil(len(per_preprocessing) / max(workers, 1))
        return self.gram_bytes() * sum(per_preprocessing[:share])


def planned_keys(spec: SweepSpec, n_categories: int) -> int:
    """The rows a plan of `spec` over `n_categories` categories holds (an auto sweep's at its C limit),
    counted before it is built: each takes KEY_BYTES of this process's memory at least."""
    C = AUTO_C_LIMIT if spec.C_auto else len(spec.C)
    grid = len(spec.preprocessings) * len(spec.kernels) * len(spec.j) * C
    return grid * n_categories * len(spec.estimators.rhos)


def estimator_settings(spec: SweepSpec) -> dict:
    """The estimator settings that change stored numbers, part of every config key."""
    return {"tol": spec.tol, **keyed_settings(spec.estimators.values)}


def make_plan(
    spec: SweepSpec,
    categories: list[str],
    fingerprint: str,
    n_train: int,
    n_test: int,
    done: set[str],
    *,
    force: bool = False,
    threads: int = 1,
    ladders: dict[CPath, tuple[float, ...]] | None = None,
) -> SweepPlan:
    """All configs of the spec (with `ladders`, the C of each path from it instead of spec.C: an
    auto sweep's round, `xialpha.jobs.auto`); those whose every key is in `done` are skipped unless force."""
    plan = SweepPlan(spec, categories, fingerprint, n_train, n_test)
    pending: dict[tuple[int, int], list[FitJob]] = {}
    partial: set[tuple[int, int, str, float]] = set()  # C paths of which some C were done before
    for p, k, job in planned_jobs(spec, categories, fingerprint, ladders):
        plan.n_keys += len(job.keys)
        if not force and all(key in done for _, key in job.keys):
            plan.n_skipped += len(job.keys)
            partial.add((p, k, job.category, job.j))
            continue
        pending.setdefault((p, k), []).append(job)
    n_fits = sum(len(jobs) for jobs in pending.values())
    size = spec.batch_size or min(MAX_BATCH, max(1, math.ceil(n_fits / (8 * max(threads, 1)))))
    paths = [(p, k, path) for (p, k), jobs in pending.items() if plan.is_linear(k) for path in c_paths(jobs)]
    if paths:
        segments = cut_paths([path for _, _, path in paths], threads)
        plan.path_cut = PathCut(
            len(paths), max(len(path) for _, _, path in paths), sum(len(cut) for cut in segments), max(threads, 1)
        )
        plan.batches.extend(
            Batch(
                p, k, segment, whole_path=len(cut) == 1 and ladders is None and (p, k, *_path_of(path)) not in partial
            )
            for (p, k, path), cut in zip(paths, segments)
            for segment in cut
        )
    for (p, k), jobs in pending.items():
        if plan.is_linear(k):
            continue
        for start in range(0, len(jobs), size):
            plan.batches.append(Batch(p, k, tuple(jobs[start : start + size])))
    return plan


def planned_jobs(
    spec: SweepSpec, categories: list[str], fingerprint: str, ladders: dict[CPath, tuple[float, ...]] | None = None
) -> Iterator[tuple[int, int, FitJob]]:
    """Every config of the spec on data `fingerprint`: (preprocessing index, kernel index, its FitJob);
    with `ladders`, each path's C from it (none where it has no entry) instead of spec.C."""
    settings = estimator_settings(spec)
    for p, pre in enumerate(spec.preprocessings):
        for k, kernel in enumerate(spec.kernels):
            for category in categories:
                for j in spec.j:
                    for C in spec.C if ladders is None else ladders.get((p, k, category, j), ()):
                        keys = tuple(
                            (
                                rho,
                                config_key(
                                    preprocessing_id=pre.id,
                                    kernel_id=kernel.id,
                                    C=C,
                                    j=j,
                                    category=category,
                                    data_fingerprint=fingerprint,
                                    rho=rho,
                                    **settings,
                                ),
                            )
                            for rho in spec.estimators.rhos
                        )
                        yield p, k, FitJob(category, C, j, keys)


def experiment_keys(spec: SweepSpec, categories: list[str], fingerprint: str) -> set[str]:
    """The store keys of every row the spec's sweep of `categories` on data `fingerprint` stores."""
    return {key for _, _, job in planned_jobs(spec, categories, fingerprint) for _, key in job.keys}


def _path_of(path: tuple[FitJob, ...]) -> tuple[str, float]:
    """The (category, j) of a C path."""
    return path[0].category, path[0].j


def c_paths(jobs: list[FitJob]) -> list[tuple[FitJob, ...]]:
    """The jobs of one (preprocessing, linear kernel) as C paths: one per (category, j), ascending
    in C, so each fit warm-starts from the one before (`xialpha.jobs.tasks.fit_batch`)."""
    paths: dict[tuple[str, float], list[FitJob]] = {}
    for job in jobs:
        paths.setdefault((job.category, job.j), []).append(job)
    return [tuple(sorted(path, key=lambda job: job.C)) for path in paths.values()]


def cut_paths(paths: list[tuple[FitJob, ...]], slots: int) -> list[list[tuple[FitJob, ...]]]:
    """Each C path as one segment, or, when the paths are fewer than `slots` worker threads, cut into
    ceil(slots / paths) contiguous segments of nearly equal length (at most one per C), so every
    thread has a task: segment i of a path starts cold at its first C and warm-starts the rest.
    A whole path warm-starts every fit but runs on one thread; its segments finish in the time of
    their longest one (`bench/c_axis.py` measures both)."""
    per_path = 1 if len(paths) >= slots else math.ceil(slots / len(paths))
    cut = []
    for path in paths:
        count = min(per_path, len(path))
        bounds = [-(-i * len(path) // count) for i in range(count + 1)]  # longer segments first, at the cheaper small C
        cut.append([path[bounds[i] : bounds[i + 1]] for i in range(count)])
    return cut
