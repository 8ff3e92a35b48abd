"""Where a C ladder (`svm.C = "auto"`, `XiAlphaSearchCV` without C) grows next: one C beyond a choice
at its C grid's edge, round by round, until the choice is interior.

A choice at the "high" edge of its C grid (`xialpha.selection.edges`: the estimate does not get worse
towards the edge, and is not flat) may be bettered by a larger C: the grid gets its largest C x
factor; at the "low" edge, its smallest C / factor. The ladder stops (`Step.C` None, `Step.why` says
why) when the choice is interior (INTERIOR), the estimate flat (FLAT: more documents are needed, not
more C), the solution has stopped changing at that edge (SETTLED: the edge's fit has no bounded
support vector left, at the high edge, or it and its neighbour have the same support vectors, bounded
ones and estimate: another C beyond would fit the same), or the grid has `limit` C values (CAP: the
choice stays at the edge, and select says so).

Sweeps (`xialpha.jobs.auto`) and `XiAlphaSearchCV` both take their next C from `next_step`, round by
round in one loop, `xialpha.selection.c_rounds.grow_ladders`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from xialpha.selection.edges import GRID, Edge, EdgeColumn, with_grid_edges
from xialpha.selection.options import SelectionOptions
from xialpha.selection.selected import Selection
from xialpha.selection.selector import at_rho, default_estimator, select
from xialpha.selection.smoothing import VALUE_DECIMALS
from xialpha.storage.schema import ResultColumn

INTERIOR, FLAT, SETTLED, CAP = "interior", "flat", "settled", "at the cap"  # why a ladder stopped
RANKED = "ranked"  # a ladder's grid's column: the estimate it is ranked by, larger better


@dataclass(frozen=True)
class Step:
    """A ladder's next step: the C to fit next and the edge it extends (an Edge), or C None
    and why the ladder stopped (INTERIOR, FLAT, SETTLED or CAP)."""

    C: float | None
    why: str


def extension_C(grid_C: list[float], at_edge: Edge | None, flat: bool, limit: int, factor: float) -> float | None:
    """The C to add to a C grid (its values `grid_C`) whose choice lies at `at_edge` (an Edge
    or None) and is `flat` or not (`with_grid_edges`); None when it is not at an edge, flat, or the
    grid already has `limit` C values."""
    if at_edge is None or flat or len(grid_C) >= limit:
        return None
    return max(grid_C) * factor if at_edge == Edge.HIGH else min(grid_C) / factor


def next_step(grid: pd.DataFrame, at_edge: Edge | None, flat: bool, limit: int, factor: float) -> Step:
    """The next step of a ladder whose fits are `grid` (one row per C: columns C, RANKED (the
    estimate ranked by, larger better), n_sv and n_bounded_sv) and whose choice lies at `at_edge`
    (an Edge or None; `flat`: the estimate is the same at every C)."""
    if flat:
        return Step(None, FLAT)
    if at_edge is None:
        return Step(None, INTERIOR)
    if _settled(grid.sort_values(ResultColumn.C), at_edge):
        return Step(None, SETTLED)
    C = extension_C(list(grid[ResultColumn.C]), at_edge, flat, limit, factor)
    return Step(None, CAP) if C is None else Step(C, at_edge)


def _settled(grid: pd.DataFrame, at_edge: Edge) -> bool:
    """Whether the solution stopped changing towards `at_edge` of `grid` (ascending in C)."""
    edge, neighbour = (grid.iloc[-1], grid.iloc[-2]) if at_edge == Edge.HIGH else (grid.iloc[0], grid.iloc[1])
    if at_edge == Edge.HIGH and edge[ResultColumn.N_BOUNDED_SV] == 0:
        return True  # a hard margin: no larger C changes it
    same_value = round(float(edge[RANKED]), VALUE_DECIMALS) == round(float(neighbour[RANKED]), VALUE_DECIMALS)
    return bool(
        same_value
        and edge[ResultColumn.N_SV] == neighbour[ResultColumn.N_SV]
        and edge[ResultColumn.N_BOUNDED_SV] == neighbour[ResultColumn.N_BOUNDED_SV]
    )


def ladder_steps(selection: Selection, results: pd.DataFrame, limit: int, factor: float) -> dict[tuple, Step]:
    """{(category, preprocessing_id, kernel_id, j): its next Step} for the C grid of each choice of
    `selection` (one per category) in `results` (the sweep's rows)."""
    if selection.rows.empty:
        return {}
    objective = selection.objective
    rows = at_rho(results, objective.rho)
    sign = 1.0 if objective.maximise else -1.0
    rows = rows.assign(**{RANKED: sign * objective.row_values(rows)}).dropna(subset=[RANKED])
    grids = {
        key: group.groupby(ResultColumn.C, as_index=False)[
            [RANKED, ResultColumn.N_SV, ResultColumn.N_BOUNDED_SV]
        ].mean()
        for key, group in rows.groupby(list(GRID), sort=False, dropna=False)
    }
    steps = {}
    for _, row in with_grid_edges(selection, results).iterrows():
        key = tuple(row[c] for c in GRID)
        grid = grids.get(key)
        if grid is not None and len(grid) >= 2:
            # with_grid_edges does not call a hard margin at the largest C an edge; for the ladder it
            # is the high edge, settled (every larger C fits the same)
            hard_margin = row[ResultColumn.C] == grid[ResultColumn.C].max() and row[ResultColumn.N_BOUNDED_SV] == 0
            flat = bool(row[EdgeColumn.FLAT])
            at_edge = Edge.HIGH if hard_margin and not flat else row[EdgeColumn.AT_EDGE]
            steps[key] = next_step(grid, at_edge, flat, limit, factor)
    return steps


def extensions(selection: Selection, results: pd.DataFrame, limit: int, factor: float) -> dict[tuple, float]:
    """{(category, preprocessing_id, kernel_id, j): the C to fit next} for each choice of `selection`
    whose ladder goes on (`ladder_steps`)."""
    return {key: step.C for key, step in ladder_steps(selection, results, limit, factor).items() if step.C is not None}


def auto_steps(results: pd.DataFrame, sweep_id: str, limit: int, factor: float) -> dict[tuple, Step]:
    """The next Step of each category's chosen C path of an auto sweep (`ladder_steps`): the default
    selection (what `xialpha select` with no option chooses) of `results`, the sweep's stored rows."""
    objective = SelectionOptions().objective(default_estimator(results))
    selection = select(results, objective, sweep_id=sweep_id, runners_up=0)
    return ladder_steps(selection, results, limit, factor)
