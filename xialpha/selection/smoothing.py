"""Averaging an estimate with its neighbours on the C grid: what selections rank by.

An estimate of a configuration's effectiveness (span, xi-alpha, cross-validation) is noisy, while
the true effectiveness changes little from one C to the next: the configurations along C share
most of their solution. Averaging each value with those of the next smaller and next larger C of
the same configuration otherwise (same category, preprocessing, kernel, j) ranks by a smoother
curve. What bench/selection_quality.py measured of it on fresh splits is in docs/concepts.md ("Which
estimator to select by").
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def smoothed_over_c(groups, C, values) -> np.ndarray:
    """(m,) each value averaged with the values at the next smaller and next larger C of its group.

    groups: (m,) hashable labels (configurations that differ only in C share one); C: (m,) floats;
    values: (m,) floats, NaN where not estimated. A NaN neighbour is left out of the mean; a NaN
    value stays NaN (it is not a candidate). Equal C within a group count as one grid point.
    """
    values = np.asarray(values, dtype=float)
    frame = pd.DataFrame({"group": pd.Series(list(groups), dtype=object), "C": np.asarray(C, dtype=float),
                          "value": values})
    out = values.copy()
    for _, part in frame.groupby("group", sort=False, dropna=False):
        grid = np.unique(part["C"].to_numpy())
        at = np.searchsorted(grid, part["C"].to_numpy())
        point = pd.Series(part["value"].to_numpy()).groupby(at).mean().reindex(range(grid.size)).to_numpy()
        total = np.nan_to_num(point)
        count = np.isfinite(point).astype(float)
        near_total = total.copy()
        near_count = count.copy()
        near_total[1:] += total[:-1]
        near_count[1:] += count[:-1]
        near_total[:-1] += total[1:]
        near_count[:-1] += count[1:]
        smoothed = near_total[at] / near_count[at]
        index = part.index.to_numpy()
        out[index] = np.where(np.isnan(values[index]), np.nan, smoothed)
    return out
