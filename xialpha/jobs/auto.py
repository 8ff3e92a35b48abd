"""Sweeps with `svm.C = "auto"`: fitted in rounds, each round a plan of the C to fit next.

Round 1 computes each C path's starting C (`xialpha.estimators.c_ladder.starting_C`: per category,
preprocessing, kernel and j) on a worker, from the training data the fits use, and fits AUTO_C_START C
from it, AUTO_C_FACTOR apart. After each round the default selection (what `xialpha select` with no
option chooses) is made from the stored rows, and each category's chosen C path grows by one C where
that choice sits at its C range's edge, until the choice is interior, the estimate flat, the
solution settled, or the path has AUTO_C_LIMIT C values (selection's rule,
`xialpha.selection.c_extension.auto_steps`), or AUTO_C_ROUNDS rounds ran. The rounds are
`xialpha.selection.c_rounds.grow_ladders`' loop, the one `XiAlphaSearchCV` grows its ladders by: this
module gives it the fits of a round on the cluster and the rule's steps from the stored rows.

Every C fitted is stored as a grid's rows are, as its round ends; the corpus is vectorised once for
all rounds (`SweepData`). A resumed auto sweep's paths start from the C already stored (and the first
round's), and nothing stored is fitted again. On the linear path a later round's fit warm-starts from
the fit of the nearest C fitted in this run (kept on its worker between rounds; a C stored by an
earlier run starts cold).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import pandas as pd
from distributed import Client, Future

from xialpha.jobs import tasks
from xialpha.jobs.graph import SweepData, place_batches, placed
from xialpha.planning.plan import CPath, SweepPlan, make_plan
from xialpha.selection.c_extension import Step, auto_steps
from xialpha.selection.c_rounds import Round, grow_ladders
from xialpha.spec.grid import AUTO_C_FACTOR, AUTO_C_LIMIT, AUTO_C_ROUNDS
from xialpha.spec.sweep import SweepSpec
from xialpha.storage.contract import StoreQueries
from xialpha.storage.schema import ResultColumn

FALLBACK_C = 1.0  # a path's starting C when its data give none (one class only: its fits fail and say so)
NO_ESTIMATE = "no estimate"  # why a category's ladder stopped when none of its fits has an estimate


@dataclass
class AutoRounds:
    """What an auto sweep's rounds did: how many ran (and fitted), the C per path, and per category why its
    chosen path stopped (`xialpha.selection.c_extension`: interior, flat, settled, at the cap)."""

    rounds: int
    fitted_rounds: int  # rounds that fitted something (the others found their C stored)
    ladders: dict[CPath, tuple[float, ...]]
    stops: dict[str, str]

    def describe(self) -> str:
        """One line for the sweep's summary: rounds, C per path, and the categories by why they stopped."""
        sizes = [len(C) for C in self.ladders.values()]
        by_why: dict[str, list[str]] = {}
        for category, why in sorted(self.stops.items()):
            by_why.setdefault(why, []).append(category)
        stops = "; ".join(f"{why}: {', '.join(names)}" for why, names in sorted(by_why.items()))
        span = f"{min(sizes)}-{max(sizes)}" if sizes else "0"
        rounds = f"{self.rounds} round{'' if self.rounds == 1 else 's'}"
        if self.fitted_rounds < self.rounds:
            rounds += " (the rest stored)" if self.fitted_rounds else " (all stored)"
        return f'C "auto": {rounds}, {span} C per path; chosen C {stops or "none"}'


# fits a round's plan on its homes (tag: the round's, for task keys) from its warm starts, stores its
# rows and fills ends (`xialpha.jobs.graph.submit_plan`)
FitRound = Callable[[SweepPlan, list[str | None], str, dict[int, list[Future]], dict[int, Future]], None]


