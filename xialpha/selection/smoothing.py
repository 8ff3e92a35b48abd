"""Averaging an estimate with its neighbours on the C grid: what selections rank by.

An estimate of a configuration's effectiveness (span, xi-alpha, cross-validation) is noisy, while
the true effectiveness changes little from one C to the next: the configurations along C share
most of their solution. Averaging each value with those of the next smaller and next larger C of
the same configuration otherwise (same category, preprocessing, kernel, j) ranks by a smoother
curve. What bench/selection_quality.py measured of it on fresh splits is in docs/concepts.md ("Which
estimator to select by").

Adjacent C with equal values (to VALUE_DECIMALS) form a plateau, and its points share one
average, the best of theirs: a plateau ranks as its best point would, and among its points the
ranking's tie rule decides (`xialpha.selection.ranking.SIMPLER`). Without this, a plateau reaching the grid's edge
went to its edge point, which
has one neighbour only and so is not averaged with the lower values beside the plateau: on the
demo, span's F1 equal at C = 3 and C = 10 chose 10.

A group with fewer than SMOOTHED_MIN_POINTS estimated grid points is not averaged: on a grid of two
C both points' averages are the same mean, so every such choice was a tie that went to the smaller
C whatever the estimates said. Grids of three or more C are ranked exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
import pandas as pd

VALUE_DECIMALS = 12  # values equal to this many decimals are equal (a plateau here, a tie in a ranking)
SMOOTHED_MIN_POINTS = 3  # fewer estimated C in a group: its values are ranked as they are


def smoothed_over_c(
    groups: Iterable[object], C: npt.ArrayLike, values: npt.ArrayLike, maximise: bool = True
) -> np.ndarray:
    """(m,) each value averaged with the values at the next smaller and next larger C of its group.

    groups: (m,) hashable labels (configurations that differ only in C share one); C: (m,) floats;
    values: (m,) floats, NaN where not estimated. A NaN neighbour is left out of the mean; a NaN
    value stays NaN (it is not a candidate). Equal C within a group count as one grid point;
    adjacent grid points of equal value (a plateau) share the best of their averages (the
    largest when `maximise`, else the smallest). A group with fewer than SMOOTHED_MIN_POINTS
    estimated grid points keeps its values.
    """
    values = np.asarray(values, dtype=float)
    C = np.asarray(C, dtype=float)
    out = values.copy()
    if values.size == 0:
        return out
    group = pd.factorize(pd.Series(list(groups), dtype=object))[0]
    order = np.lexsort((C, group))  # rows by group, then C
    group_sorted, C_sorted = group[order], C[order]
    new_point = np.r_[True, (group_sorted[1:] != group_sorted[:-1]) | (C_sorted[1:] != C_sorted[:-1])]
    point_of_sorted = np.cumsum(new_point) - 1
    at = np.empty(values.size, dtype=np.intp)
    at[order] = point_of_sorted  # each row's grid point (one per group and C)
    point = pd.Series(values).groupby(at).mean().to_numpy()  # NaN where no row of the point is estimated
    point_group = group_sorted[new_point]
    same_as_previous = np.r_[False, point_group[1:] == point_group[:-1]]  # the point before is of the same group
    total = np.nan_to_num(point)
    count = np.isfinite(point).astype(float)
    near_total, near_count = total.copy(), count.copy()
    near_total[1:] += np.where(same_as_previous[1:], total[:-1], 0.0)
    near_count[1:] += np.where(same_as_previous[1:], count[:-1], 0.0)
    near_total[:-1] += np.where(same_as_previous[1:], total[1:], 0.0)
    near_count[:-1] += np.where(same_as_previous[1:], count[1:], 0.0)
    estimated_points = np.bincount(np.cumsum(~same_as_previous) - 1, weights=count)  # per group
    too_few = estimated_points[np.cumsum(~same_as_previous) - 1] < SMOOTHED_MIN_POINTS
    with np.errstate(invalid="ignore", divide="ignore"):
        averaged = np.where(too_few, point, near_total / near_count)
        averaged = _plateaus_shared(point, averaged, maximise, same_as_previous)
    return np.where(np.isnan(values), np.nan, averaged[at])


def _plateaus_shared(
    point: np.ndarray, averaged: np.ndarray, maximise: bool, same_as_previous: np.ndarray
) -> np.ndarray:
    """`averaged` (one value per grid point, by group then C) with each run of adjacent points of
    one group (`same_as_previous`: the point before is of the same group) whose `point` values are
    equal and finite (to VALUE_DECIMALS) given the run's best average."""
    rounded = np.round(point, VALUE_DECIMALS)
    starts = np.r_[True, ~(rounded[1:] == rounded[:-1]) | ~same_as_previous[1:]]  # NaN never equals: it ends a run
    run = np.cumsum(starts) - 1
    means = pd.Series(averaged).groupby(run).transform("max" if maximise else "min").to_numpy()
    return np.where(np.isfinite(point), means, averaged)
