"""Which configurations of one C path a selection may need an exact estimate of (issue 47).

A fit task that knows only a range of a configuration's estimate (its span counts bounded by the calls
made cheaply: `xialpha.estimators.span.SpanBounds`) makes the exact calls only where a selection may
read them. A per-category selection reads exactly the first `places` (the choice and its runners-up)
of its category, ranked by value or by value smoothed over C (`xialpha.selection.smoothing`), and
their per-example vectors for the significance tests. A point of a C path (one category's curve over C)
is outside its category's first `places` whatever the other paths hold when `places` points of its own
curve are certainly ranked better (their worst selection value beats its best). Every other point is a
contender: it is computed exactly, and so is everything its smoothed value reads (its neighbours, and
the neighbours of every point its plateau may reach), until each contender's selection value is known.

`needed` answers for the metrics [estimators] span_prune names (`protected`), smoothed and not, so
that `xialpha select` by any of them, per category and with at most RUNNERS_UP runners-up, chooses as
the full computation does; every selection checks the stored ranges (`xialpha.selection.selector`)
and refuses, naming span_prune, when one could change its choice.

Measured on Reuters (config/reuters.toml, 160 C path points, bench/span_prune.py): the cheap calls leave
the span counts of the larger C wide (F1 0.80 to 1.00 for acq at C = 10), the points where span's exact
calls cost most, so few points can be left bounded: see bench/results/span_prune.json.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xialpha.selection.objective import MAXIMISED, metric_range
from xialpha.selection.smoothing import VALUE_DECIMALS, point_bounds
from xialpha.storage.schema import ResultColumn

# The metrics a pruned C path can keep every choice of: every metric but cost (which at equal costs
# ranks as error does).
PROTECTED_METRICS = tuple(metric for metric in MAXIMISED if metric != "cost")


def protected(span_prune: str) -> tuple[str, ...]:
    """The metrics whose choices [estimators] span_prune keeps: none ("off"), all ("any") or the one it names."""
    return () if span_prune == "off" else PROTECTED_METRICS if span_prune == "any" else (span_prune,)


def needed(n: int, n_pos: int, low: np.ndarray, high: np.ndarray, places: int, metrics: tuple[str, ...]) -> np.ndarray:
    """(points,) bool: the points of one C path (ascending C) a selection may read exactly.

    n, n_pos: the examples and positives the counts are over; low, high: (points, 2) each point's
    fewest and most (d_pos, d_neg) (equal where exact); places: the choice and its runners-up;
    metrics: those the choices are kept for.
    """
    points = low.shape[0]
    low_counts, high_counts = (_counts(n, n_pos, counts) for counts in (low, high))
    along = np.r_[False, np.ones(points - 1, dtype=bool)]  # one curve: each point follows the one before
    wanted = np.zeros(points, dtype=bool)
    for metric in metrics:
        best, worst = metric_range(low_counts, high_counts, metric)
        for smooth in (False, True):
            plateau = np.arange(points)
            if smooth:
                best_selected, worst_selected, plateau = point_bounds(best, worst, along, MAXIMISED[metric])
            else:
                best_selected, worst_selected = best, worst
            sign = 1.0 if MAXIMISED[metric] else -1.0  # larger is better below
            best_key = np.round(sign * best_selected, VALUE_DECIMALS)
            worst_key = np.round(sign * worst_selected, VALUE_DECIMALS)
            beaten_by = (worst_key[None, :] > best_key[:, None]).sum(axis=1)
            contender = ~(beaten_by >= places)
            wanted |= contender
            if not smooth:
                continue
            for point in np.flatnonzero(contender & (best_key != worst_key)):
                reach = np.flatnonzero(plateau == plateau[point])
                wanted[max(reach[0] - 1, 0) : reach[-1] + 2] = True
    return wanted


def _counts(n: int, n_pos: int, counts: np.ndarray) -> pd.DataFrame:
    """The count columns `metric_range` reads, one row per point."""
    return pd.DataFrame(
        {
            ResultColumn.N: float(n),
            ResultColumn.N_POS: float(n_pos),
            "d_pos": counts[:, 0].astype(float),
            "d_neg": counts[:, 1].astype(float),
        }
    )