def run_rounds(
    client: Client,
    spec: SweepSpec,
    store: StoreQueries,
    data: SweepData,
    first: SweepPlan,
    fit_round: FitRound,
    *,
    force: bool = False,
    threads: int = 1,
) -> AutoRounds:
    """Fit the auto sweep of `spec` round by round (`first`: its plan without C, for its categories,
    data and sizes) as `xialpha.selection.c_rounds.grow_ladders` grows its C paths: each round
    `_Rounds.fit` plans and fits what is not stored, then `_next_steps` applies selection's rule to the
    stored rows. `fit_round(plan, homes, tag, warm, ends)` runs a round's batches on their homes and
    stores their rows. force: fit again the C stored before this run."""
    paths = [
        (p, k, category, j)
        for p in range(len(spec.preprocessings))
        for k in range(len(spec.kernels))
        for category in first.categories
        for j in spec.j
    ]
    stored = stored_ladders(store, spec, first)
    fitting = _Rounds(client, spec, store, data, first, fit_round, force, threads)
    grown = grow_ladders(
        starting_Cs(client, spec, data, first.categories, paths),
        fitting.fit,
        partial(_next_steps, store, spec, first),
        rounds=AUTO_C_ROUNDS,
        stored=stored,
    )
    stops = dict.fromkeys(first.categories, NO_ESTIMATE)
    stops |= {category: step.why for (_, _, category, _), step in grown.steps.items()}
    return AutoRounds(grown.rounds, fitting.fitted_rounds, grown.ladders, stops)


@dataclass
class _Rounds:
    """The rounds' fits of one auto sweep: the keys this run fitted, and each path's end fits kept on
    their workers for the next round's warm starts."""

    client: Client
    spec: SweepSpec
    store: StoreQueries
    data: SweepData
    first: SweepPlan
    fit_round: FitRound
    force: bool
    threads: int
    fitted_rounds: int = 0  # rounds that fitted something (the others found their C stored)
    fitted: set[str] = field(default_factory=set)
    sources: dict[CPath, dict[float, tuple[Future, str | None]]] = field(default_factory=dict)  # future, worker

    def fit(self, ladder_round: Round[CPath]) -> None:
        """Plan the C of `ladder_round`'s ladders not stored (not fitted in this run, with force) and fit them."""
        done = self.fitted if self.force else self.fitted | self.store.complete_keys(self.spec.id)
        first = self.first
        plan = make_plan(
            self.spec,
            first.categories,
            first.fingerprint,
            first.n_train,
            first.n_test,
            done,
            threads=self.threads,
            ladders=ladder_round.ladders,
        )
        if not plan.batches:
            return
        self.fitted_rounds += 1
        homes = _homes(plan, self.data, _workers(self.client))
        warm = _warm_starts(plan, self.sources, homes)
        ends: dict[int, Future] = {}
        self.fit_round(plan, homes, f"r{ladder_round.number}-", warm, ends)
        _keep_ends(plan, ends, homes, self.sources)
        self.fitted |= {key for batch in plan.batches for job in batch.jobs for _, key in job.keys}


def _next_steps(store: StoreQueries, spec: SweepSpec, first: SweepPlan) -> dict[CPath, Step]:
    """{path: its next Step} for each category's chosen path (`xialpha.selection.c_extension.auto_steps`
    of the stored rows); none when no row has an estimate."""
    results = sweep_rows(store, spec, first)
    if results.empty:
        return {}
    preprocessing, kernel = _indices(spec)
    return {
        (preprocessing[preprocessing_id], kernel[kernel_id], category, float(j)): step
        for (category, preprocessing_id, kernel_id, j), step in auto_steps(
            results, spec.id, AUTO_C_LIMIT, AUTO_C_FACTOR
        ).items()
    }


def starting_Cs(
    client: Client, spec: SweepSpec, data: SweepData, categories: list[str], paths: list[CPath]
) -> dict[CPath, float]:
    """{path: its starting C}, computed by one task per (preprocessing, kernel) on a worker, from the
    training data its fits use (the workers dealt round-robin)."""
    workers = _workers(client)
    pairs = sorted({(p, k) for p, k, _, _ in paths})
    homes = {pair: workers[i % len(workers)] if workers else None for i, pair in enumerate(pairs)}
    training = data.needed({(p, k, homes[p, k]) for p, k in pairs})
    wanted = [(category, j) for category in categories for j in spec.j]
    futures = {
        (p, k): client.submit(
            tasks.starting_Cs,
            training[p, k, homes[p, k]],
            wanted,
            FALLBACK_C,
            key=f"starting-C-{p}-{k}-{data.run_id}",
            pure=False,
            **placed(homes[p, k]),
        )
        for p, k in pairs
    }
    starts = {pair: future.result() for pair, future in futures.items()}
    return {(p, k, category, j): starts[p, k][category, j] for p, k, category, j in paths}


