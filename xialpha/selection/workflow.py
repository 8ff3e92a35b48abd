"""Selecting from a stored sweep: what `xialpha select` and `xialpha.select` both do.

The sweep's "ok" rows are read, the objective gets the sweep's default estimator unless one is
named, the selection is made with the stored per-example indicators for its significance tests,
and its "selections" rows are made under a new id, or under the id of the same selection saved
before. Storing them is the caller's: the command stores them last, after a refit succeeded.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from xialpha.errors import UserError
from xialpha.jobs.experiment import missing_rows
from xialpha.selection.edges import with_grid_edges
from xialpha.selection.objective import Objective
from xialpha.selection.records import rows_to_save, selection_frame
from xialpha.selection.selector import default_estimator, select_stored


@dataclass(frozen=True, eq=False)
class SweepSelection:
    """A selection from a stored sweep: the results it was made from, its objective, its rows
    (`rows`; `frame`: as the store gives them back, with where each choice lies on its C grid:
    `at_edge` and `flat`, `xialpha.selection.edges`), whether they still need storing, and (in
    `incomplete`) a sentence saying how much of the sweep is missing when rows of it are."""

    results: pd.DataFrame
    objective: Objective
    rows: list[dict]
    frame: pd.DataFrame
    to_store: bool
    incomplete: str | None = None


def check_alpha(alpha: float) -> None:
    """UserError naming alpha= unless 0 < alpha < 1 (before the store is opened)."""
    if not 0 < alpha < 1:
        raise UserError(f"alpha=: must be between 0 and 1, got {alpha}")


def select_sweep(store, sweep_id: str, *, metric: str, estimator: str | None, rho: float, average: str,
                 smooth: bool, costs: dict, shared: bool, runners_up: int, alpha: float, save: bool,
                 partial: bool = False) -> SweepSelection:
    """Select from the results of `sweep_id` in `store`; estimator None: the sweep's default
    (`default_estimator`); smooth: rank by values averaged over C neighbours; costs: cost_fn and
    cost_fp where given; save: reuse the id of the same selection stored before (see `rows_to_save`).
    UserError when saving a selection of a sweep that misses rows (still running, or interrupted),
    unless `partial`."""
    incomplete = _incomplete(store, sweep_id)
    if incomplete and save and not partial:
        raise UserError(f"save=: {incomplete}; select without saving, or partial=True to save a selection of the "
                        "rows stored so far")
    results = store.read_results_df(sweep_id)
    objective = Objective(metric=metric, estimator=estimator or default_estimator(results), rho=rho, average=average,
                          smooth=smooth, **costs)
    selection = select_stored(store, results, objective, sweep_id=sweep_id, shared=shared, runners_up=runners_up,
                              alpha=alpha)
    rows, to_store = rows_to_save(store, selection, save)
    return SweepSelection(results, objective, rows, with_grid_edges(selection_frame(rows), results), to_store,
                          incomplete)


def _incomplete(store, sweep_id: str) -> str | None:
    """A sentence when sweep `sweep_id` misses rows its newest run planned, else None."""
    missing = missing_rows(store, sweep_id)
    if not missing or not missing[0]:
        return None
    return (f"sweep {sweep_id!r} is incomplete: {missing[0]} of its {missing[1]} rows are not stored (it is still "
            "running, or was interrupted: run it again to finish it)")
