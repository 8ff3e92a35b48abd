"""Where a C ladder (`svm.C = "auto"`) grows next: one C beyond a choice at its C grid's edge.

A choice at the "high" edge of its C grid (`xialpha.selection.edges`: the estimate does not get worse
towards the edge, and is not flat) may be bettered by a larger C: the grid gets its largest C x
factor; at the "low" edge, its smallest C / factor. A grid of `limit` C values grows no more.
"""

from __future__ import annotations

import pandas as pd

from xialpha.selection.edges import EDGES, GRID, with_grid_edges
from xialpha.storage.schema import ResultColumn


def extension_C(grid_C: list[float], at_edge: str | None, flat: bool, limit: int, factor: float) -> float | None:
    """The C to add to a C grid (its values `grid_C`) whose choice lies at `at_edge` ("low", "high"
    or None) and is `flat` or not (`with_grid_edges`); None when it is not at an edge, flat, or the
    grid already has `limit` C values."""
    if at_edge is None or flat or len(grid_C) >= limit:
        return None
    return max(grid_C) * factor if at_edge == EDGES[1] else min(grid_C) / factor


def extensions(selection: pd.DataFrame, results: pd.DataFrame, limit: int, factor: float) -> dict[tuple, float]:
    """{(category, preprocessing_id, kernel_id, j): the C to fit next} for each choice of `selection`
    (selection rows, one per category) at an edge of its C grid in `results` (the sweep's rows)."""
    grids = {
        key: sorted(set(group[ResultColumn.C])) for key, group in results.groupby(list(GRID), sort=False, dropna=False)
    }
    out = {}
    for _, row in with_grid_edges(selection, results).iterrows():
        key = tuple(row[c] for c in GRID)
        C = extension_C(grids.get(key, []), row["at_edge"], bool(row["flat"]), limit, factor)
        if C is not None:
            out[key] = C
    return out