def sweep_rows(store: StoreQueries, spec: SweepSpec, first: SweepPlan, *, include_failed: bool = False) -> pd.DataFrame:
    """The stored rows of `spec`'s sweep on its data and categories (columns a selection reads)."""
    rows = store.read_results_df(spec.id, include_failed=include_failed)
    if rows.empty:
        return rows
    mine = (rows[ResultColumn.DATA_FINGERPRINT] == first.fingerprint) & rows[ResultColumn.CATEGORY].isin(
        first.categories
    )
    return rows[mine].reset_index(drop=True)


def stored_ladders(store: StoreQueries, spec: SweepSpec, first: SweepPlan) -> dict[CPath, set[float]]:
    """{path: the C stored for it}, ok or failed: a resumed auto sweep goes on from them."""
    rows = sweep_rows(store, spec, first, include_failed=True)
    preprocessing, kernel = _indices(spec)
    ladders: dict[CPath, set[float]] = {}
    for row in rows.itertuples(index=False):
        p, k = preprocessing.get(row.preprocessing_id), kernel.get(row.kernel_id)
        if p is not None and k is not None and float(row.j) in spec.j:
            ladders.setdefault((p, k, str(row.category), float(row.j)), set()).add(float(row.C))
    return ladders


def _indices(spec: SweepSpec) -> tuple[dict[str, int], dict[str, int]]:
    """({preprocessing id: its index}, {kernel id: its index}) in `spec`: a stored row's ids as a C path's."""
    return (
        {pre.id: p for p, pre in enumerate(spec.preprocessings)},
        {kern.id: k for k, kern in enumerate(spec.kernels)},
    )


def _homes(plan: SweepPlan, data: SweepData, workers: list[str]) -> list[str | None]:
    """Each batch's worker: as `place_batches` deals them, but a kernel-path batch goes where its Gram
    was made in an earlier round (or for the starting C), so no round makes a Gram again."""
    made = {(p, k): home for p, k, home in data.futures if not plan.is_linear(k)}
    dealt = place_batches(plan, workers)
    return [made.get((batch.preprocessing, batch.kernel), home) for batch, home in zip(plan.batches, dealt)]


def _warm_starts(
    plan: SweepPlan, sources: dict[CPath, dict[float, tuple[Future, str | None]]], homes: list[str | None]
) -> dict[int, list[Future]]:
    """{batch index: the end fits its linear-path C paths warm-start from}: per path, the fitted C
    nearest its first C in this batch. The batch moves to the worker that holds them (`homes` is
    changed), where they share its features."""
    warm: dict[int, list[Future]] = {}
    for i, batch in enumerate(plan.batches):
        if not plan.is_linear(batch.kernel):
            continue
        for job in batch.jobs:
            ends = sources.get((batch.preprocessing, batch.kernel, job.category, job.j))
            if not ends:
                continue
            future, home = ends[min(ends, key=lambda C: abs(math.log(C / job.C)))]
            if future not in warm.setdefault(i, []):
                warm[i].append(future)
                homes[i] = home
    return warm


def _keep_ends(
    plan: SweepPlan,
    ends: dict[int, Future],
    homes: list[str | None],
    sources: dict[CPath, dict[float, tuple[Future, str | None]]],
) -> None:
    """Record in `sources` each path's smallest and largest C fitted so far in this run, with the
    future of their fits (`ends`) and its worker; the others are let go."""
    for i, batch in enumerate(plan.batches):
        if i not in ends or not plan.is_linear(batch.kernel):
            continue
        for job in batch.jobs:
            path = (batch.preprocessing, batch.kernel, job.category, job.j)
            known = {**sources.get(path, {}), job.C: (ends[i], homes[i])}
            sources[path] = {C: known[C] for C in (min(known), max(known))}


def _workers(client: Client) -> list[str]:
    return sorted(client.scheduler_info().get("workers", {}))
