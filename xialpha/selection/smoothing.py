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
    return smoothed_bounds_over_c(groups, C, values, values, maximise)[0]


def smoothed_bounds_over_c(
    groups: Iterable[object], C: npt.ArrayLike, best: npt.ArrayLike, worst: npt.ArrayLike, maximise: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst), each (m,): the range of `smoothed_over_c`'s value of each row when each row's value
    is only known to lie between best and worst (equal where it is known: then both are
    `smoothed_over_c`'s value). Arguments as `smoothed_over_c`'s; best (m,) the best value a row may
    have (the largest when `maximise`), worst (m,) the other end, NaN (both) where not estimated.

    A row's average is bounded by the averages of its neighbourhood's ends. Its plateau is at most
    the adjacent points whose ranges overlap pairwise (best: the best average among them), at least
    the adjacent points of one known value (worst: the best worst-average among them).
    """
    best, worst = np.asarray(best, dtype=float), np.asarray(worst, dtype=float)
    C = np.asarray(C, dtype=float)
    if best.size == 0:
        return best.copy(), worst.copy()
    group = pd.factorize(pd.Series(list(groups), dtype=object))[0]
    order = np.lexsort((C, group))  # rows by group, then C
    group_sorted, C_sorted = group[order], C[order]
    new_point = np.r_[True, (group_sorted[1:] != group_sorted[:-1]) | (C_sorted[1:] != C_sorted[:-1])]
    point_of_sorted = np.cumsum(new_point) - 1
    at = np.empty(best.size, dtype=np.intp)
    at[order] = point_of_sorted  # each row's grid point (one per group and C)
    point_best = pd.Series(best).groupby(at).mean().to_numpy()  # NaN where no row of the point is estimated
    point_worst = pd.Series(worst).groupby(at).mean().to_numpy()
    point_group = group_sorted[new_point]
    same_as_previous = np.r_[False, point_group[1:] == point_group[:-1]]  # the point before is of the same group
    selected_best, selected_worst, _ = point_bounds(point_best, point_worst, same_as_previous, maximise)
    return (
        np.where(np.isnan(best), np.nan, selected_best[at]),
        np.where(np.isnan(worst), np.nan, selected_worst[at]),
    )


def point_bounds(
    best: np.ndarray, worst: np.ndarray, same_as_previous: np.ndarray, maximise: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(best, worst, plateau), each (points,): the smoothed values' range at grid points ordered by
    group, then C (`same_as_previous`: the point before is of the same group) whose values lie
    between `best` and `worst` (NaN: not estimated), and each point's widest possible plateau (a
    label shared by the adjacent points of pairwise overlapping ranges)."""
    estimated = np.isfinite(best).astype(float)
    group_of_point = np.cumsum(~same_as_previous) - 1
    too_few = np.bincount(group_of_point, weights=estimated)[group_of_point] < SMOOTHED_MIN_POINTS
    with np.errstate(invalid="ignore", divide="ignore"):
        best_average = np.where(too_few, best, _neighbour_means(best, same_as_previous))
        worst_average = np.where(too_few, worst, _neighbour_means(worst, same_as_previous))
    rounded_best, rounded_worst = np.round(best, VALUE_DECIMALS), np.round(worst, VALUE_DECIMALS)
    low, high = np.fmin(rounded_best, rounded_worst), np.fmax(rounded_best, rounded_worst)
    known = rounded_best == rounded_worst  # NaN never equals: it ends a run
    same_run = same_as_previous[1:] & known[1:] & known[:-1] & (rounded_best[1:] == rounded_best[:-1])
    may_share = same_as_previous[1:] & (low[1:] <= high[:-1]) & (low[:-1] <= high[1:])
    plateau = np.cumsum(np.r_[True, ~may_share]) - 1
    selected_best = _plateaus_shared(best, best_average, maximise, plateau)
    selected_worst = _plateaus_shared(worst, worst_average, maximise, np.cumsum(np.r_[True, ~same_run]) - 1)
    return selected_best, selected_worst, plateau


def _neighbour_means(point: np.ndarray, same_as_previous: np.ndarray) -> np.ndarray:
    """(points,) the mean of each point's value and its group neighbours' (NaN ones left out)."""
    total = np.nan_to_num(point)
    count = np.isfinite(point).astype(float)
    near_total, near_count = total.copy(), count.copy()
    near_total[1:] += np.where(same_as_previous[1:], total[:-1], 0.0)
    near_count[1:] += np.where(same_as_previous[1:], count[:-1], 0.0)
    near_total[:-1] += np.where(same_as_previous[1:], total[1:], 0.0)
    near_count[:-1] += np.where(same_as_previous[1:], count[1:], 0.0)
    return near_total / near_count


def _plateaus_shared(point: np.ndarray, averaged: np.ndarray, maximise: bool, run: np.ndarray) -> np.ndarray:
    """`averaged` (one value per grid point) with each `run` (a label per point: the adjacent points of
    one plateau) of finite `point` values given the run's best average."""
    means = pd.Series(averaged).groupby(run).transform("max" if maximise else "min").to_numpy()
    return np.where(np.isfinite(point), means, averaged)
