"""Estimates beside held-out values: how honest each estimator is, and what each would choose.

A point is one result row (category x configuration) at one rho: the estimator's metric from the
training set (x) and the metric on the held-out split the sweep scored (y). Points on the
diagonal are honest; below it the estimate was optimistic (for F1; for error, above it). Only
estimators that do not count on the held-out split themselves are compared, and only where both
values exist.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xialpha.estimators import registry
from xialpha.reports.columns import ReportColumn
from xialpha.reports.labels import ConfigLabels
from xialpha.selection.objective import Objective, estimator_counts, metric_values
from xialpha.selection.ranking import PLACE, ROW, VALUE, best_first, result_candidates
from xialpha.selection.selector import at_rho
from xialpha.storage.schema import ResultColumn

# compared with held-out values, in the order shown: all but those counting on the held-out split
ESTIMATORS = tuple(registry.by_preference(e.name for e in registry.ESTIMATORS if e.needs != registry.HELD_OUT))


def estimators_with_estimates(results: pd.DataFrame, rho: float) -> list[str]:
    """The ESTIMATORS with at least one estimate among the rows at `rho`."""
    rows = at_rho(results, rho)
    return [name for name in ESTIMATORS if estimator_counts(rows, name)["d_pos"].notna().any()]


def calibration_points(results: pd.DataFrame, metric: str, rho: float) -> pd.DataFrame:
    """Columns estimator, category, config_key, estimate, held_out (fractions): one row per
    estimator x result row at `rho` having both; empty when the sweep scored no held-out split."""
    rows = at_rho(results, rho)
    held_out = metric_values(estimator_counts(rows, "holdout"), metric)
    frames = []
    for name in estimators_with_estimates(results, rho):
        estimate = metric_values(estimator_counts(rows, name), metric)
        frame = pd.DataFrame(
            {
                ReportColumn.ESTIMATOR: name,
                ResultColumn.CATEGORY: rows[ResultColumn.CATEGORY].to_numpy(),
                ResultColumn.CONFIG_KEY: rows[ResultColumn.CONFIG_KEY].to_numpy(),
                ReportColumn.ESTIMATE: estimate,
                ReportColumn.HELD_OUT: held_out,
            }
        )
        frames.append(frame.dropna(subset=[ReportColumn.ESTIMATE, ReportColumn.HELD_OUT]))
    columns = [
        ReportColumn.ESTIMATOR,
        ResultColumn.CATEGORY,
        ResultColumn.CONFIG_KEY,
        ReportColumn.ESTIMATE,
        ReportColumn.HELD_OUT,
    ]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def calibration_summary(points: pd.DataFrame) -> pd.DataFrame:
    """Per estimator (ESTIMATORS order): points, mean_difference (estimate - held-out, mean over
    points), mean_abs_difference and above (fraction of points whose estimate exceeds held-out)."""
    out = []
    for name, group in points.groupby(ReportColumn.ESTIMATOR, sort=False):
        difference = group[ReportColumn.ESTIMATE] - group[ReportColumn.HELD_OUT]
        out.append(
            {
                ReportColumn.ESTIMATOR: name,
                "points": len(group),
                "mean_difference": float(difference.mean()),
                "mean_abs_difference": float(difference.abs().mean()),
                "above": float((difference > 0).mean()),
            }
        )
    return pd.DataFrame(
        out, columns=[ReportColumn.ESTIMATOR, "points", "mean_difference", "mean_abs_difference", "above"]
    )


def estimator_choices(results: pd.DataFrame, metric: str, rho: float, labels: ConfigLabels) -> pd.DataFrame:
    """What each estimator would choose per category, and how it fared on held-out data.

    Columns category, estimator, label (the chosen configuration's), estimate, held_out (NaN
    without a held-out split), best_held_out (the category's best held-out value over all its
    configurations at `rho`); per category, estimators in ESTIMATORS order. Ranked as `xialpha
    select` ranks (`xialpha.selection.ranking.rank`).
    """
    rows = at_rho(results, rho)
    named = rows[ResultColumn.CATEGORY].notna()
    rows = rows if named.all() else rows[named]  # as a group-by over categories leaves such rows out
    maximise = Objective(metric=metric).maximise
    held = pd.Series(metric_values(estimator_counts(rows, "holdout"), metric), index=rows.index)
    held = held.where(np.isfinite(held)).groupby(rows[ResultColumn.CATEGORY])
    best_held = held.max() if maximise else held.min()  # NaN where no value is finite
    columns = [
        ResultColumn.CATEGORY,
        ReportColumn.ESTIMATOR,
        ReportColumn.LABEL,
        ReportColumn.ESTIMATE,
        ReportColumn.HELD_OUT,
        ReportColumn.BEST_HELD_OUT,
    ]
    parts = []
    for name in estimators_with_estimates(results, rho):
        objective = Objective(metric=metric, estimator=name, rho=rho)
        ranked = best_first(result_candidates(rows, objective), objective, (ResultColumn.CATEGORY,))
        best = ranked[ranked[PLACE] == 0]  # each category's first
        chosen = rows.iloc[best[ROW].to_numpy()].assign(**{VALUE: best[VALUE].to_numpy()})
        parts.append(
            pd.DataFrame(
                {
                    ResultColumn.CATEGORY: chosen[ResultColumn.CATEGORY].to_numpy(),
                    ReportColumn.ESTIMATOR: name,
                    ReportColumn.LABEL: labels.column(chosen),
                    ReportColumn.ESTIMATE: chosen[VALUE].to_numpy(dtype=float),
                    ReportColumn.HELD_OUT: metric_values(estimator_counts(chosen, "holdout"), metric),
                    ReportColumn.BEST_HELD_OUT: chosen[ResultColumn.CATEGORY].map(best_held).to_numpy(dtype=float),
                },
                columns=columns,
            )
        )
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame([], columns=columns)
    order = {name: i for i, name in enumerate(ESTIMATORS)}
    return frame.sort_values(
        [ResultColumn.CATEGORY, ReportColumn.ESTIMATOR],
        key=lambda s: s.map(order) if s.name == ReportColumn.ESTIMATOR else s,
        kind="mergesort",
    ).reset_index(drop=True)
