"""Selecting from a stored sweep: what `xialpha select` and `xialpha.select` both do.

The sweep's "ok" rows are read, the objective gets the sweep's default estimator unless one is
named, and the selection is made with the stored per-example indicators for its significance
tests, under a new id, or under the id of the same selection saved before. Storing it is
`xialpha.selection_saving.store_selection`'s: last, after a refit succeeded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from xialpha.errors import UserError
from xialpha.estimators.registry import always_on
from xialpha.planning.experiment import missing_rows
from xialpha.selection.edges import with_grid_edges
from xialpha.selection.objective import DEFAULT_ESTIMATOR, Objective
from xialpha.selection.options import SelectionOptions
from xialpha.selection.records import rows_to_save
from xialpha.selection.selected import Selection
from xialpha.selection.selector import default_estimator, select_stored
from xialpha.storage.arrow_schema import RESULT_COLUMNS
from xialpha.storage.schema import ESTIMATORS, ResultColumn, estimate_columns

UNREAD = (
    ResultColumn.RUN_ID,
    ResultColumn.ERROR_MESSAGE,
    ResultColumn.FIT_SECONDS,
    ResultColumn.ESTIMATE_SECONDS,
    ResultColumn.WORKER,
    ResultColumn.XIALPHA_VERSION,
    ResultColumn.CREATED_AT,
)

if TYPE_CHECKING:
    from xialpha.storage.contract import StoreQueries


@dataclass(frozen=True, eq=False)
class SweepSelection:
    """A selection from a stored sweep: the results it was made from, its objective, the
    Selection, its rows with where each choice lies on its C grid (`frame`: `at_edge` and `flat`,
    `xialpha.selection.edges`), whether it still needs storing, and (in `incomplete`) a sentence
    saying how much of the sweep is missing when rows of it are."""

    results: pd.DataFrame
    objective: Objective
    selection: Selection
    frame: pd.DataFrame
    to_store: bool
    incomplete: str | None = None


def select_sweep(store: StoreQueries, sweep_id: str, options: SelectionOptions) -> SweepSelection:
    """Select from the results of `sweep_id` in `store` as `options` ask; their estimator None:
    the sweep's default (`default_estimator`); with options.save, the id of the same selection
    stored before is reused (see `rows_to_save`). UserError when saving a selection of a sweep that
    misses rows (still running, or interrupted), unless options.partial."""
    incomplete = _incomplete(store, sweep_id)
    if incomplete and options.save and not options.partial:
        raise UserError(
            f"{incomplete}; select without saving, or partial=True to save a selection of the rows stored so far",
            parameter="save",
            mentions="partial=True",
        )
    results = store.read_results_df(sweep_id, columns=result_columns_read(options.estimator))
    objective = options.objective(default_estimator(results))
    selection = select_stored(
        store,
        results,
        objective,
        sweep_id=sweep_id,
        per_category=options.per_category,
        runners_up=options.runners_up,
        alpha=options.alpha,
    )
    selection, to_store = rows_to_save(store, selection, options.save)
    frame = with_grid_edges(selection, results)
    return SweepSelection(results, objective, selection, frame, to_store, incomplete)


def result_columns_read(estimator: str | None) -> list[str]:
    """The result columns a selection by `estimator` (None: the default, or the one every sweep
    computes) reads: all but the run's bookkeeping (UNREAD) and the estimates of the others."""
    wanted = {estimator} if estimator is not None else {DEFAULT_ESTIMATOR, always_on()[0]}
    others = {column for prefix in ESTIMATORS if prefix not in wanted for column in estimate_columns(prefix)}
    return [column.name for column in RESULT_COLUMNS if column.name not in others and column.name not in UNREAD]


def _incomplete(store: StoreQueries, sweep_id: str) -> str | None:
    """A sentence when sweep `sweep_id` misses rows its newest run planned, else None."""
    missing = missing_rows(store, sweep_id)
    if not missing or not missing[0]:
        return None
    return (
        f"sweep {sweep_id!r} is incomplete: {missing[0]} of its {missing[1]} rows are not stored (it is still "
        "running, or was interrupted: run it again to finish it)"
    )
