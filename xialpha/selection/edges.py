"""Where a choice lies on its C grid: at the grid's edge (the optimum may lie beyond it), or on a
flat estimate (no signal at any C).

A chosen configuration's C grid is the C values of its category's results that differ from it
only in C (same preprocessing, kernel and j) and have an estimate. `at_edge` is "low" when the
choice is the grid's smallest C and its estimate is no worse than the next C's (the curve does
not rise away from the edge), "high" likewise at the largest C: widen the grid that way. A
choice at the largest C whose fit has no bounded support vector is not "high": no alpha is at its
bound C, so every larger C gives the same solution (a hard margin) and widening finds nothing; it
is `settled`, as a `C = "auto"` ladder that reached it is. at_edge is
None otherwise (a choice at the edge by its neighbours' average alone, against its own estimate's
slope, says nothing of beyond), on a grid of one C, and on a flat estimate: when every C of the grid has the same
estimate (to VALUE_DECIMALS), the smallest C was taken as the simplest, and what is needed is
more documents (a signal), not another grid; `flat` says so.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
import pandas as pd

from xialpha.selection.selected import Selection
from xialpha.selection.selector import rho_mask
from xialpha.selection.smoothing import VALUE_DECIMALS
from xialpha.storage.schema import ResultColumn

# a chosen configuration's C grid: results alike but in C
GRID = (ResultColumn.CATEGORY, ResultColumn.PREPROCESSING_ID, ResultColumn.KERNEL_ID, ResultColumn.J)


class Edge(StrEnum):
    """The values of at_edge besides None: widen the grid to smaller (LOW), larger (HIGH) C."""

    LOW = "low"
    HIGH = "high"


class EdgeColumn(StrEnum):
    """The columns `with_grid_edges` adds to a selection's rows (shown, never stored)."""

    AT_EDGE = "at_edge"  # an Edge or None
    FLAT = "flat"  # bool: the estimate is the same at every C of the grid
    SETTLED = "settled"  # bool: at the largest C with no bounded support vector


_VALUE = "_value"  # the estimates' column in `grid_edges`: the objective's value (not a stored column)


def with_grid_edges(selection: Selection, results: pd.DataFrame) -> pd.DataFrame:
    """The rows of `selection` (one per category) with the EdgeColumns of each row's choice on its
    C grid in `results` (the sweep's rows): `at_edge` ("low", "high" or None), `flat` and
    `settled` (at the largest C with no bounded support vector, where every larger C fits the same)."""
    frame = selection.rows.copy()
    if frame.empty:
        empty = {EdgeColumn.AT_EDGE: object, EdgeColumn.FLAT: bool, EdgeColumn.SETTLED: bool}
        return frame.assign(**{str(column): pd.Series(dtype=kind) for column, kind in empty.items()})
    objective = selection.objective
    at = rho_mask(results, objective.rho)
    estimates = pd.DataFrame({column: results[column].to_numpy()[at] for column in (*GRID, ResultColumn.C)})
    # the columns the grids need, not every column; a configuration decided by bounds (span_prune) is a
    # point of its grid at its best value: below the choice whenever `select` chose (it checks that)
    estimates[_VALUE] = objective.value_bounds(results)[0][at]
    at_edge, flat, settled = grid_edges(frame, estimates.dropna(subset=[_VALUE]), _VALUE, objective.maximise)
    frame[EdgeColumn.AT_EDGE] = pd.Series(at_edge, index=frame.index, dtype=object)
    frame[EdgeColumn.FLAT] = pd.Series(flat, index=frame.index, dtype=bool)
    frame[EdgeColumn.SETTLED] = pd.Series(settled, index=frame.index, dtype=bool)
    return frame


def grid_edges(
    chosen: pd.DataFrame, estimates: pd.DataFrame, value: str, maximise: bool
) -> tuple[list[Edge | None], np.ndarray, np.ndarray]:
    """(at_edge, flat, settled) of each row of `chosen` (columns GRID and C; N_BOUNDED_SV, when it
    has it, applies the hard-margin rule) on its C grid: the rows of `estimates` alike in GRID, whose
    `value` column holds finite estimates (larger better when `maximise`; several at one C are
    averaged). at_edge: (rows,) an Edge or None; flat, settled: (rows,) bool (settled: at the
    largest C with no bounded support vector; all False without N_BOUNDED_SV)."""
    # by grid, then C
    points = estimates.groupby([*GRID, ResultColumn.C], sort=True, dropna=False)[value].mean().reset_index()
    grid = points.groupby(list(GRID), sort=False, dropna=False).ngroup().to_numpy()
    C = points[ResultColumn.C].to_numpy(dtype=float)
    rounded = points[value].to_numpy(dtype=float).round(VALUE_DECIMALS) * (1.0 if maximise else -1.0)
    start = np.r_[True, grid[1:] != grid[:-1]].nonzero()[0]  # each grid's first point (in grid order)
    end = np.r_[start[1:], len(points)]  # one past its last
    second, before_last = np.minimum(start + 1, end - 1), np.maximum(end - 2, start)
    lowest = np.minimum.reduceat(rounded, start) if len(points) else rounded
    highest = np.maximum.reduceat(rounded, start) if len(points) else rounded
    grids = points.loc[start, list(GRID)].reset_index(drop=True)
    grids["_n"] = end - start
    grids["_flat"] = lowest == highest
    grids["_low"] = C[start]
    grids["_rises_from_low"] = rounded[start] >= rounded[second]
    grids["_high"] = C[end - 1]
    grids["_rises_to_high"] = rounded[end - 1] >= rounded[before_last]
    found = chosen[list(GRID)].merge(grids, on=list(GRID), how="left")  # keeps chosen's order
    chosen_C = chosen[ResultColumn.C].to_numpy(dtype=float)
    n = found["_n"].fillna(0).to_numpy()
    on_grid = n >= 2
    flat = on_grid & found["_flat"].fillna(False).to_numpy(dtype=bool)
    sloped = on_grid & ~flat
    low = (
        sloped
        & np.isclose(chosen_C, found["_low"].to_numpy(dtype=float))
        & found["_rises_from_low"].fillna(False).to_numpy(dtype=bool)
    )
    at_largest = sloped & ~low & np.isclose(chosen_C, found["_high"].to_numpy(dtype=float))
    high = at_largest & found["_rises_to_high"].fillna(False).to_numpy(dtype=bool)
    settled = np.zeros(len(chosen), dtype=bool)
    if ResultColumn.N_BOUNDED_SV in chosen:  # no alpha at its bound: every larger C fits the same (a hard margin)
        settled = at_largest & (pd.to_numeric(chosen[ResultColumn.N_BOUNDED_SV]) == 0).to_numpy(dtype=bool)
        high &= ~settled
    edge = [Edge.LOW if is_low else Edge.HIGH if is_high else None for is_low, is_high in zip(low, high)]
    return edge, flat, settled


def grid_position(values: pd.Series, C: float, maximise: bool) -> tuple[Edge | None, bool]:
    """(at_edge, flat) of C on one grid: `values` the estimates (finite) indexed by the grid's C,
    larger better when `maximise` (`grid_edges`); (None, False) on a grid of fewer than two C."""
    grid = dict.fromkeys(GRID, 0)  # one grid
    estimates = pd.DataFrame({ResultColumn.C: values.index.to_numpy(dtype=float), _VALUE: values.to_numpy()})
    chosen = pd.DataFrame({ResultColumn.C: [C]})
    at_edge, flat, _ = grid_edges(chosen.assign(**grid), estimates.assign(**grid), _VALUE, maximise)
    return at_edge[0], bool(flat[0])
